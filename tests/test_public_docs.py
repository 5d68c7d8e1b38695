"""The public API documents itself: every name in giok.__all__ has a docstring, every MCP tool
and its arguments a description, every CLI command and option its --help text, and the
exception tree drawn in giok.errors matches the classes."""

from __future__ import annotations

import inspect
import re

import click
import pytest

import giok
from giok import errors
from giok.edges import mcp
from giok.edges.cli import main


def _own_doc(obj: object) -> str:
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return (doc or "").strip()


def _documentable() -> list[str]:
    return [n for n in giok.__all__ if inspect.isclass(getattr(giok, n)) or callable(getattr(giok, n))]


@pytest.mark.parametrize("name", _documentable())
def test_every_public_name_has_its_own_docstring(name):
    assert _own_doc(getattr(giok, name)), f"giok.{name} has no docstring"


def _public_methods(cls: type) -> list[str]:
    out = []
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if inspect.isfunction(fn) and not _own_doc(fn):
            out.append(attr)
    return out


@pytest.mark.parametrize("name", sorted(_documentable()))
def test_public_methods_have_docstrings(name):
    cls = getattr(giok, name)
    if not inspect.isclass(cls):
        pytest.skip("not a class")
    assert _public_methods(cls) == [], f"giok.{name} methods without a docstring"


def test_every_mcp_tool_and_argument_is_described():
    assert mcp.TOOLS
    for tool in mcp.TOOLS.values():
        assert tool.description.strip(), tool.name
        for arg, schema in tool.properties.items():
            assert str(schema.get("description", "")).strip(), f"{tool.name}.{arg}"


def _commands(group: click.Command, path: tuple[str, ...] = ("giok",)):
    yield path, group
    if isinstance(group, click.Group):
        for name, command in group.commands.items():
            yield from _commands(command, (*path, name))


@pytest.mark.parametrize(
    "path,command", list(_commands(main)), ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_every_cli_command_and_option_has_help(path, command):
    assert (command.help or command.short_help or "").strip(), " ".join(path)
    undocumented = [
        p.opts[0] for p in command.params if isinstance(p, click.Option) and not p.hidden and not p.help
    ]
    assert undocumented == [], " ".join(path)


def _drawn_tree() -> dict[str, tuple[str | None, int]]:
    """{class: (parent, exit code)} read from the drawing in giok.errors' docstring."""
    tree: dict[str, tuple[str | None, int]] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        m = re.match(r"^(\s*(?:[│ ]   )*(?:[├└]── )?)(\w+)\s+exit (\d+)", line)
        if not m:
            continue
        depth, name = len(m.group(1)), m.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        tree[name] = (stack[-1][1] if stack else None, int(m.group(3)))
        stack.append((depth, name))
    return tree


def test_the_exception_tree_in_the_docstring_matches_the_classes():
    classes = {
        n: c for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, errors.GiokError)
    }
    drawn = _drawn_tree()
    assert set(drawn) == set(classes)
    for name, cls in classes.items():
        parent = cls.__bases__[0].__name__ if cls is not errors.GiokError else None
        assert drawn[name] == (parent, cls.exit_code), name
        assert _own_doc(cls), f"errors.{name} has no docstring"
