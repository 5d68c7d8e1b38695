"""The structure docs/architecture.md states, beyond the layer order (tests/test_architecture.py):

- no two modules import each other, at module level, inside a function or for annotations only
  (what both need lives below both, or in a small module of its own);
- no module imports another module's private name (`from giok.x import _name`): what another
  module needs has a public name;
- the index backends meet through a named protocol, not by forwarding attributes;
- the public facade's methods are plain methods whose signatures are the feature's own.

Every module is parsed once (under a second of CPU); nothing here runs giok's code.
"""

from __future__ import annotations

import ast
import inspect
import typing
from functools import cache
from pathlib import Path

import giok

SRC = Path(giok.__file__).parent


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports(module: str, path: Path) -> list[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) of every giok import in the file, wherever
    it stands (module level, a function, an `if TYPE_CHECKING:` block)."""
    modules = _modules()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, node.module] if node.module else parts)
            if base.split(".")[0] != "giok":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                # `from giok.retrieval import pg` imports a module; `from giok.x import y`, a name
                found.append((node.lineno, sub, None) if sub in modules else (node.lineno, base, alias.name))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "giok"]
    return found


@cache
def _every_import() -> dict[str, list[tuple[int, str, str | None]]]:
    """Each module's imports, every file parsed once."""
    return {m: _imports(m, p) for m, p in _modules().items()}


def _graph() -> dict[str, set[str]]:
    return {m: {target for _, target, _ in found if target != m} for m, found in _every_import().items()}


def test_no_two_modules_import_each_other():
    graph = _graph()
    loops = sorted(
        {tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph.get(b, ())}
    )
    assert not loops, "modules that import each other:\n" + "\n".join(f"{a} <-> {b}" for a, b in loops)


def test_no_module_imports_another_modules_private_name():
    found = [
        f"{_modules()[module].relative_to(SRC.parent)}:{line} imports {name} from {target}"
        for module, imports in _every_import().items()
        for line, target, name in imports
        if name is not None and name.startswith("_") and not name.startswith("__") and target != module
    ]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_checks_see_function_level_and_type_only_imports(tmp_path, monkeypatch):
    """The parser itself: an import inside a function or under TYPE_CHECKING counts, and a
    private name is told from a submodule."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from giok.retrieval.index import Index\n"
        "def f():\n    from giok.retrieval import pg\n    from giok.store.workspace import _secret\n",
        "utf-8",
    )
    found = _imports("giok.retrieval.probe", probe)
    assert (3, "giok.retrieval.index", "Index") in found
    assert (5, "giok.retrieval.pg", None) in found
    assert (6, "giok.store.workspace", "_secret") in found


def test_both_index_backends_are_a_search_index_without_forwarding():
    """Every call the protocol names is a method or property each class defines (mypy checks
    the signatures); nothing is handed on by `__getattr__`."""
    from giok.retrieval.backend import LocalIndex, SearchIndex
    from giok.retrieval.index import Index
    from giok.retrieval.pg import PgIndex

    assert LocalIndex in Index.__mro__  # subclassed, not only alike (protocols refuse issubclass)
    assert SearchIndex in PgIndex.__mro__
    assert "__getattr__" not in vars(PgIndex)
    for cls, protocol in ((Index, LocalIndex), (PgIndex, SearchIndex)):
        members = {n for c in protocol.__mro__ if c is not object for n, v in vars(c).items() if callable(v)}
        members -= {n for n in members if n.startswith("_")}
        for name in members:
            owner = next(c for c in cls.__mro__ if name in vars(c))
            assert owner is cls, f"{cls.__name__}.{name} is the protocol's stub ({owner.__qualname__})"


def test_the_facade_methods_have_the_features_own_signatures():
    from giok.write import remember as remembering

    for name in ("remember", "edit_entry", "move_entry"):
        method = inspect.signature(getattr(giok.Workspace, name))
        function = inspect.signature(getattr(remembering, name))
        assert list(method.parameters.values())[1:] == list(function.parameters.values())[1:], name
        assert method.return_annotation == function.return_annotation, name
        assert vars(giok.Workspace)[name].__module__ == "giok.workspace", name  # a plain method


def test_search_options_name_every_option():
    from giok.retrieval.search import Options, SearchOptions

    assert set(typing.get_type_hints(SearchOptions)) == set(Options.__dataclass_fields__) - {"k"}


def test_memory_md_is_spelled_in_the_layout_only():
    """giok's MEMORY.md is `giok.store.layout.MEMORY`; the importers name another tool's file of
    the same name once, as theirs (TOOL_MEMORY)."""
    spelled = {m for m, p in _modules().items() if '"MEMORY.md"' in p.read_text("utf-8")}
    assert spelled == {"giok.store.layout", "giok.edges.importers"}
    assert (SRC / "edges" / "importers.py").read_text("utf-8").count('"MEMORY.md"') == 1
