"""giok's caches in .giok/ may be written by others: a FIFO or a symlink to /dev/zero planted as
boot's cache or the policy index is not read (it would block boot forever or fill memory); boot
and remember go on as if there were no cache."""

from __future__ import annotations

import os

import pytest

from conftest import run_giok
from giok.lifecycle import boot
from giok.write import remember


@pytest.mark.parametrize("name", [boot.CACHE, remember.INDEX_FILE])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_planted_special_file_is_not_read(ws, name, kind):
    ws.remember("The staging server moved to the second rack", layer="M90")
    path = ws.layout.derived(name)
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    booted = run_giok("-w", str(ws.root), "boot", timeout=30)
    assert booted.returncode == 0, booted.stderr
    assert "second rack" in booted.stdout
    wrote = run_giok("-w", str(ws.root), "remember", "Deploys happen on Tuesdays", timeout=30)
    assert wrote.returncode == 0, wrote.stderr
    assert "Deploys happen on Tuesdays" in (ws.root / "MEMORY.md").read_text(encoding="utf-8")
