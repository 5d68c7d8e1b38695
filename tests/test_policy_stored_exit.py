"""A long-lived process (the MCP server) does not rewrite .giok/policy-index.json after every
remember — dumping a 5,000-entry index cost ~13 ms a write — but stores it after its first write
and again at its exit, for the next process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from giok.write import remember as remember_mod

WRITER = r"""
import json, sys
from giok import Workspace
from giok.write import remember
ws = Workspace.open(sys.argv[1])
path = ws.layout.derived(remember.INDEX_FILE)
digests = []
for i in range(3):
    ws.remember(f"Server note {i}: the queue worker number {i} restarts nightly", layer=sys.argv[2])
    digests.append(json.loads(path.read_bytes())["digest"])
print(json.dumps(digests))
"""


def _digest(ws) -> str:
    return remember_mod._digest((ws.root / "MEMORY.md").read_bytes())


@pytest.mark.parametrize("layer", ["M30", "M90"])  # M90: the new entry lands before M30's, not last
def test_a_long_lived_process_stores_the_index_after_its_first_write_and_at_exit(ws, layer):
    ws.remember("The staging server moved to the second rack")
    seen = subprocess.run(
        [sys.executable, "-c", WRITER, str(ws.root), layer], capture_output=True, text=True, check=True
    )
    first, second, third = json.loads(seen.stdout)
    assert first == second == third  # stored once while it ran
    stored = json.loads(ws.layout.derived(remember_mod.INDEX_FILE).read_bytes())
    assert stored["digest"] == _digest(ws) != first  # and for its last write when it ended
