"""The environment is read in one place below the entry points: `giok.settings` (docs/architecture.md,
"Settings"). The CLI, the MCP server, the web server and `python -m giok` read it and pass a
`Settings` down; no other module of the library touches `os.environ` or `os.getenv`."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import giok
from giok.settings import Settings

SRC = Path(giok.__file__).parent
READERS = {"settings.py", "__main__.py", "edges/mcp.py", "edges/hookline.py"}  # and the folders below
READER_DIRS = ("edges/cli/", "edges/server/")
# Modules outside this change that still read the environment, each with what it reads; they
# move behind giok.settings next (the list may only shrink: docs/architecture.md).
PENDING = {
    "retrieval/index.py": "GIOK_INDEX_BUSY_TIMEOUT when no workspace settings are given",
}


_NAMES = {"environ", "environb", "getenv"}


def _reads(path: Path) -> list[int]:
    """Lines that use os.environ, os.environb or os.getenv (also imported by name)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ) or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in _NAMES for a in node.names)
        ):
            lines.append(node.lineno)
    return sorted(lines)


def _readers_outside_settings() -> dict[str, list[int]]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in READERS or rel.startswith(READER_DIRS):
            continue
        lines = _reads(path)
        if lines:
            found[rel] = lines
    return found


def test_only_settings_and_the_entry_points_read_the_environment():
    found = _readers_outside_settings()
    stray = {rel: lines for rel, lines in found.items() if rel not in PENDING}
    assert not stray, "read the environment through giok.settings (passed down) instead: " + ", ".join(
        f"{rel}:{lines}" for rel, lines in stray.items()
    )


def test_the_check_sees_a_read(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nfrom os import getenv\nx = os.environ.get('A')\ny = os.getenv('B')\n")
    assert _reads(probe) == [2, 3, 4]


@pytest.mark.parametrize(
    ("env", "field", "value"),
    [
        ({"GIOK_EMBEDDINGS": "fake"}, "embeddings", "fake"),
        ({"GIOK_EMBEDDINGS": ""}, "embeddings", None),
        ({"GIOK_CRONTAB": "sh /tmp/cron.sh"}, "crontab", "sh /tmp/cron.sh"),
        ({}, "crontab", "crontab"),
        ({"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b"}, "git_author", True),
        ({"GIT_AUTHOR_NAME": "a"}, "git_author", False),
        ({"CLAUDE_CONFIG_DIR": "/tmp/claude"}, "claude_config", Path("/tmp/claude")),
        ({"CLAUDE_CONFIG_DIR": ""}, "claude_config", None),
        ({"GIOK_MERGE_THEIRS": "abc123"}, "merge_theirs", "abc123"),
        ({}, "merge_theirs", None),
        ({"GIOK_MERGE_REPORT": "/tmp/r.jsonl"}, "merge_report", Path("/tmp/r.jsonl")),
        ({"GIOK_MERGE_REPORT": ""}, "merge_report", None),
    ],
)
def test_the_settings_read_each_variable(env, field, value):
    assert getattr(Settings.from_env({"GIOK_HOME": os.fspath(Path("/tmp/h")), **env}), field) == value
