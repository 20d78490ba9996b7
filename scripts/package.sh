#!/usr/bin/env bash
# Build what users install.
#   scripts/package.sh wheel [OUT_DIR]   the `memcc` CLI as a Python wheel for this platform
#                                         (maturin, `bindings = "bin"`: see pyproject.toml), into
#                                         OUT_DIR (default: $CARGO_TARGET_DIR/wheels); prints its path.
# maturin comes from PyPI into a venv made once under ~/.cache/memcc/maturin-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
MATURIN_VERSION=1.16.0

maturin() {
  local venv="${MEMCC_MATURIN_VENV:-$HOME/.cache/memcc/maturin-venv}"
  if ! "$venv/bin/maturin" --version 2>/dev/null | grep -q " $MATURIN_VERSION\$"; then
    local py
    py=$(command -v python3 || command -v python) || { echo "python3 is needed to build the wheel" >&2; exit 1; }
    "$py" -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" >&2
  fi
  "$venv/bin/maturin" "$@"
}

case "${1:-}" in
  wheel)
    out="${2:-$CARGO_TARGET_DIR/wheels}"
    mkdir -p "$out"
    # --locked: the wheel is built from Cargo.lock, as CI tests it. The platform tag is the
    # oldest manylinux the binary's glibc symbols allow (maturin checks them).
    maturin build --release --locked --quiet --out "$out" >&2
    ls -t "$out"/memcc-*.whl | head -n 1
    ;;
  *)
    echo "usage: scripts/package.sh wheel [OUT_DIR]" >&2
    exit 2
    ;;
esac
