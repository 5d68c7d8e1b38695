"""`giok doctor`: each broken condition is created for real and must be reported with its fix."""

from __future__ import annotations

import json
import shutil
import stat

import pytest

from giok import Workspace
from giok.edges.doctor import diagnose
from giok.lifecycle import routines
from giok.retrieval import index
from giok.store import git, journal


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch, setenv):
    """No real ~/.claude or crontab: a project folder of our own and a crontab in a file."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-user"))
    table = tmp_path / "crontab.txt"
    fake = tmp_path / "fake-crontab"
    fake.write_text(
        f'#!/bin/sh\nif [ "$1" = "-l" ]; then\n  [ -f {table} ] || {{ echo "no crontab for you" >&2; '
        f"exit 1; }}\n  cat {table}\nelse\n  cat > {table}\nfi\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    setenv("GIOK_CRONTAB", str(fake))
    return project


def _by(result, check):
    return [f for f in result["findings"] if f["check"] == check]


def test_a_healthy_workspace_has_no_errors(ws, cli):
    result = diagnose(ws)
    assert result["errors"] == 0, result["findings"]
    assert all(f["fix"] for f in result["findings"])
    out = cli("-w", "zeon", "doctor")
    assert out.exit_code == 0
    assert "0 error(s)" in out.output


def test_stale_git_lock_and_pending_journal_are_reported_and_repaired(ws):
    (ws.root / ".git" / "index.lock").write_text("")
    journal.begin(ws.root, "memory: remember (killed)", {"MEMORY.md": b"# half written\n"})
    found = _by(diagnose(ws), "files")
    lock = [f for f in found if ".git/index.lock" in f["message"]]
    pending = [f for f in found if ".giok/journal.json" in f["message"]]
    assert lock
    assert pending
    assert "doctor --repair" in lock[0]["fix"]
    assert "doctor --repair" in pending[0]["fix"]
    repaired = diagnose(ws, repair=True)
    assert repaired["repaired"] is not None
    assert not [f for f in _by(repaired, "files") if ".lock" in f["message"] or "journal" in f["message"]]
    assert not (ws.root / ".git" / "index.lock").exists()


def test_a_deleted_workspace_folder_is_an_orphan(ws, tmp_path, giok_home):
    gone, _ = Workspace.init(tmp_path / "demo", name="demo", home=giok_home)
    shutil.rmtree(gone.root)
    home = _by(diagnose(ws), "home")
    assert len(home) == 1
    assert "'demo'" in home[0]["message"]
    assert home[0]["fix"].startswith("giok workspaces remove demo")


def test_doctor_all_checks_every_workspace_of_the_home(ws, tmp_path, giok_home, cli, monkeypatch):
    """From outside any workspace, `doctor --all` checks each registered one; a broken one is
    one error among them, and the others are still checked."""
    Workspace.init(tmp_path / "nuri", name="nuri", home=giok_home)
    gone, _ = Workspace.init(tmp_path / "demo", name="demo", home=giok_home)
    shutil.rmtree(gone.root)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GIOK_WORKSPACE", raising=False)
    out = cli("doctor", "--all", "--json")
    assert out.exit_code == 1
    results = {r["workspace"]: r for r in json.loads(out.output)}
    assert set(results) == {"demo", "nuri", "zeon"}
    assert (
        results["demo"]["errors"] == 1 and "workspaces remove demo" in results["demo"]["findings"][0]["fix"]
    )
    assert results["nuri"]["path"] == str(tmp_path / "nuri")


def test_a_wrong_or_missing_git_identity(ws, cli):
    git.set_local_identity(ws.root, "sion (giok)", "sion@giok.local")  # a folder copied from another agent
    wrong = _by(diagnose(ws), "git")
    assert wrong
    assert wrong[0]["severity"] == "warning"
    assert "sion" in wrong[0]["message"]
    assert 'user.name "zeon (giok)"' in wrong[0]["fix"]
    git.run(ws.root, "config", "--unset", "user.name")
    git.run(ws.root, "config", "--unset", "user.email")
    missing = _by(diagnose(ws), "git")
    assert missing[0]["severity"] == "error"
    assert "no git identity" in missing[0]["message"]
    out = cli("-w", "zeon", "doctor", "--json")
    assert out.exit_code == 1
    assert json.loads(out.output)["errors"] >= 1


def test_an_index_built_with_another_model(ws, giok_home, cli):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 16}))
    index.sync(ws)
    assert not _by(diagnose(ws), "index")
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 32}))
    found = _by(diagnose(ws), "index")
    assert found[0]["severity"] == "error"
    assert "fake:16" in found[0]["message"]
    assert found[0]["fix"] == "giok -w zeon index --rebuild"
    out = cli("-w", "zeon", "doctor")
    assert out.exit_code == 1
    assert "fix: giok -w zeon index --rebuild" in out.output


def test_an_oversized_tier_1(ws):
    rules = "\n".join(
        f"- Rule {n}: always re-read the whole project handbook, the style guide and every open "
        f"ticket before answering anything at all, and cite each of them by section."
        for n in range(30)
    )
    agents = ws.read_text("AGENTS.md")
    ws.path("AGENTS.md").write_text(agents.replace("## TIER 1", "## TIER 1\n" + rules, 1), "utf-8")
    found = diagnose(ws)
    boot = _by(found, "boot")
    assert boot
    assert "always-injected tier" in boot[0]["message"]
    assert "TIER 1" in boot[0]["fix"]
    assert [f for f in _by(found, "files") if "TIER 1 has" in f["message"] and "TIER 2" in f["fix"]]


def test_crontab_entries_missing_then_outdated(ws):
    assert "schedule install" in _by(diagnose(ws), "schedule")[0]["fix"]
    routines.install(ws)
    assert not _by(diagnose(ws), "schedule")
    table = routines.crontab_read(ws.home).replace("30 9 * * *", "45 9 * * *")
    routines.crontab_write(table, ws.home)
    found = _by(diagnose(ws), "schedule")
    assert found[0]["severity"] == "warning"
    assert "1 outdated" in found[0]["message"]


def test_claude_code_hooks(ws, isolated):
    settings = isolated / ".claude" / "settings.json"
    settings.parent.mkdir()
    hooks = {
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "startup",
                    "hooks": [{"type": "command", "command": "giok boot -w zeonn --format claude-hook"}],
                }
            ],
            "PreCompact": [
                {
                    "matcher": "auto",
                    "hooks": [
                        {
                            "type": "command",
                            "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/giok-precompact.sh',
                        }
                    ],
                }
            ],
        }
    }
    settings.write_text(json.dumps(hooks), "utf-8")
    found = _by(diagnose(ws), "hooks")
    unknown = [f for f in found if "'zeonn'" in f["message"]]
    script = [f for f in found if "giok-precompact.sh" in f["message"]]
    assert unknown[0]["severity"] == "error"
    assert "-w zeon" in unknown[0]["fix"]
    assert "does not exist" in script[0]["message"]
    assert "chmod +x" in script[0]["fix"]

    hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"] = "giok boot -w zeon --format claude-hook"
    settings.write_text(json.dumps(hooks), "utf-8")
    hook = isolated / ".claude" / "hooks" / "giok-precompact.sh"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert not _by(diagnose(ws), "hooks")


def test_the_plugins_giok_hook_commands_are_recognised(ws, isolated):
    """docs/integrations/claude-code.md's settings run `giok hook EVENT -w NAME`."""
    settings = isolated / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    hooks = {
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": f"giok hook {event} -w zeon"}]}]
            for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop")
        }
    }
    settings.write_text(json.dumps(hooks), "utf-8")
    assert not _by(diagnose(ws), "hooks")
    hooks["hooks"]["Stop"][0]["hooks"][0]["command"] = "giok hook Stop -w ghost"
    settings.write_text(json.dumps(hooks), "utf-8")
    found = _by(diagnose(ws), "hooks")
    assert [f["severity"] for f in found] == ["error"]
    assert "'ghost'" in found[0]["message"]
