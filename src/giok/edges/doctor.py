"""`giok doctor`: one check-up of a workspace, end to end. Each finding is
{check, severity (error|warning|info), message, fix}; the fix is a command or a step.

    git        a repository and an identity (not another workspace's, as a copied folder has)
    files      what `Workspace.check` reports: missing files, unreadable entries, a pending
               write journal, stale git locks, temp files of killed writers
    index      the search index exists and was built by the configured embedding model
    schedule   the crontab holds this workspace's routines as `giok schedule install` writes them
    hooks      Claude Code settings that run giok: SessionStart `giok boot`, a PreCompact script;
               giok's Claude Code plugin, installed and enabled (and not doubled by hand)
    home       registered workspaces whose folder is gone
    boot       the token size of the always-injected tier and TIER 1's rule count
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

from giok.errors import GiokError
from giok.settings import Settings
from giok.store import git
from giok.workspace import Workspace

SEVERITIES = ("error", "warning", "info")


def finding(check: str, severity: str, message: str, fix: str) -> dict:
    return {"check": check, "severity": severity, "message": message, "fix": fix}


def diagnose(ws: Workspace, cwd: Path | None = None, repair: bool = False) -> dict:
    """Every finding for ws, errors first. repair=True first settles what killed processes
    left (Workspace.recover: stale git locks, a pending journal, temp files)."""
    repaired = ws.recover() if repair else None
    findings = []
    for check in (check_git, check_files, check_index, check_schedule, check_hooks, check_home, check_boot):
        try:
            findings += check(ws, cwd) if check is check_hooks else check(ws)
        except GiokError as exc:  # one broken part must not hide the others
            findings.append(
                finding(
                    check.__name__[6:],
                    "error",
                    f"the check itself failed: {exc}",
                    "fix the cause above, then run `giok doctor` again",
                )
            )
    findings.sort(key=lambda f: SEVERITIES.index(f["severity"]))
    count = {s: sum(f["severity"] == s for f in findings) for s in SEVERITIES}
    return {
        "workspace": ws.name,
        "path": str(ws.root),
        "errors": count["error"],
        "warnings": count["warning"],
        "infos": count["info"],
        "findings": findings,
        "repaired": repaired,
    }


def _w(ws: Workspace) -> str:
    return f"giok -w {shlex.quote(ws.name)}"


# -- git ----------------------------------------------------------------------------------------
def check_git(ws: Workspace) -> list[dict]:
    root = shlex.quote(str(ws.root))
    if not git.is_repo(ws.root):
        return [
            finding(
                "git",
                "error",
                f"{ws.root} is not a git repository: nothing is committed",
                f"giok init {root} (adopts the folder: adds what is missing and runs git init)",
            )
        ]
    name = _config(ws.root, "user.name")
    email = _config(ws.root, "user.email")
    fix = (
        f'git -C {root} config user.name "{ws.name} (giok)" '
        f"&& git -C {root} config user.email {ws.name}@giok.local"
    )
    if not (name and email) and not ws.home.settings.git_author:
        return [
            finding(
                "git", "error", "no git identity (user.name and user.email): every write fails to commit", fix
            )
        ]
    out = []
    m = re.match(r"^(.+) \(giok\)$", name or "")
    if m and m.group(1) != ws.name:
        out.append(
            finding(
                "git",
                "warning",
                f"the git identity is {name} <{email}>, another workspace's "
                f"(a copied folder?): this workspace's commits are attributed to {m.group(1)}",
                fix,
            )
        )
    if email and "@" not in email:
        out.append(finding("git", "warning", f"the git email {email!r} is not an address", fix))
    return out


def _config(root: Path, key: str, *where: str) -> str:
    return git.run(root, "config", *where, "--get", key, check=False).stdout.strip()


# -- the files, locks and journal ---------------------------------------------------------------
def check_files(ws: Workspace) -> list[dict]:
    out = []
    for p in ws.check():
        if p["message"] == "not a git repository":
            continue  # check_git says so, with its fix
        where = p["path"] + (f":{p['line']}" if p.get("line") else "")
        out.append(finding("files", p["severity"], f"{where}: {p['message']}", _files_fix(ws, p)))
    return out


def _files_fix(ws: Workspace, problem: dict) -> str:
    path, message = problem["path"], problem["message"]
    if path == ".giok/journal.json" or path.startswith(".git/") or "temp file" in message:
        return (
            f"{_w(ws)} doctor --repair (settles what a killed writer left; the next giok write does it too)"
        )
    if "an interrupted sync" in message:
        return f"{_w(ws)} sync (rolls back what the killed sync did not commit, then merges again)"
    if "holds a secret" in message:
        return f"edit {path} (line {problem.get('line')}): remove the secret, commit, and rotate it"
    if "a symlink" in message:
        return f"replace {path} with the file it should be (git rm {path}; write the file; commit), then sync"
    if message == "missing file":
        return f"giok init {shlex.quote(str(ws.root))} (adds the missing files, overwrites nothing)"
    if "expired" in message:
        return f"{_w(ws)} distill (archives expired entries)"
    if "duplicate id" in message:
        return f"edit {path}: give one of the two entries a new id (m- and 6 hex digits) or remove it"
    if "TIER 1" in message:
        return "move rules from TIER 1 to TIER 2 in AGENTS.md (TIER 1 is injected every session)"
    if "outside any layer" in message:
        return (
            "move those lines under a layer heading of MEMORY.md (## … M30 …), "
            "or leave them: they read as M30"
        )
    if "not a git repository" in message:
        return f"giok init {shlex.quote(str(ws.root))}"
    return f"edit {path} by hand, then `{_w(ws)} check`"


# -- the index ----------------------------------------------------------------------------------
def check_index(ws: Workspace) -> list[dict]:
    from giok.retrieval import index

    if not (ws.root / ".giok" / index.FILENAME).exists():
        return [
            finding("index", "info", "no search index yet (search builds it on first use)", f"{_w(ws)} index")
        ]
    status = index.status(ws)
    if status.get("error"):
        return [finding("index", "error", status["error"], f"{_w(ws)} index --rebuild")]
    return []


# -- the crontab --------------------------------------------------------------------------------
def check_schedule(ws: Workspace) -> list[dict]:
    from giok.lifecycle import routines

    try:
        lines = routines.crontab_read(ws.home).splitlines()
    except GiokError as exc:
        return [
            finding(
                "schedule",
                "info",
                f"no crontab to check ({exc})",
                f"install cron, or run `{_w(ws)} schedule run` in the foreground",
            )
        ]
    mine = [line for line in lines if routines._ours(line, ws.name)]
    wanted = [routines.cron_line(ws, r) for r in routines.routines(ws)]
    fix = f"{_w(ws)} schedule install"
    if not mine:
        return [
            finding(
                "schedule",
                "info",
                "no routines in the crontab: check-ins and nightly distillation do not run on their own",
                fix,
            )
        ]
    if sorted(mine) != sorted(wanted):
        stale = [line for line in mine if line not in wanted]
        missing = [line for line in wanted if line not in mine]
        return [
            finding(
                "schedule",
                "warning",
                f"the crontab's giok lines differ from the routines: {len(stale)} "
                f"outdated (another schedule, python or home), {len(missing)} missing",
                fix,
            )
        ]
    return []


# -- Claude Code hooks --------------------------------------------------------------------------
def settings_files(settings: Settings, cwd: Path | None = None) -> list[Path]:
    """Claude Code's settings that may hold hooks: the project's, then the user's
    (CLAUDE_CONFIG_DIR as the entry point read it, else ~/.claude)."""
    project = Path(cwd or os.getcwd())
    user = settings.claude_config or Path.home() / ".claude"
    return [
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
        user / "settings.json",
    ]


def check_hooks(ws: Workspace, cwd: Path | None = None) -> list[dict]:
    project = Path(cwd or os.getcwd())
    out, boots = [], []
    for path in settings_files(ws.home.settings, cwd):
        if not path.is_file():
            continue
        try:
            hooks = json.loads(path.read_text("utf-8")).get("hooks") or {}
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
            out.append(
                finding(
                    "hooks",
                    "error",
                    f"{path} is not valid JSON ({exc}): Claude Code ignores its hooks",
                    f"fix the JSON in {path}",
                )
            )
            continue
        for event, command in _commands(hooks):
            if re.search(r"\bgiok\b.*\bhook\b", command):  # `giok hook EVENT` (the plugin's form)
                boots += [command] if event == "SessionStart" else []
                out += _workspace_named(ws, path, command, event)
            elif event == "SessionStart" and re.search(r"\bgiok\b.*\bboot\b", command):
                boots.append(command)
                out += _boot_hook(ws, path, command)
            elif event == "PreCompact" and "giok" in command:
                out += _script_hook(path, command, project)
    plugin = installed_plugin(ws.home.settings, cwd)
    if plugin and boots:
        out.append(
            finding(
                "hooks",
                "warning",
                f"Claude Code's plugin {plugin} runs giok's hooks, and settings run them too "
                f"({len(boots)} SessionStart hook(s) by hand): boot, recall and the diary line "
                "happen twice",
                "remove giok's hooks from the settings files above; the plugin runs them",
            )
        )
    if not boots and not plugin:
        out.append(
            finding(
                "hooks",
                "info",
                "Claude Code does not run giok: no giok plugin installed and no SessionStart hook "
                "runs `giok hook SessionStart` or `giok boot` (looked in "
                + ", ".join(str(p) for p in settings_files(ws.home.settings, cwd))
                + ")",
                "sh integrations/claude-code/install.sh from a checkout of giok, as "
                "docs/integrations/claude-code.md shows (only if this agent runs in Claude Code)",
            )
        )
    return out


def installed_plugin(settings: Settings, cwd: Path | None = None) -> str | None:
    """The Claude Code plugin (name@marketplace) that runs `giok hook SessionStart`, when one is
    installed (the CLI's plugins/installed_plugins.json) and enabled in a settings file
    (`enabledPlugins`); None otherwise."""
    user = settings.claude_config or Path.home() / ".claude"
    enabled: dict = {}
    files = settings_files(settings, cwd)
    for path in files[-1:] + files[:-1]:  # user, project, local: the later wins, as in Claude Code
        try:
            found = json.loads(path.read_text("utf-8")).get("enabledPlugins")
        except (OSError, ValueError, AttributeError):
            continue
        enabled.update(found if isinstance(found, dict) else {})
    try:
        installed = json.loads((user / "plugins" / "installed_plugins.json").read_text("utf-8"))
        plugins = installed.get("plugins") or {}
    except (OSError, ValueError, AttributeError):
        return None
    for name, copies in plugins.items() if isinstance(plugins, dict) else []:
        if enabled.get(name) is not True:
            continue
        for copy in copies if isinstance(copies, list) else []:
            hooks = Path(str((copy or {}).get("installPath") or "")) / "hooks" / "hooks.json"
            try:
                events = json.loads(hooks.read_text("utf-8")).get("hooks") or {}
            except (OSError, ValueError, AttributeError):
                continue
            if any(e == "SessionStart" and re.search(r"\bgiok\b.*\bhook\b", c) for e, c in _commands(events)):
                return name
    return None


def _commands(hooks: dict):
    for event, groups in hooks.items() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    yield event, hook["command"]


def _workspace_named(ws: Workspace, path: Path, command: str, event: str) -> list[dict]:
    """An error when a hook names a workspace the home does not know."""
    m = re.search(r"(?:-w|--workspace)[ =](\S+)", command)
    name = m.group(1).strip("'\"") if m else None
    if name and "/" not in name and name not in ws.home.workspaces():
        return [
            finding(
                "hooks",
                "error",
                f"{path}: the {event} hook names workspace {name!r}, which the home "
                f"does not know: giok does nothing for it",
                f"change -w {name} to -w {ws.name} in {path} (or `giok init PATH --name {name}`)",
            )
        ]
    return []


def _boot_hook(ws: Workspace, path: Path, command: str) -> list[dict]:
    unknown = _workspace_named(ws, path, command, "SessionStart")
    if unknown:
        return unknown
    if "claude-hook" not in command:
        return [
            finding(
                "hooks",
                "warning",
                f"{path}: the SessionStart hook runs `giok boot` without "
                f"--format claude-hook: Claude Code gets plain text instead of additionalContext",
                f"add --format claude-hook to the command in {path}",
            )
        ]
    return []


def _script_hook(path: Path, command: str, project: Path) -> list[dict]:
    first = command.split()[0].strip("'\"").replace("$CLAUDE_PROJECT_DIR", str(project))
    first = first.replace('"', "")
    script = Path(first)
    if "/" in first and not (script.is_file() and os.access(script, os.X_OK)):
        state = "is not executable" if script.is_file() else "does not exist"
        return [
            finding(
                "hooks",
                "warning",
                f"{path}: the PreCompact hook's script {script} {state}: nothing is kept before compaction",
                f"create it as docs/integrations/claude-code.md shows, then "
                f"chmod +x {shlex.quote(str(script))}",
            )
        ]
    return []


# -- the home -----------------------------------------------------------------------------------
def check_home(ws: Workspace) -> list[dict]:
    out = []
    spaces = ws.home.workspaces()
    for name in ws.home.missing():
        out.append(
            finding(
                "home",
                "warning",
                f"workspace {name!r} is registered at {spaces[name]['path']}, which is "
                f"gone: cross-view messages and sibling search still reach for it",
                f"giok workspaces remove {name} (or restore the folder)",
            )
        )
    return out


# -- the always-injected tier -------------------------------------------------------------------
def check_boot(ws: Workspace) -> list[dict]:
    from giok.lifecycle import boot

    built = boot.build(ws, record=False)
    out = []
    if built.always_tokens > boot.ALWAYS_TARGET:
        out.append(
            finding(
                "boot",
                "warning",
                f"the always-injected tier (TIER 1 of AGENTS.md + SOUL.md + USER.md) is "
                f"{built.always_tokens} tokens, over the {boot.ALWAYS_TARGET}-token target: every "
                f"session pays for it",
                "shorten TIER 1, SOUL.md or USER.md; move detail to TIER 2 or "
                "to MEMORY.md, which boot fills by budget",
            )
        )
    return out  # TIER 1's rule count is Workspace.check's (check_files)
