#!/usr/bin/env bash
# The test command: formatting, lints, every Rust test in the workspace, then the OpenClaw
# plugin end to end against a real OpenClaw (Node 24 and openclaw from npm, cached under
# ~/.cache/memcc/e2e). Data-driven checks read ../shared/data/locomo when it exists and skip
# with a message otherwise. MEMCC_SKIP_E2E=1 skips the OpenClaw part.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
if [ "${MEMCC_SKIP_E2E:-0}" = "1" ]; then
  echo "SKIP: OpenClaw end-to-end test (MEMCC_SKIP_E2E=1)"
elif ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: OpenClaw end-to-end test (npm not found; it installs Node 24 and openclaw from npm)"
else
  bash scripts/e2e-openclaw.sh
fi
