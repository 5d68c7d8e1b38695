#!/bin/sh
# Install giok's Claude Code plugin from this checkout and make giok Claude Code's one memory.
#
#   sh integrations/claude-code/install.sh
#
# 1. `claude plugin marketplace add <this folder>` and `claude plugin install giok@giok` (user
#    scope; both are no-ops when already done, and neither asks anything).
# 2. In Claude Code's user settings ($CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json),
#    merged into what is there (nothing else is changed):
#    - "autoMemoryEnabled": false — Claude Code's own file memory off (a plugin cannot set it);
#    - giok's read-only MCP tools in "permissions.allow" (a plugin cannot grant permissions):
#      memory writes keep asking.
# CLAUDE names the claude command (default: claude on PATH). Exits non-zero, saying why, when a
# step fails; the settings file is replaced atomically or not at all.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
claude=${CLAUDE:-claude}
"$claude" plugin marketplace add "$here"
"$claude" plugin install giok@giok
settings=${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json
python3 - "$settings" <<'PY'
import json, os, sys, tempfile

path = sys.argv[1]
READ_ONLY = [  # giok's tools with readOnlyHint (giok.edges.mcp.TOOLS), as Claude Code names a plugin's tools
    "mcp__plugin_giok_giok__" + name
    for name in (
        "memory_boot", "memory_recall", "memory_search", "memory_get", "memory_task_list",
        "memory_state_show", "memory_heartbeat_list", "memory_review", "memory_distill_plan",
        "crossview_inbox",
    )
]
try:
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
except FileNotFoundError:
    settings = {}
except ValueError as exc:
    sys.exit(f"giok: {path} is not valid JSON ({exc}); fix it, then run this again")
if not isinstance(settings, dict):
    sys.exit(f"giok: {path} does not hold a JSON object; fix it, then run this again")
settings["autoMemoryEnabled"] = False
permissions = settings.setdefault("permissions", {})
allow = permissions.setdefault("allow", [])
allow += [name for name in READ_ONLY if name not in allow]
os.makedirs(os.path.dirname(path), exist_ok=True)
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".settings.", suffix=".tmp")
with os.fdopen(fd, "w", encoding="utf-8") as handle:
    json.dump(settings, handle, indent=2)
    handle.write("\n")
os.replace(tmp, path)
print(f"giok: {path}: Claude Code's auto-memory off, giok's read-only tools allowed")
PY
