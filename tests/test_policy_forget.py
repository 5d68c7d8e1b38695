"""Forget: by id or by match, across files, index and caches; git history on request."""

import json
import subprocess

import pytest

from conftest import run_giok
from giok.errors import InvalidInput, NotFound


def git(ws, *args):
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def _all_git_bytes(ws) -> str:
    """Every object in the repository, decompressed, plus every commit message."""
    objects = git(ws, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    proc = subprocess.run(
        ["git", "-C", str(ws.root), "cat-file", "--batch"],
        input=("\n".join(objects) + "\n").encode(),
        capture_output=True,
        check=True,
    )
    return proc.stdout.decode("utf-8", errors="replace")


def test_forget_match_covers_memory_diary_and_lessons(ws):
    ws.remember("The vault code is tangerine-42")
    ws.remember("maybe the vault code is tangerine-42 again")  # refused: its text never lands in git
    ws.diary("Told Zeon the vault code is tangerine-42")
    ws.lesson("Vault", "- keep tangerine-42 out of chat")
    keep = ws.remember("The office is in Pangyo").entry
    preview = ws.forget(match="TANGERINE-42", reason="user request", dry_run=True)
    assert "tangerine" not in (ws.root / "state/trace.jsonl").read_text()
    assert preview.action == "unchanged"
    assert len([n for n in preview.notes if n.startswith("would remove")]) == 3
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
    assert old.id not in ws.memory().ids()
    assert ws.get(new.id).fields["supersedes"] == old.id
    from giok.store import trace

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
    assert r.returncode != 0
    assert r.stderr.startswith("Error: ")


def test_purge_reports_history_and_rewrite_history_removes_every_byte(ws, cli):
    entry = ws.remember("Seojun's passport number is M12345678 kept here").entry
    ws.remember("An unrelated fact about the build server")
    out = cli("-w", "zeon", "forget", entry.id, "--reason", "delete everywhere", "--purge", "--json")
    data = json.loads(out.output)
    assert any("git history: " in n and "--rewrite-history" in n for n in data["notes"])
    assert "M12345678" in _all_git_bytes(ws)
    assert (
        cli("-w", "zeon", "forget", "--match", "M12345678", "--reason", "files only").exit_code != 0
    )  # already gone
    from giok.write.forget import history_report

    assert history_report(ws, ["M12345678"])["commits"]
    out = cli(
        "-w",
        "zeon",
        "forget",
        "--match",
        "M12345678",
        "--reason",
        "history too",
        "--rewrite-history",
        "--json",
    )
    assert out.exit_code == 0
    assert "(rewritten)" in out.output
    assert "M12345678" not in _all_git_bytes(ws)
    assert not history_report(ws, ["M12345678"])["commits"]
    assert "An unrelated fact about the build server" in (ws.root / "MEMORY.md").read_text()
    assert git(ws, "status", "--porcelain") == ""


def test_rewrite_history_through_forget(ws):
    ws.remember("The safe combination is 9-9-1-7-5 for the office")
    result = ws.forget(match="safe combination", reason="gone everywhere", rewrite_history=True)
    assert any("(rewritten)" in n for n in result.notes)
    assert "safe combination" not in _all_git_bytes(ws).lower()


def _commit_file(ws, rel, text):
    path = ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(ws, "add", rel)
    git(ws, "commit", "-qm", f"add {rel}")


def _python_312(ws):
    ws.decide("Use Python 3.12 for the backend", "the new typing features")
    ws.lesson("Upgrades", "- Python 3.12 broke the old wheel")
    _commit_file(ws, "drafts/essay.md", "# Essay\n\nWe moved to Python 3.12 last spring.\n")
    ws.diary("Python 3.12")
    return ws.remember("Python 3.12").entry


def test_forget_by_id_touches_only_the_entry_and_its_diary_source(ws):
    entry = _python_312(ws)
    keep = {
        rel: (ws.root / rel).read_bytes()
        for rel in ("state/decisions.md", "compound/lessons.md", "drafts/essay.md")
    }
    result = ws.forget(entry.id, reason="wrong")
    assert sorted({n.split()[1].rsplit(":", 1)[0] for n in result.notes if n.startswith("removed")}) == [
        "MEMORY.md",
        ws.diary_path(),
    ]
    for rel, data in keep.items():
        assert (ws.root / rel).read_bytes() == data, rel
    assert "Python 3.12" not in (ws.root / "MEMORY.md").read_text()
    assert "Python 3.12" not in (ws.root / ws.diary_path()).read_text()
    assert ws.decide("Use uv for packaging", "fast") == "D-002"
    assert git(ws, "status", "--porcelain") == ""


def test_forget_by_id_never_takes_short_or_partial_diary_lines(ws):
    entry = ws.remember("Seojun prefers tea in the morning").entry
    short = ws.remember("Tea", force=True).entry
    ws.diary("Seojun prefers tea, he said")
    ws.diary("tea with Mina at four")
    before = (ws.root / ws.diary_path()).read_text()
    ws.forget(entry.id, reason="wrong")
    ws.forget(short.id, reason="wrong")
    assert (ws.root / ws.diary_path()).read_text() == before


def test_forget_match_leaves_decisions_drafts_and_identity_files(ws):
    _python_312(ws)
    soul = ws.root / "SOUL.md"
    soul.write_text(soul.read_text() + "\nLoves Python 3.12.\n")
    git(ws, "commit", "-qam", "soul")
    keep = {rel: (ws.root / rel).read_bytes() for rel in ("state/decisions.md", "drafts/essay.md", "SOUL.md")}
    ws.forget(match="python 3.12", reason="wrong")
    for rel, data in keep.items():
        assert (ws.root / rel).read_bytes() == data, rel
    for rel in ("MEMORY.md", "compound/lessons.md", ws.diary_path()):
        assert "3.12" not in (ws.root / rel).read_text(), rel


def test_forget_match_needs_a_sane_length(ws):
    ws.remember("Seojun's team uses the staging cluster")
    with pytest.raises(InvalidInput, match="too short"):
        ws.forget(match="the", reason="x")
    with pytest.raises(InvalidInput, match="too short"):
        ws.forget(match="  team  ", reason="x")


def test_forget_without_git_identity_writes_nothing(ws):
    entry = ws.remember("The vault code is tangerine-42").entry
    before = (ws.root / "MEMORY.md").read_bytes()
    git(ws, "config", "--unset", "user.name")
    from giok.errors import GitError

    with pytest.raises(GitError, match="identity"):
        ws.forget(entry.id, reason="x")
    with pytest.raises(GitError, match="identity"):
        ws.forget(match="tangerine-42", reason="x")
    assert (ws.root / "MEMORY.md").read_bytes() == before


def test_forget_restores_every_file_when_the_commit_fails(ws, monkeypatch):
    ws.remember("The vault code is tangerine-42")
    ws.diary("Told Zeon the vault code is tangerine-42")
    ws.lesson("Vault", "- keep tangerine-42 out of chat")
    rels = ("MEMORY.md", "compound/lessons.md", ws.diary_path())
    before = {rel: (ws.root / rel).read_bytes() for rel in rels}
    from giok.errors import GitError
    from giok.write import forget as forget_mod

    def broken(*args, **kwargs):
        raise GitError("commit failed")

    monkeypatch.setattr(forget_mod.git, "commit", broken)
    with pytest.raises(GitError, match="commit failed"):
        ws.forget(match="tangerine-42", reason="x")
    monkeypatch.undo()
    for rel in rels:
        assert (ws.root / rel).read_bytes() == before[rel], rel
    assert git(ws, "status", "--porcelain") == ""


def test_forget_checks_every_file_before_writing_any(ws, monkeypatch):
    """A file changed by hand after the read is refused, and nothing is left half-written."""
    ws.remember("The vault code is tangerine-42")
    ws.lesson("Vault", "- keep tangerine-42 out of chat")
    import giok.store.transaction as workspace_mod
    from giok.errors import ConflictError

    real = workspace_mod.atomic_write
    calls = []

    def racing(path, data, **kwargs):
        calls.append(path)
        if len(calls) == 1:  # somebody edits the second file while the first is written
            lessons = ws.root / "compound/lessons.md"
            lessons.write_text(lessons.read_text() + "- edited by hand\n")
        return real(path, data, **kwargs)

    monkeypatch.setattr(workspace_mod, "atomic_write", racing)
    before = (ws.root / "MEMORY.md").read_bytes()
    with pytest.raises(ConflictError):
        ws.forget(match="tangerine-42", reason="x")
    assert (ws.root / "MEMORY.md").read_bytes() == before
    assert "edited by hand" in (ws.root / "compound/lessons.md").read_text()


def test_forget_purges_the_index_case_insensitively(ws, fake_embeddings):
    from giok.retrieval import index

    ws.remember("Seojun's old address is 12 Hanok-gil Jongno", layer="M90")
    ws.remember("The office is in Pangyo")
    index.sync(ws)
    result = ws.forget(match="hanok-gil jongno", reason="user asked")
    assert any(
        n.startswith("search index: ") and not n.startswith("search index: 0 ") for n in result.notes
    ), result.notes
    for path in ws.data_dir.rglob("*"):
        if path.is_file():
            assert b"hanok" not in path.read_bytes().lower(), path
    index.sync(ws)
    from giok.retrieval import search

    found = [r.text for r in search.search(ws, "office Pangyo", k=10, min_score=0.0, gap=None)]
    assert any("Pangyo" in t for t in found)
    assert not any("Hanok" in t for t in found)


def test_rewrite_history_touches_only_the_memory_files(ws):
    _commit_file(ws, "drafts/essay.md", "# Essay\n\nThe safe combination is a draft idea.\n")
    _commit_file(ws, "assets/blob.bin", "safe combination\0binary\n")
    ws.remember("The safe combination is 9-9-1-7-5 for the office")
    ws.forget(match="safe combination", reason="gone", rewrite_history=True)
    assert "safe combination" in (ws.root / "drafts/essay.md").read_text()
    assert (ws.root / "assets/blob.bin").read_bytes() == b"safe combination\0binary\n"
    assert "safe combination" not in (ws.root / "MEMORY.md").read_text()
    assert git(ws, "status", "--porcelain") == ""
    short = ws.remember("Tea", force=True).entry
    with pytest.raises(InvalidInput, match="too short"):
        ws.forget(short.id, reason="x", rewrite_history=True)
    assert short.id in ws.memory().ids()
