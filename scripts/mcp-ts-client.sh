#!/usr/bin/env bash
# MemCC over MCP as the official TypeScript SDK's client sees it (npm @modelcontextprotocol/sdk,
# cached under ~/.cache/memcc/mcp-ts): `memcc mcp` over stdio, every tool listed, the schemas
# checked for one type and a description per argument, the tools called as a model would.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
SDK_VERSION=1.32.2
CACHE="$HOME/.cache/memcc/mcp-ts"
if [ ! -f "$CACHE/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  mkdir -p "$CACHE"
  (cd "$CACHE" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$SDK_VERSION")
fi
if [ -n "${MEMCC_CLI_BIN:-}" ] && [ -x "$MEMCC_CLI_BIN" ]; then
  BIN="$MEMCC_CLI_BIN"
else
  cargo build --locked -q -p memcc-cli
  BIN="$CARGO_TARGET_DIR/debug/memcc"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MEMCC_BIN="$BIN" MEMCC_HOME_DIR="$WORK/home" MEMCC_MCP_TS="$CACHE" node --test scripts/mcp/ts-client.test.mjs
