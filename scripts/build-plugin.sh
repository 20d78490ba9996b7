#!/usr/bin/env bash
# Build the native addon (release, debug info stripped: ~14 MB instead of ~70 MB) into
# plugin/memcc.node, so the plugin directory is installable from source:
#   openclaw plugins install -l plugin --force --accept-capabilities
# `--with-cli` builds the memcc CLI in the same cargo invocation. (Cargo compiles a dependency
# once per feature set; crates/memcc-workspace-hack pins one set for every crate, so a later
# CLI build, `cargo install` included, reuses what this one compiled.)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
packages=(-p memcc-node)
[ "${1:-}" = "--with-cli" ] && packages+=(-p memcc-cli)
cargo build --release --locked "${packages[@]}"
# Release keeps line tables for profiling the CLI; the shipped addon does not need them (and
# OpenClaw keeps copies of plugin files under its state dir).
strip --strip-debug -o plugin/memcc.node "$CARGO_TARGET_DIR/release/libmemcc_node.so"
echo "plugin ready in $PWD/plugin ($(du -h plugin/memcc.node | cut -f1) addon)"
