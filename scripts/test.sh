#!/usr/bin/env bash
# The test command: formatting, lints, every Rust test in the workspace (the MCP one with the
# official Python MCP client from PyPI, in ~/.cache/memcc/mcp-venv; the TypeScript SDK's client
# and the MCP Inspector's strict schema check run after the inspector, from npm in
# ~/.cache/memcc/mcp-ts and ~/.cache/memcc/mcp-inspector), then the OpenClaw
# plugin end to end against a real OpenClaw (Node 24 and openclaw from npm, cached under
# ~/.cache/memcc/e2e), and the inspector (memcc ui) in Debian's headless Chromium. The PostgreSQL
# memory backend's tests run against a real PostgreSQL + pgvector that scripts/pg-server.sh starts
# from a PyPI wheel (unless MEMCC_TEST_PG_URL names a server already). Data-driven
# checks read ../shared/data/locomo when it exists and skip with a message otherwise (under
# CI=true every skip is a failure). MEMCC_SKIP_E2E=1 skips the OpenClaw part. Under CI=true (or
# with MEMCC_INSTALL_CHECK=1) it also installs the CLI as the README says: the wheel, then `cargo install`.
set -euo pipefail
cd "$(dirname "$0")/.."
# One target dir for every step below (the scripts they call default to it too).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# Each step says how long it took, so a slow CI run shows where its time went.
step_start=$SECONDS
took() {
  echo "==> $1: $((SECONDS - step_start)) s (${SECONDS} s in all)"
  step_start=$SECONDS
}
cargo fmt --all --check
# `--features memcc-cli/bench`: the benchmark harness is built and checked too (`cargo install` leaves it out).
cargo clippy --workspace --all-targets --locked --features memcc-cli/bench -- -D warnings
took "fmt and clippy"
# The official Python MCP client for the MCP test (a venv from PyPI, made once).
if MCP_PY=$(bash scripts/mcp-client.sh); then
  export MEMCC_MCP_PYTHON="$MCP_PY"
else
  echo "WARN: no Python MCP client; the MCP test will skip (and fail under CI=true)" >&2
fi
took "the MCP client"
# A throwaway PostgreSQL with pgvector for the PostgreSQL backend's tests.
if [ -z "${MEMCC_TEST_PG_URL:-}" ]; then
  pg_dir="$(mktemp -d)"
  if pg_env=$(bash scripts/pg-server.sh start "$pg_dir"); then
    eval "$pg_env"
    trap 'bash scripts/pg-server.sh stop "$pg_dir"; rm -rf "$pg_dir"' EXIT
  else
    echo "WARN: no PostgreSQL server; the PostgreSQL tests will skip (and fail under CI=true)" >&2
  fi
fi
took "PostgreSQL"
# A test that hangs (a server gone silent) fails the run with a message instead of holding it
# until CI's limit; the bound covers compiling too (about 10 minutes on a clean 2-core machine).
test_limit="${MEMCC_TEST_TIMEOUT:-45m}"
if timeout -k 30s "$test_limit" cargo test --workspace --locked --features memcc-cli/bench; then :; else
  rc=$?
  [ "$rc" = 124 ] && echo "FAIL: cargo test ran past $test_limit (MEMCC_TEST_TIMEOUT); a test hangs" >&2
  exit "$rc"
fi
took "cargo test (build and run)"
# The CLI that build made, for the inspector's test: building `-p memcc-cli` alone resolves
# features differently from the workspace and would compile MemCC's crates (cold: some
# registry crates too) a second time.
export MEMCC_CLI_BIN="$CARGO_TARGET_DIR/debug/memcc"
# Under CI=true nothing skips: a missing prerequisite fails the run.
skip() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: CI=true and $1: checks may not skip in CI" >&2
    exit 1
  fi
  echo "SKIP: $1"
}
if [ "${MEMCC_SKIP_E2E:-0}" = "1" ]; then
  skip "OpenClaw end-to-end test (MEMCC_SKIP_E2E=1)"
