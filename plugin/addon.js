// Finding the native addon. A published install carries it in a per-platform package
// (@memcc/openclaw-plugin-<platform>, an optional dependency npm installs only on its own
// platform); a source build puts memcc.node beside this file (scripts/build-plugin.sh). Either
// way the addon must be the version of this package: a mismatched addon is refused, not run.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import fs from "node:fs";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const PACKAGE = require("./package.json");

/** This plugin's version: its package's, which is the addon's and the workspace's (a test checks). */
export const PLUGIN_VERSION = PACKAGE.version;

function hasGlibc() {
  try {
    return Boolean(process.report?.getReport?.().header?.glibcVersionRuntime);
  } catch {
    return false;
  }
}

/** This machine's platform-package suffix, e.g. "linux-x64-gnu", "darwin-arm64", "win32-x64-msvc". */
export function platformSuffix(platform = process.platform, arch = process.arch, glibc = platform === "linux" && hasGlibc()) {
  if (platform === "linux") return `linux-${arch}-${glibc ? "gnu" : "musl"}`;
  if (platform === "win32") return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** A failure to load the addon, with a stable code (`memcc: [code] …`) like the addon's own errors. */
function failure(code, message, cause) {
  return Object.assign(new Error(`memcc: [${code}] ${message}`, { cause }), { code: `MEMCC_${code.toUpperCase()}` });
}

/**
 * Load the addon for this machine and check its version. `options` exist for the tests: the
 * plugin directory, its package.json, the require function and the platform suffix.
 */
export function loadAddon({ dir = here, pkg = PACKAGE, load = require, suffix = platformSuffix() } = {}) {
  const local = path.join(dir, "memcc.node");
  const platformPackage = `${pkg.name}-${suffix}`;
  let addon;
  let from;
  if (fs.existsSync(local)) {
    addon = load(local);
    from = local;
  } else {
    try {
      addon = load(platformPackage);
      from = platformPackage;
    } catch (e) {
      if (e?.code !== "MODULE_NOT_FOUND") {
        throw failure("addon_load", `${platformPackage} is installed but its addon did not load on ${suffix}: ${e?.message ?? e}`, e);
      }
      const shipped = Object.keys(pkg.optionalDependencies ?? {}).map((n) => n.slice(pkg.name.length + 1));
      // A checkout of the repository (the plugin linked with `plugins install -l`) builds its own.
      const checkout = fs.existsSync(path.join(dir, "..", "crates", "memcc-node", "Cargo.toml"));
      const hint = checkout
        ? `this is a source checkout without a built addon: run scripts/build-plugin.sh (it writes ${local})`
        : shipped.includes(suffix)
        ? `npm skips an optional dependency it cannot fetch without failing the install, so check that the registry npm uses has ${platformPackage}@${pkg.version} (and that optional dependencies are not omitted), then reinstall the plugin`
        : `MemCC publishes prebuilt addons for ${shipped.join(", ") || "no platform"}; build one from source for ${suffix} (see docs/openclaw.md, "Building for another platform")`;
      throw failure("addon_missing", `the native addon package ${platformPackage} is not installed: ${hint}`, e);
    }
  }
  const version = typeof addon?.version === "function" ? addon.version() : "unknown (built before addons reported their version)";
  if (version !== pkg.version) {
    throw failure(
      "addon_version",
      `the native addon (${from}) is version ${version} but ${pkg.name} is ${pkg.version}; install ${platformPackage}@${pkg.version} (reinstall the plugin) or rebuild it with scripts/build-plugin.sh`,
    );
  }
  return addon;
}
