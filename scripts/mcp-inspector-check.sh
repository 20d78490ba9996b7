#!/usr/bin/env bash
# MemCC's tools as the official MCP Inspector's CLI judges them (npm @modelcontextprotocol/inspector,
# cached under ~/.cache/memcc/mcp-inspector, on Node 24): `tools/list --strict` reports every
# schema portability problem a client may trip over; MemCC must have none, of any severity.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
. scripts/lib.sh
NODE_BIN=$(node24_bin)
export PATH="$NODE_BIN:$PATH"
CACHE="$HOME/.cache/memcc/mcp-inspector"
npm_cached "$CACHE" @modelcontextprotocol/inspector 2.12.0
BIN=$(memcc_bin)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
status=0
"$CACHE/node_modules/.bin/mcp-inspector" --cli \
  -e "MEMCC_HOME=$WORK/home" ${MEMCC_MODEL_DIR:+-e "MEMCC_MODEL_DIR=$MEMCC_MODEL_DIR"} \
  --method tools/list --strict "$BIN" mcp >"$WORK/tools.json" 2>"$WORK/strict.txt" || status=$?
# The server's own log (timestamped lines, e.g. "no local model") comes through on stderr too.
grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$WORK/strict.txt" >"$WORK/problems.txt" || true
if [ "$status" != 0 ] || [ -s "$WORK/problems.txt" ]; then
  echo "FAIL: the MCP Inspector's strict check (exit $status) reports:" >&2
  cat "$WORK/problems.txt" >&2
  exit 1
fi
tools=$(node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tools; console.log(t.length)' "$WORK/tools.json")
[ "$tools" -ge 10 ] || { echo "FAIL: the MCP Inspector listed $tools tools" >&2; cat "$WORK/tools.json" >&2; exit 1; }
echo "MCP Inspector --strict: $tools tools, no portability problem"
