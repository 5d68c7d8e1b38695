"""Export and import: a workspace portable without git, and the memory people already have
(OpenClaw, mem0, Claude Code, basic-memory, plain markdown) brought in through the write
policy. Samples in tests/data/import/ are written in each tool's own format."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from giok import Workspace
from giok.edges.importers import detect
from giok.edges.porting import export_items, export_jsonl, export_tar, import_path
from giok.store import git

SAMPLES = Path(__file__).parent / "data" / "import"
NOW = "2026-12-01T10:00"


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch):
    monkeypatch.setenv("GIOK_NOW", NOW)


@pytest.fixture
def target(tmp_path, giok_home) -> Workspace:
    workspace, _ = Workspace.init(tmp_path / "sion", name="sion", user="Seojun", home=giok_home)
    return workspace


def _full(ws: Workspace) -> None:
    ws.remember(
        "Seojun prefers tea over coffee.",
        layer="M90",
        type="preference",
        scope="user:seojun",
        source="session 12",
        date="2026-11-20",
    )
    ws.remember("The core identity rule: answer in Korean first.", layer="M0")
    ws.remember("The GPU budget is 40 hours a month.", layer="M365", expires="2027-06-01")
    ws.remember("The GPU budget went up to 60 hours a month.")
    ws.diary("Reviewed the export format")
    ws.decide("Use SQLite for the index", "one file, no server")
    ws.task_move(ws.task_add("Write the porting docs"), "doing")
    ws.lesson("Check exports", "Always diff an export after a change")
    ws.state_set("next-step", "Ship import")
    ws.heartbeat_add("Check the inbox")


def _live(ws: Workspace) -> set:
    return {
        (e.text, e.layer, e.type, e.scope, e.date, e.fields.get("source"), e.expires)
        for e in ws.memory().entries()
        if not e.superseded
    }


def test_export_has_every_kind_and_every_field(ws):
    _full(ws)
    items = [json.loads(line) for line in export_jsonl(ws).splitlines()]
    kinds = {i["kind"] for i in items}
    assert kinds == {"giok-export", "entry", "diary", "decision", "task", "lesson", "state", "heartbeat"}
    tea = next(i for i in items if i["kind"] == "entry" and "tea" in i["text"])
    assert (tea["layer"], tea["type"], tea["scope"], tea["source"], tea["date"]) == (
        "M90",
        "preference",
        "user:seojun",
        "session 12",
        "2026-11-20",
    )
    assert tea["id"].startswith("m-")
    assert tea["expires"]
    assert tea["fields"]["id"] == tea["id"]
    old, new = (
        next(i for i in items if i["kind"] == "entry" and n in i["text"]) for n in ("40 hours", "60 hours")
    )
    assert old["superseded_by"] == new["id"]
    assert new["supersedes"] == old["id"]
    diary = next(i for i in items if i["kind"] == "diary")
    assert diary["day"] == "2026-12-01"
    assert diary["time"] == "10:00"
    assert next(i for i in items if i["kind"] == "task")["status"] == "doing"


def test_a_giok_export_reproduces_the_workspace_and_a_second_import_changes_nothing(ws, target, tmp_path):
    _full(ws)
    export = tmp_path / "zeon.jsonl"
    export.write_text(export_jsonl(ws), "utf-8")
    report = import_path(target, export)
    assert report.counts()["refused"] == 0
    assert _live(target) == _live(ws)
    for read in (
        lambda w: w.decisions()[0]["text"],
        lambda w: [(t["text"], t["status"]) for t in w.tasks()],
        lambda w: w.state()["next-step"],
        lambda w: w.heartbeat(),
        lambda w: w.read_text("memory/2026-12-01.md").splitlines()[-1],
    ):
        assert read(target) == read(ws)
    assert "Always diff an export after a change" in target.read_text("compound/lessons.md")

    head = git.head_id(target.root)
    again = import_path(target, export)
    assert again.counts()["kept"] == 0
    assert git.head_id(target.root) == head
    assert {o.action for o in again.outcomes} == {"merged"}


def test_tar_export_holds_the_files_without_git_and_imports_alike(ws, target, tmp_path):
    _full(ws)
    archive = tmp_path / "zeon.tar"
    archive.write_bytes(export_tar(ws))
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "zeon/MEMORY.md" in names
    assert "zeon/state/decisions.md" in names
    assert not [n for n in names if "/.git/" in n or "/.giok/" in n or n.endswith((".git", ".giok"))]
    import_path(target, archive)
    assert _live(target) == _live(ws)


def test_dry_run_decides_like_the_import_and_writes_nothing(target):
    head = git.head_id(target.root)
    dry = import_path(target, SAMPLES / "openclaw", dry_run=True)
    assert git.head_id(target.root) == head
    assert not target.memory().entries()
    real = import_path(target, SAMPLES / "openclaw")
    assert [(o.item.origin, o.action) for o in dry.outcomes] == [
        (o.item.origin, o.action) for o in real.outcomes
    ]


@pytest.mark.parametrize(
    "name,fmt",
    [
        ("openclaw", "openclaw"),
        ("mem0.json", "mem0"),
        ("claude-code", "claude-code"),
        ("basic-memory", "basic-memory"),
        ("markdown", "markdown"),
    ],
)
def test_each_sample_is_detected_and_a_second_import_keeps_nothing(target, name, fmt):
    assert detect(SAMPLES / name) == fmt
    first = import_path(target, SAMPLES / name)
    assert first.format == fmt
    assert first.counts()["kept"] > 0
    head = git.head_id(target.root)
    second = import_path(target, SAMPLES / name)
    assert second.counts()["kept"] == 0
    assert git.head_id(target.root) == head
    assert second.counts()["refused"] == first.counts()["refused"]


def test_openclaw_memory_diary_days_and_heartbeat(target):
    report = import_path(target, SAMPLES / "openclaw")
    entries = {e.text: e for e in target.memory().entries()}
    assert (
        entries["Deploys go through the `release/*` branches; never push to main directly."].layer == "M365"
    )
    day = target.read_text("memory/2026-11-27.md")
    assert "- 10:12 Reviewed the Dagster migration plan with Seojun; he approved phase 1." in day
    assert "- 16:40 Fixed the empty-prefix bug by skipping the partition; PR #482 opened." in day
    assert "- Note: the backup needs" not in day
    later = target.read_text("memory/2026-11-28.md")
    assert "- 09:05 Morning check-in: PR #482 merged, nightly run green." in later
    assert (
        "- Note: the backfill needs 64 GB of memory on the big runner." in later
    )  # no time given, none made up
    assert "Check the nightly Dagster run and report failures to Seojun." in target.heartbeat()
    refused = [o for o in report.outcomes if o.action == "refused"]
    assert {o.item.origin for o in refused} == {"MEMORY.md:15", "MEMORY.md:18"}  # a guess and a question
    assert all("question" in o.reason or "speculation" in o.reason for o in refused)


def test_mem0_ids_become_scopes_dates_stay_and_duplicates_merge(target):
    report = import_path(target, SAMPLES / "mem0.json")
    by_text = {e.text: e for e in target.memory().entries()}
    name = by_text["Name is Alex Kim"]
    assert name.scope == "user:alex"
    assert str(name.date) == "2026-09-14"
    assert by_text["jordan is learning Rust for a side project"].scope == "user:jordan"
    agent = by_text["Always confirm the booking reference before closing a travel request"]
    assert agent.scope == "workspace"
    assert "agent:travel-agent" in agent.fields["source"]
    assert agent.type == "workflow"
    assert by_text["Prefers window seats on long flights"].type == "preference"
    merged = [o for o in report.outcomes if o.action == "merged"]
    assert [o.item.origin for o in merged] == ["mem0.json#d9e8f7a6-b5c4-4d3e-8f2a-1b0c9d8e7f6a"]
    refused = [o for o in report.outcomes if o.action == "refused"]
    assert len(refused) == 1
    assert "speculation" in refused[0].reason


def test_claude_code_topic_files_are_one_entry_each_and_index_links_are_not_repeated(target):
    report = import_path(target, SAMPLES / "claude-code")
    texts = [e.text for e in target.memory().entries()]
    pnpm = [t for t in texts if "pnpm" in t]
    assert len(pnpm) == 1
    assert "Why: the lockfile is pnpm-lock.yaml" in pnpm[0]
    assert "**" not in pnpm[0]
    assert "The staging database is reset every Sunday at 02:00 UTC." in texts
    assert not [t for t in texts if "feedback_pnpm.md" in t or t.startswith("Use pnpm —")]
    assert next(e for e in target.memory().entries() if "pnpm" in e.text).type == "preference"
    assert len(report.outcomes) == 6


def test_basic_memory_observations_and_relations(target):
    report = import_path(target, SAMPLES / "basic-memory")
    texts = {e.text: e for e in target.memory().entries()}
    assert "Coffee Brewing Methods relates to Coffee Bean Origins" in texts
    decision = texts["Search Design: Use SQLite FTS5 with BM25 ranking for full-text search #search"]
    assert decision.type == "decision"
    assert "projects/search-design [decision]" in decision.fields["source"]
    actions = {o.item.origin: o.action for o in report.outcomes}
    assert actions["projects/search-design.md:15"] == "merged"  # the same observation twice
    assert actions["coffee-brewing-methods.md:16"] == "refused"  # a [question]


def test_markdown_notes_redact_secrets_and_make_tasks_and_diary_days(target):
    report = import_path(target, SAMPLES / "markdown")
    history = subprocess.run(
        ["git", "-C", str(target.root), "log", "-p", "--all"], check=True, capture_output=True, text=True
    ).stdout
    assert "hunter2-Correct-Horse-77" not in history
    assert "ghp_4fJ9kQ2mX7pL0sV8tR3wZ6yB1nC5dE0aH2uI" not in history
    assert "[REDACTED" in target.read_text("MEMORY.md")
    assert [(t["text"], t["status"]) for t in target.tasks()] == [
        ("Replace the UPS battery before winter.", "todo")
    ]
    assert "- 21:15 Noticed the nightly backup took 3 hours instead of 40 minutes." in target.read_text(
        "memory/2026-11-30.md"
    )
    texts = " ".join(e.text for e in target.memory().entries())
    assert "ssh admin" not in texts
    assert "SICP" not in texts  # code blocks and tables are not memories
    assert {o.reason.split(":")[0] for o in report.outcomes if o.action == "refused"} == {
        "greeting or small talk",
        "a question, not a fact",
        "a secret",  # a line that was nothing but a password: redacted, nothing is left to keep
    }


def test_export_items_of_a_plain_folder_need_no_git(tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# MEMORY.md\n\n- The NAS is at 192.168.1.20.\n", "utf-8")
    items = list(export_items(Workspace(folder)))
    assert [i["text"] for i in items if i["kind"] == "entry"] == ["The NAS is at 192.168.1.20."]


def test_cli_export_import_json_and_bad_input(ws, target, cli, tmp_path):
    _full(ws)
    out = tmp_path / "x.jsonl"
    assert cli("-w", "zeon", "export", "-o", out).exit_code == 0
    result = cli("-w", "sion", "import", out, "--json")
    data = json.loads(result.output)
    assert result.exit_code == 0
    assert data["items"] == data["kept"] + data["merged"] + data["refused"]
    assert {o["action"] for o in data["outcomes"]} <= {"kept", "merged", "refused"}
    assert all(o["reason"] for o in data["outcomes"])

    broken = tmp_path / "mem0.json"
    broken.write_text("{not json", "utf-8")
    head = git.head_id(target.root)
    bad = cli("-w", "sion", "import", broken, "--from", "mem0")
    assert bad.exit_code == 2
    assert "not JSON" in bad.output
    assert git.head_id(target.root) == head
    assert "export" in cli("--help").output
    assert "--dry-run" in cli("import", "--help").output


def test_hostile_or_broken_exports_are_refused_whole_before_anything_is_written(target, tmp_path):
    from giok.errors import InvalidInput

    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        info = tarfile.TarInfo("../escaped.md")
        info.size = 4
        tar.addfile(info, __import__("io").BytesIO(b"boom"))
    head = git.head_id(target.root)
    with pytest.raises(InvalidInput, match="tar"):
        import_path(target, evil)
    assert not (tmp_path / "escaped.md").exists()
    lines = tmp_path / "half.jsonl"
    lines.write_text(
        '{"kind": "entry", "text": "The NAS is at 192.168.1.20.", "layer": "M90"}\n{broken\n', "utf-8"
    )
    with pytest.raises(InvalidInput, match=r"half\.jsonl:2"):
        import_path(target, lines)
    assert git.head_id(target.root) == head
    assert not target.memory().entries()


def test_one_bad_item_is_refused_and_the_others_import(target, tmp_path):
    lines = tmp_path / "mixed.jsonl"
    rows = [
        {"kind": "entry", "text": "The NAS is at 192.168.1.20.", "layer": "M9"},
        {"kind": "entry", "text": "The router is at 192.168.1.1.", "scope": "user:a..b"},
        {"kind": "diary", "day": "2027-01-01", "time": "10:00", "text": "from the future"},
        {"kind": "entry", "text": "The printer is at 192.168.1.30.", "layer": "M90"},
    ]
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    report = import_path(target, lines)
    got = {o.item.origin: (o.action, o.reason) for o in report.outcomes}
    assert [got[f"mixed.jsonl:{n}"][0] for n in (1, 2, 3, 4)] == ["refused", "refused", "refused", "kept"]
    assert "invalid layer" in got["mixed.jsonl:1"][1]
    assert "invalid scope" in got["mixed.jsonl:2"][1]
    assert "future" in got["mixed.jsonl:3"][1]
    assert [e.text for e in target.memory().entries()] == ["The printer is at 192.168.1.30."]


def test_export_keeps_every_diary_item_as_search_reads_it(ws):
    """The export reads diaries with the shared diary parser: wrapped lines, untimed
    paragraphs and H:MM times are kept (a line-by-line pattern cut them)."""
    from giok.edges.porting import export_items

    (ws.root / "memory" / "2026-11-02.md").write_text(
        "# 2026-11-02\n\n- 09:05 Reviewed the parser\n  and wrote docs\n\nA plain paragraph about the "
        "release.\n"
        "- 9:30 early standup\n",
        "utf-8",
    )
    items = [i for i in export_items(ws) if i["kind"] == "diary" and i["day"] == "2026-11-02"]
    assert [(i["time"], i["text"]) for i in items] == [
        ("09:05", "Reviewed the parser and wrote docs"),
        (None, "A plain paragraph about the release."),
        ("9:30", "early standup"),
    ]
