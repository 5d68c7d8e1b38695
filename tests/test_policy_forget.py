"""Forget: by id or by match, across files, index and caches; git history on request."""

import json
import subprocess

import pytest

from giok.errors import InvalidInput, NotFound

from conftest import run_giok


def git(ws, *args):
    return subprocess.run(["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True).stdout


def _all_git_bytes(ws) -> str:
    """Every object in the repository, decompressed, plus every commit message."""
    objects = git(ws, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    proc = subprocess.run(["git", "-C", str(ws.root), "cat-file", "--batch"], input=("\n".join(objects) + "\n").encode(),
                          capture_output=True, check=True)
    return proc.stdout.decode("utf-8", errors="replace")


def test_forget_match_covers_memory_diary_and_lessons(ws):
    ws.remember("The vault code is tangerine-42")
    ws.remember("maybe the vault code is tangerine-42 again")          # refused: its text never lands in git
    ws.diary("Told Zeon the vault code is tangerine-42")
    ws.lesson("Vault", "- keep tangerine-42 out of chat")
    keep = ws.remember("The office is in Pangyo").entry
    preview = ws.forget(match="TANGERINE-42", reason="user request", dry_run=True)
    assert "tangerine" not in (ws.root / "state/trace.jsonl").read_text()
    assert preview.action == "unchanged" and len([n for n in preview.notes if n.startswith("would remove")]) == 3
    assert "tangerine-42" in (ws.root / "MEMORY.md").read_text()
    result = ws.forget(match="TANGERINE-42", reason="user request")
    assert result.action == "removed"
    for rel in ("MEMORY.md", "compound/lessons.md", "state/trace.jsonl", ws.diary_path()):
        assert "tangerine" not in (ws.root / rel).read_text(), rel
    assert keep.id in ws.memory().ids()
    assert git(ws, "log", "-1", "--format=%s").startswith("memory: forget --match (3 line(s) in 3 file(s))")
    assert "tangerine" not in git(ws, "log", "-1", "--format=%B")


def test_forget_by_id_removes_copies_and_dangling_supersedes_stays_auditable(ws):
    old = ws.remember("Seojun prefers tea").entry
    new = ws.remember("Seojun now prefers coffee").entry
    ws.forget(old.id, reason="no longer relevant")
    assert old.id not in ws.memory().ids() and ws.get(new.id).fields["supersedes"] == old.id
    from giok import trace
    chain = trace.history(ws, new.id)
    assert chain[0] == {"id": old.id, "missing": True}


def test_forget_errors(ws):
    with pytest.raises(InvalidInput, match="either"):
        ws.forget(reason="x")
    with pytest.raises(InvalidInput, match="either"):
        ws.forget("m-abcdef", reason="x", match="abcd")
    with pytest.raises(InvalidInput, match="too short"):
        ws.forget(match="ab", reason="x")
    with pytest.raises(NotFound):
        ws.forget(match="nothing like this", reason="x")
    with pytest.raises(InvalidInput, match="empty"):
        ws.forget("m-abcdef", reason="  ")
    r = run_giok("-w", "zeon", "forget", "--reason", "x")
    assert r.returncode != 0 and r.stderr.startswith("Error: ")


def test_purge_reports_history_and_rewrite_history_removes_every_byte(ws, cli):
    entry = ws.remember("Seojun's passport number is M12345678 kept here").entry
    ws.remember("An unrelated fact about lunch")
    out = cli("-w", "zeon", "forget", entry.id, "--reason", "delete everywhere", "--purge", "--json")
    data = json.loads(out.output)
    assert any("git history: " in n and "--rewrite-history" in n for n in data["notes"])
    assert "M12345678" in _all_git_bytes(ws)
    assert cli("-w", "zeon", "forget", "--match", "M12345678", "--reason", "files only").exit_code != 0  # already gone
    from giok.forget import history_report
    assert history_report(ws, ["M12345678"])["commits"]
    out = cli("-w", "zeon", "forget", "--match", "M12345678", "--reason", "history too", "--rewrite-history", "--json")
    assert out.exit_code == 0 and "(rewritten)" in out.output
    assert "M12345678" not in _all_git_bytes(ws)
    assert not history_report(ws, ["M12345678"])["commits"]
    assert "An unrelated fact about lunch" in (ws.root / "MEMORY.md").read_text()
    assert git(ws, "status", "--porcelain") == ""


def test_rewrite_history_through_forget(ws):
    ws.remember("The safe combination is 9-9-1-7-5 for the office")
    result = ws.forget(match="safe combination", reason="gone everywhere", rewrite_history=True)
    assert any("(rewritten)" in n for n in result.notes)
    assert "safe combination" not in _all_git_bytes(ws).lower()
