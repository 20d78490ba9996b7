#!/usr/bin/env bash
# End-to-end test of the OpenClaw plugin against a real OpenClaw: installs Node 24 and
# openclaw@2026.9.6 from npm into a cache dir (reused between runs), packs the plugin as npm
# tarballs (scripts/pack-plugin.sh: the plugin and its linux-x64 platform package), and runs
# plugin/test/plugin.test.mjs (the plugin's own plumbing, a fake addon) and plugin/test/e2e.test.mjs
# with Node's test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${MEMCC_E2E_CACHE:-$HOME/.cache/memcc/e2e}"
OPENCLAW_VERSION=2026.9.6
mkdir -p "$CACHE"
. scripts/lib.sh
NODE24_BIN_DIR=$(MEMCC_E2E_CACHE="$CACHE" node24_bin)
export NODE24_BIN_DIR
if [ ! -x "$CACHE/openclaw/node_modules/.bin/openclaw" ]; then
  echo "==> installing openclaw@$OPENCLAW_VERSION"
  rm -rf "$CACHE/openclaw" && mkdir -p "$CACHE/openclaw"
  (cd "$CACHE/openclaw" && PATH="$NODE24_BIN_DIR:$PATH" npm install --silent --no-audit --no-fund "openclaw@$OPENCLAW_VERSION")
fi
export OPENCLAW_BIN="$CACHE/openclaw/node_modules/.bin/openclaw"
mapfile -t tarballs < <(PATH="$NODE24_BIN_DIR:$PATH" bash scripts/pack-plugin.sh)
[ "${#tarballs[@]}" = 2 ] || { echo "e2e-openclaw.sh: packing the plugin failed" >&2; exit 1; }
export MEMCC_PLUGIN_TGZ="${tarballs[0]}" MEMCC_PLATFORM_TGZ="${tarballs[1]}"
"$NODE24_BIN_DIR/node" --test plugin/test/plugin.test.mjs plugin/test/e2e.test.mjs
