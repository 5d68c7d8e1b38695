#!/bin/sh
# Install giok's OpenClaw plugin from this checkout as OpenClaw's memory, without a terminal.
#
#   sh integrations/openclaw/install.sh WORKSPACE [AGENT]
#
# WORKSPACE is the giok workspace (name or path) of OpenClaw agent AGENT (default: main).
# `openclaw plugins install` asks before it installs from a local path, and without a terminal
# to confirm it cancels: --force is that confirmation (this folder is the source you chose),
# --accept-capabilities accepts what openclaw.plugin.json declares. Then memory-core is
# disabled, giok-memory takes the memory slot, may read the model's token counts (llm_output),
# and is told the workspace. Nothing here prompts. OPENCLAW names the openclaw command
# (default: openclaw on PATH); OPENCLAW_STATE_DIR etc. are OpenClaw's own.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: sh $0 WORKSPACE [AGENT]   (the giok workspace of OpenClaw agent AGENT, default main)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
workspace=$1
agent=${2:-main}
openclaw=${OPENCLAW:-openclaw}
settings=$(python3 -c '
import json, sys
workspace, agent = sys.argv[1:]
print(json.dumps([
    {"path": "plugins.entries.memory-core.enabled", "value": False},
    {"path": "plugins.slots.memory", "value": "giok-memory"},
    {"path": "plugins.entries.giok-memory.hooks.allowConversationAccess", "value": True},
    {"path": "plugins.entries.giok-memory.config", "value": {"workspace": workspace, "agents": {agent: workspace}}},
]))' "$workspace" "$agent")
$openclaw plugins install --link --accept-capabilities --force "$here" </dev/null
$openclaw config set --batch-json "$settings" </dev/null
echo "giok: giok-memory is OpenClaw's memory (workspace $workspace for agent $agent); restart the gateway to load it"
