"""Layer boundaries and the stated public API."""

import ast
from pathlib import Path

import giok

SRC = Path(giok.__file__).parent
EDGES = {"cli", "mcp"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: from .x import y / from . import x
                found.add(module.split(".")[0] if module else "")
                found.update(a.name for a in node.names if not module)
            else:
                found.add(module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_library_modules_never_import_the_edges():
    for path in SRC.rglob("*.py"):
        if "edges" in path.parts or path.stem in EDGES or path.stem in ("__main__",):
            continue
        imported = _imports(path)
        assert not ({"cli", "giok.edges.cli"} & imported), f"{path.name} imports the CLI"
        if path.stem != "mcp":
            assert not ({"mcp", "giok.edges.mcp"} & imported), f"{path.name} imports the MCP server or SDK"


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
