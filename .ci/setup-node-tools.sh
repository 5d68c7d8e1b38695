#!/usr/bin/env bash
# Install the real clients the integration tests drive into .tools/ at the repo root:
# the Claude Code CLI and the MCP Inspector (npm registry). Idempotent and quiet; never fails
# the CI: without node/npm or the network it prints a warning and the tests that need the
# clients skip with a stated reason.
cd "$(dirname "$0")/.." || exit 0
TOOLS=.tools
PACKAGES=("@anthropic-ai/claude-code@2.1.197" "@modelcontextprotocol/inspector@0.15.0")  # the versions the tests were written against
BINS=(claude mcp-inspector)

have_all() {
  local b
  for b in "${BINS[@]}"; do [ -x "$TOOLS/node_modules/.bin/$b" ] || return 1; done
}

if have_all; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "warning: node/npm not found; the Claude Code and MCP Inspector tests will be skipped" >&2
  exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 18 ]; then
  echo "warning: node $(node --version) is older than 18 (both clients need >= 18); their tests will be skipped" >&2
  exit 0
fi
mkdir -p "$TOOLS"
[ -f "$TOOLS/package.json" ] || printf '{"private": true}\n' > "$TOOLS/package.json"
if ! npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}" >"$TOOLS/npm.log" 2>&1; then
  echo "warning: could not install ${PACKAGES[*]} (offline?); see $TOOLS/npm.log; their tests will be skipped" >&2
  exit 0
fi
have_all || echo "warning: npm finished but ${BINS[*]} are not all in $TOOLS/node_modules/.bin; their tests will be skipped" >&2
exit 0
