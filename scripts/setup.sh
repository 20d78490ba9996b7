#!/usr/bin/env bash
# Set up MemCC on this machine and run the main job on the embedded defaults:
# build the release binary, then run the demo (a long conversation compacted within a small
# budget, exact details recovered from the summary DAG).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

echo "==> building memcc (release)"
cargo build --release --locked -p memcc-cli
BIN="$CARGO_TARGET_DIR/release/memcc"

echo "==> running the demo"
"$BIN" demo

echo "==> done: $BIN is ready (try '$BIN --help'; data lives in \${MEMCC_HOME:-~/.openclaw/memcc})"
