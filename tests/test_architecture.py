"""Layer boundaries and the stated public API (docs/architecture.md).

Every module of giok belongs to one layer; it may import its own layer and the layers below,
never one above — at module level or inside a function. The order, lowest first:

    errors, settings, locations < text < store < providers < write < retrieval < lifecycle < api
    < edges < main

`api` is the library's public face, above every feature it gathers: `giok/__init__.py` and the
facade `giok/workspace.py`. The edges (CLI, MCP, memory tool, hooks) call it; `__main__` runs
the CLI.
"""

import ast
from pathlib import Path

import giok

SRC = Path(giok.__file__).parent
LAYERS = ("base", "text", "store", "providers", "write", "retrieval", "lifecycle", "api", "edges", "main")
BASE = {"errors", "settings", "locations"}  # modules at the package root, below everything
API = {"__init__", "workspace"}


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> str | None:
    """The layer of a giok module name (giok.store.git → store); None outside giok."""
    parts = module.split(".")
    if parts[0] != "giok":
        return None
    if len(parts) == 1:
        return "api"
    head = parts[1]
    if head in BASE:
        return "base"
    if head in API:
        return "api"
    if head == "__main__":
        return "main"
    assert head in LAYERS, f"giok.{head} belongs to no layer: add it to docs/architecture.md and here"
    return head


def _imports(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """(line, module) of every giok import in the file, function-level ones included
    (`package`: the file's package, for relative imports; default: from its place in giok)."""
    tree = ast.parse(path.read_text("utf-8"))
    if package is None:
        package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names = [f"{module}.{a.name}" for a in node.names]
            # `from giok import x`: x may be a layer package or a name giok re-exports
            found += [(node.lineno, n if _is_package(n) else module) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def _is_package(name: str) -> bool:
    parts = name.split(".")
    return (
        SRC.parent.joinpath(*parts).is_dir() or SRC.parent.joinpath(*parts).with_suffix(".py").is_file()
    ) and (len(parts) > 1)


def test_every_module_imports_only_its_own_layer_or_lower():
    broken = []
    for path in sorted(SRC.rglob("*.py")):
        own = _layer(_module(path))
        assert own is not None
        for line, module in _imports(path):
            other = _layer(module) if module.split(".")[0] == "giok" else None
            if other is not None and LAYERS.index(other) > LAYERS.index(own):
                broken.append(f"{path.relative_to(SRC)}:{line} ({own}) imports {module} ({other})")
    assert not broken, "imports against the layer order:\n" + "\n".join(broken)


def test_the_layer_rule_sees_function_level_and_relative_imports(tmp_path):
    """The checker itself: an upward import hidden in a function, or written relative, is found."""
    path = tmp_path / "probe.py"
    path.write_text(
        "def f():\n    from giok.retrieval import search\n    from ..lifecycle import boot\n", "utf-8"
    )
    found = _imports(path, package="giok.store")
    assert (2, "giok.retrieval.search") in found
    assert (3, "giok.lifecycle.boot") in found


def test_library_modules_never_import_the_mcp_sdk():
    """The MCP SDK is an extra: only the edges load it."""
    for path in SRC.rglob("*.py"):
        if _layer(_module(path)) in ("edges", "main"):
            continue
        sdk = [m for _, m in _imports(path) if m == "mcp" or m.startswith("mcp.")]
        assert not sdk, f"{path.relative_to(SRC)} imports the MCP SDK"


def test_cli_does_not_import_mcp_server_at_module_level():
    for path in (SRC / "edges" / "cli").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = {getattr(node, "module", None) or ""} | {a.name for a in node.names}
                assert "mcp" not in names, f"cli/{path.name} imports mcp at import time"
                assert "giok.edges.mcp" not in names, f"cli/{path.name} imports mcp at import time"


def test_public_api_is_stated_and_importable():
    assert "Workspace" in giok.__all__
    assert "MemoryFile" in giok.__all__
    assert "GiokError" in giok.__all__
    for name in giok.__all__:
        assert hasattr(giok, name), name


def test_the_public_workspace_is_the_facade_over_the_store():
    from giok.store.workspace import Workspace as StoreWorkspace

    assert issubclass(giok.Workspace, StoreWorkspace)
    assert giok.Workspace.__module__ == "giok.workspace"
    for method in ("remember", "forget", "search", "recall", "diary", "lesson", "edit_entry"):
        assert not hasattr(StoreWorkspace, method), f"the store-level workspace has {method}"
