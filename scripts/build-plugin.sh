#!/usr/bin/env bash
# Build the native addon and place it in plugin/ (memcc.node) so the directory is installable:
#   openclaw plugins install -l plugin --force --accept-capabilities
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release --locked -p memcc-node
cp "$CARGO_TARGET_DIR/release/libmemcc_node.so" plugin/memcc.node
echo "plugin ready in $PWD/plugin"