elif ! command -v npm >/dev/null 2>&1; then
  skip "OpenClaw end-to-end test (npm not found; it installs Node 24 and openclaw from npm)"
else
  bash scripts/e2e-openclaw.sh
  took "OpenClaw end to end (addon build included)"
fi
# The inspector (memcc ui) in a real headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  skip "inspector browser test (no chromium; on Debian: apt-get install chromium)"
elif ! command -v npm >/dev/null 2>&1; then
  skip "inspector browser test (npm not found; it installs playwright-core from npm)"
else
  bash scripts/inspector-browser.sh
  took "inspector in Chromium"
fi
# MemCC over MCP through the official TypeScript SDK's client (the Python one runs in cargo test).
if ! command -v npm >/dev/null 2>&1; then
  skip "MCP checks with the TypeScript SDK and the MCP Inspector, and the host configs (npm not found; they install from npm)"
else
  bash scripts/mcp-ts-client.sh
  took "MCP with the TypeScript SDK"
  # The MCP Inspector's CLI judges the tool schemas' portability: nothing to report, of any severity.
  bash scripts/mcp-inspector-check.sh
  took "MCP Inspector --strict"
  # What `memcc setup` writes, read by what Claude Code and Codex publish (types, Codex itself).
  bash scripts/host-config-check.sh
  took "host configs (Claude Code types, Codex itself)"
fi
# The CLI as users install it — the Python wheel (`pipx install memcc` / `pip install memcc`),
# then `cargo install --path crates/memcc-cli` — each into a throwaway place, then, in a clean
# HOME, `memcc model fetch` and the demo. Last, in the target dir the addon's release build
# used: crates/memcc-workspace-hack makes the CLI and the addon resolve the same dependency
# features, so it compiles only what the CLI adds (its servers, clap) and reuses the rest,
# MemCC's library crates included; the wheel and `cargo install` build the same binary once.
if [ "${CI:-}" = "true" ] || [ "${MEMCC_INSTALL_CHECK:-0}" = "1" ]; then
  root="$(mktemp -d)"
  install_target="${MEMCC_INSTALL_TARGET:-$CARGO_TARGET_DIR}"
  # An installed memcc in a clean HOME, as a new user has it: no lab harness; it fetches its
  # model from PyPI, then runs the demo on it.
  check_installed() {
    local bin="$1" how="$2" home
    home="$(mktemp -d -p "$root")"
    "$bin" --version
    if "$bin" bench --help >/dev/null 2>&1; then
      echo "FAIL: the $how memcc has the bench subcommand (a --features bench build)" >&2
      exit 1
    fi
    local clean=(env -u MEMCC_MODEL_DIR -u MEMCC_HOME -u OPENCLAW_STATE_DIR HOME="$home")
    "${clean[@]}" "$bin" model fetch
    "${clean[@]}" "$bin" model status >/dev/null
    "${clean[@]}" "$bin" demo >"$root/demo.txt"
    grep -q "embedder: usem3" "$root/demo.txt" || { echo "FAIL: the $how demo did not run on the fetched model" >&2; exit 1; }
    grep -q "LH 1174" "$root/demo.txt" || { echo "FAIL: the $how memcc did not run its demo" >&2; exit 1; }
  }
  wheel=$(CARGO_TARGET_DIR="$install_target" bash scripts/package.sh wheel "$root/wheels")
  python3 -m venv "$root/venv"
  "$root/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
  check_installed "$root/venv/bin/memcc" "wheel-installed"
  took "wheel install check ($(basename "$wheel"))"
  CARGO_TARGET_DIR="$install_target" cargo install --quiet --locked --path crates/memcc-cli --root "$root/cargo"
  check_installed "$root/cargo/bin/memcc" "cargo-installed"
  rm -rf "$root"
  took "cargo install check"
else
  echo "SKIP: install checks (CI=true or MEMCC_INSTALL_CHECK=1 runs them)"
fi
