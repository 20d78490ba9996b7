#!/usr/bin/env bash
# Pack the OpenClaw plugin as npm tarballs, in the layout native Node modules use:
#   memcc-openclaw-plugin-<version>.tgz                  the plugin (JS, manifest), no binary
#   memcc-openclaw-plugin-<platform>-<version>.tgz       the prebuilt addon for one platform,
#                                                        an optional dependency of the first
# Builds this machine's platform (linux-x64-gnu here); other platforms: see docs/openclaw.md,
# "Building for another platform". Usage: scripts/pack-plugin.sh [OUT_DIR]
# (default $CARGO_TARGET_DIR/npm). Prints the two tarball paths, the plugin's first.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
OUT="$(mkdir -p "${1:-$CARGO_TARGET_DIR/npm}" && cd "${1:-$CARGO_TARGET_DIR/npm}" && pwd)"
# The loader's own rule (plugin/addon.js), so the package built here is the one it looks for.
suffix="$(node --input-type=module -e 'import { platformSuffix } from "./plugin/addon.js"; console.log(platformSuffix());')"
dir="plugin/npm/$suffix"
[ -f "$dir/package.json" ] || { echo "pack-plugin.sh: no platform package for $suffix yet ($dir/package.json is missing)" >&2; exit 1; }
bash scripts/build-plugin.sh >&2
cp plugin/memcc.node "$dir/memcc.$suffix.node"
rm -f "$OUT"/memcc-openclaw-plugin-*.tgz
platform_tgz="$(cd "$dir" && npm pack --silent --pack-destination "$OUT")"
plugin_tgz="$(cd plugin && npm pack --silent --pack-destination "$OUT")"
echo "$OUT/$plugin_tgz"
echo "$OUT/$platform_tgz"
