#!/usr/bin/env bash
# The test command: formatting, lints, and every test in the workspace.
# Data-driven checks read ../shared/data/locomo when it exists and skip with a message otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
