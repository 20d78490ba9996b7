#!/usr/bin/env bash
# MemCC over MCP as the official TypeScript SDK's client sees it (npm @modelcontextprotocol/sdk,
# cached under ~/.cache/memcc/mcp-ts): `memcc mcp` over stdio, every tool listed, the schemas
# checked for one type and a description per argument, the tools called as a model would.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
. scripts/lib.sh
CACHE="$HOME/.cache/memcc/mcp-ts"
npm_cached "$CACHE" @modelcontextprotocol/sdk 1.32.2
BIN=$(memcc_bin)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MEMCC_BIN="$BIN" MEMCC_HOME_DIR="$WORK/home" MEMCC_MCP_TS="$CACHE" node --test scripts/mcp/ts-client.test.mjs
