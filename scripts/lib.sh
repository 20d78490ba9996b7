# Helpers the test scripts share (source it from the repository root, with CARGO_TARGET_DIR set).

# npm package NAME@VERSION installed once into the cache directory DIR.
npm_cached() {
  local dir="$1" name="$2" version="$3"
  if [ ! -f "$dir/node_modules/$name/package.json" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm install --silent --no-audit --no-fund "$name@$version")
  fi
}

# The memcc binary to test: the one scripts/test.sh's test build made ($MEMCC_CLI_BIN), else
# one built here.
memcc_bin() {
  if [ -n "${MEMCC_CLI_BIN:-}" ] && [ -x "$MEMCC_CLI_BIN" ]; then
    echo "$MEMCC_CLI_BIN"
  else
    cargo build --locked -q -p memcc-cli >&2
    echo "$CARGO_TARGET_DIR/debug/memcc"
  fi
}
