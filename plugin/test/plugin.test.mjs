// The plugin's own host plumbing, with a fake addon standing in for the native one: what runs
// inside a host callback never throws into the host, the host's model is the session's own, a
// turn without an advancement key is refused, a deleted session is not flushed into memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import plugin, { testing } from "../index.js";
import { loadAddon, platformSuffix } from "../addon.js";

function fakeAddon() {
  const calls = [];
  return {
    calls,
    resolveHostCall: (id, ok, text, absent) => calls.push(["resolve", id, ok, text, absent]),
    flush: async (session) => {
      calls.push(["flush", JSON.parse(session)]);
      return JSON.stringify({ leafSummaries: 1 });
    },
    commitTurn: async () => JSON.stringify({ status: "committed" }),
    warnings: () => [],
    memoryPrompt: () => "memory prompt",
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

test("a host model that throws, or none at all, is answered with a failure, never thrown", async () => {
  const addon = fakeAddon();
  testing.setAddon(addon);
  assert.doesNotThrow(() => testing.hostComplete(JSON.stringify({ callId: 2, sessionId: "nobody", request: null })));
  testing.useHostModel({ sessionId: "s1", runtimeContext: { llm: { complete: () => { throw new Error("provider exploded"); } } } });
  assert.doesNotThrow(() => testing.hostComplete(JSON.stringify({ callId: 1, sessionId: "s1", request: { messages: [] } })));
  assert.doesNotThrow(() => testing.hostComplete("{not json"));
  await settle();
  const resolved = addon.calls.filter((c) => c[0] === "resolve");
  // No model is no failure (the addon pauses nothing); a model that throws failed.
  assert.deepEqual(resolved.map((c) => [c[1], c[2], c[4]]), [[2, false, true], [1, false, false]]);
  assert.match(resolved[0][3], /no host model for this session/);
  assert.match(resolved[1][3], /provider exploded/);
});

test("each session's summaries use that session's model, not the latest one", async () => {
  const addon = fakeAddon();
  testing.setAddon(addon);
  const asked = [];
  const llm = (name) => ({ complete: async () => { asked.push(name); return { text: `summary by ${name}` }; } });
  testing.useHostModel({ sessionId: "alice-s", runtimeContext: { llm: llm("alice-model") } });
  testing.useHostModel({ sessionId: "bob-s", runtimeContext: { llm: llm("bob-model") } });
  testing.hostComplete(JSON.stringify({ callId: 7, sessionId: "alice-s", request: { messages: [] } }));
  await settle();
  assert.deepEqual(asked, ["alice-model"]);
  assert.deepEqual(addon.calls.find((c) => c[0] === "resolve"), ["resolve", 7, true, "summary by alice-model", false]);
});

function registered(config = {}) {
  const hooks = {};
  let engineFactory;
  const api = {
    pluginConfig: config,
    logger: { info() {}, warn() {}, debug() {} },
    registerContextEngine: (_id, f) => { engineFactory = f; },
    registerMemoryCapability() {},
    registerTool() {},
    on: (name, f) => { hooks[name] = f; },
  };
  plugin.register(api);
  return { hooks, engine: engineFactory() };
}

test("a turn without an advancement key is refused instead of becoming the key \"undefined\"", async () => {
  testing.setAddon(fakeAddon());
  const { engine } = registered();
  await assert.rejects(engine.commitTurn({ sessionId: "s", messages: [] }), /advancementKey/);
  assert.deepEqual(await engine.commitTurn({ sessionId: "s", advancementKey: 0, messages: [] }), { status: "committed" });
});

test("a deleted session is not flushed into memory unless flushDeletedSessions", async () => {
  for (const [config, flushed] of [[{}, false], [{ flushDeletedSessions: true }, true]]) {
    const addon = fakeAddon();
    testing.setAddon(addon);
    const { hooks } = registered(config);
    await hooks.session_end({ sessionId: "gone", reason: "deleted" }, { agentId: "main" });
    assert.equal(addon.calls.some((c) => c[0] === "flush"), flushed, JSON.stringify(config));
  }
  const addon = fakeAddon();
  testing.setAddon(addon);
  const { hooks } = registered();
  await hooks.session_end({ sessionId: "over", reason: "reset" }, { agentId: "ops" });
  assert.deepEqual(addon.calls.find((c) => c[0] === "flush")[1], { sessionId: "over", sessionKey: null, agentId: "ops" });
});

test("one compaction per session at a time: a maintain() arriving meanwhile does not start another", async () => {
  const addon = fakeAddon();
  let running = 0;
  let most = 0;
  addon.compact = async () => {
    running += 1;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 30));
    running -= 1;
    return JSON.stringify({ compacted: true, reason: "done" });
  };
  testing.setAddon(addon);
  const { engine } = registered();
  const [a, b] = await Promise.all([engine.maintain({ sessionId: "m" }), engine.maintain({ sessionId: "m" })]);
  assert.equal(most, 1);
  assert.deepEqual([a.reason, b.reason].sort(), ["compaction already running", "done"]);
  const other = await Promise.all([engine.maintain({ sessionId: "m1" }), engine.maintain({ sessionId: "m2" })]);
  assert.deepEqual(other.map((o) => o.reason), ["done", "done"], "different sessions do not wait for each other");
});

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PKG = { name: "@memcc/openclaw-plugin", version: "0.1.0", optionalDependencies: { "@memcc/openclaw-plugin-linux-x64-gnu": "0.1.0" } };
const notFound = (name) => {
  throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
};

test("the addon comes from this platform's package; a missing, broken or mismatched one is a clear error", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memcc-addon-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const loaded = [];
  const fake = { version: () => "0.1.0" };
  const load = (name) => {
    loaded.push(name);
    return fake;
  };
  assert.equal(loadAddon({ dir, pkg: PKG, suffix: "linux-x64-gnu", load }), fake);
  assert.deepEqual(loaded, ["@memcc/openclaw-plugin-linux-x64-gnu"]);
  assert.throws(() => loadAddon({ dir, pkg: PKG, suffix: "linux-x64-gnu", load: notFound }), /^Error: memcc: \[addon_missing\] the native addon package @memcc\/openclaw-plugin-linux-x64-gnu is not installed: npm skips .*registry npm uses has @memcc\/openclaw-plugin-linux-x64-gnu@0\.1\.0.*reinstall the plugin/);
  assert.throws(() => loadAddon({ dir, pkg: PKG, suffix: "darwin-arm64", load: notFound }), /\[addon_missing\] .*openclaw-plugin-darwin-arm64 .*prebuilt addons for linux-x64-gnu; build one from source/);
  const dlopen = () => {
    throw Object.assign(new Error("/lib/libc.so.6: version `GLIBC_2.39' not found"), { code: "ERR_DLOPEN_FAILED" });
  };
  assert.throws(() => loadAddon({ dir, pkg: PKG, suffix: "linux-x64-gnu", load: dlopen }), /\[addon_load\] .*GLIBC_2\.39/);
  assert.throws(() => loadAddon({ dir, pkg: PKG, suffix: "linux-x64-gnu", load: () => ({ version: () => "0.0.9" }) }), /\[addon_version\] the native addon \(@memcc\/openclaw-plugin-linux-x64-gnu\) is version 0\.0\.9 but @memcc\/openclaw-plugin is 0\.1\.0/);
  assert.throws(() => loadAddon({ dir, pkg: PKG, suffix: "linux-x64-gnu", load: () => ({}) }), /\[addon_version\] .*version unknown \(built before addons reported their version\) but/);
  // A linked checkout without a build is told to build, not to reinstall.
  const checkout = fs.mkdtempSync(path.join(os.tmpdir(), "memcc-checkout-"));
  t.after(() => fs.rmSync(checkout, { recursive: true, force: true }));
  fs.mkdirSync(path.join(checkout, "crates", "memcc-node"), { recursive: true });
  fs.writeFileSync(path.join(checkout, "crates", "memcc-node", "Cargo.toml"), "");
  fs.mkdirSync(path.join(checkout, "plugin"));
  assert.throws(() => loadAddon({ dir: path.join(checkout, "plugin"), pkg: PKG, suffix: "linux-x64-gnu", load: notFound }), /\[addon_missing\] .*source checkout without a built addon: run scripts\/build-plugin\.sh/);
  // A source build beside the plugin (scripts/build-plugin.sh) is used first.
  fs.writeFileSync(path.join(dir, "memcc.node"), "");
  loadAddon({ dir, pkg: PKG, suffix: "linux-x64-gnu", load });
  assert.equal(loaded.at(-1), path.join(dir, "memcc.node"));
});

test("platform package names follow the usual native-module suffixes", () => {
  assert.equal(platformSuffix("linux", "x64", true), "linux-x64-gnu");
  assert.equal(platformSuffix("linux", "arm64", false), "linux-arm64-musl");
  assert.equal(platformSuffix("darwin", "arm64"), "darwin-arm64");
  assert.equal(platformSuffix("win32", "x64"), "win32-x64-msvc");
});

test("the plugin, its platform packages and the addon carry one version", () => {
  const version = /^version = "([^"]+)"/m.exec(fs.readFileSync(path.join(repo, "Cargo.toml"), "utf8"))[1];
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "plugin/package.json"), "utf8"));
  assert.equal(pkg.version, version, "plugin/package.json and the workspace (the addon's version)");
  const platforms = fs.readdirSync(path.join(repo, "plugin/npm"));
  assert.ok(platforms.includes("linux-x64-gnu"));
  for (const suffix of platforms) {
    const p = JSON.parse(fs.readFileSync(path.join(repo, "plugin/npm", suffix, "package.json"), "utf8"));
    assert.equal(p.name, `${pkg.name}-${suffix}`);
    assert.equal(p.version, version, p.name);
    assert.equal(pkg.optionalDependencies[p.name], version, `${p.name} is an exact optional dependency`);
    assert.deepEqual(p.files, [`memcc.${suffix}.node`]);
    assert.equal(p.main, `memcc.${suffix}.node`);
    assert.ok(p.os?.length && p.cpu?.length, `${p.name} names its os and cpu so npm installs it only there`);
  }
  assert.deepEqual(Object.keys(pkg.optionalDependencies).sort(), platforms.map((s) => `${pkg.name}-${s}`).sort());
  assert.deepEqual(pkg.openclaw.install.requiredPlatformPackages.sort(), Object.keys(pkg.optionalDependencies).sort());
  // The context engine says the same version, not a number written by hand.
  assert.equal(testing.contextEngine({}).info.version, version, "contextEngine.info.version");
  assert.ok(!pkg.files.some((f) => f.endsWith(".node")), "the plugin package carries no binary");
});

test("the tools are the addon's catalogue: its names, descriptions and schemas, run by the plugin", async () => {
  const addon = fakeAddon();
  addon.memorySearch = async (agent, args) => {
    addon.calls.push(["search", agent, JSON.parse(args)]);
    return "[]";
  };
  testing.setAddon(addon);
  const schema = { type: "object", properties: { query: { type: "string" }, maxResults: { type: "integer", maximum: 100 } } };
  const [search] = testing.tools({}, [{ name: "memory_search", description: "from Rust", parameters: schema }]);
  assert.equal(search.description, "from Rust");
  assert.deepEqual(search.parameters, schema);
  await search.execute({ agentId: "ops" })("call-1", { query: "boat" });
  // The arguments go to the engine as given: its defaults and limits apply there.
  assert.deepEqual(addon.calls.find((c) => c[0] === "search"), ["search", "ops", { query: "boat" }]);
  assert.throws(() => testing.tools({}, [{ name: "memory_teleport", description: "", parameters: {} }]), /\[addon_version\].*memory_teleport/);
});

test("data follows the host's state dir unless MEMCC_HOME or dataDir say otherwise", () => {
  const saved = process.env.MEMCC_HOME;
  delete process.env.MEMCC_HOME;
  try {
    assert.equal(testing.engineConfig({}, null, "/srv/openclaw-work").dataDir, "/srv/openclaw-work/memcc");
    assert.equal(testing.engineConfig({ dataDir: "/data/memcc" }, null, "/srv/openclaw-work").dataDir, "/data/memcc");
    assert.equal(testing.hostStateDir({ runtime: { state: { resolveStateDir: () => "/srv/profile-b" } } }), "/srv/profile-b");
    const throwing = { runtime: { state: { resolveStateDir: () => { throw new Error("no"); } } } };
    assert.equal(testing.hostStateDir(throwing), process.env.OPENCLAW_STATE_DIR || path.join(os.homedir(), ".openclaw"));
    process.env.MEMCC_HOME = "/home/u/memcc";
    assert.equal(testing.engineConfig({}, null, "/srv/openclaw-work").dataDir, undefined, "MEMCC_HOME is the engine's own default");
  } finally {
    if (saved === undefined) delete process.env.MEMCC_HOME;
    else process.env.MEMCC_HOME = saved;
  }
});

test("a missing addon fails the plugin's registration with its reason, before any turn", () => {
  const api = { pluginConfig: {}, logger: { warn() {} }, registerContextEngine() { throw new Error("registered anyway"); } };
  const missing = () => {
    throw new Error("memcc: [addon_missing] the native addon package @memcc/openclaw-plugin-linux-x64-gnu is not installed");
  };
  assert.throws(() => testing.registerWithLoader(api, missing), /\[addon_missing\]/);
});

test("an older store in ~/.openclaw/memcc, unused since data follows the state dir, is reported", () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "memcc-home-"));
  const savedHome = process.env.HOME;
  process.env.HOME = home;
  try {
    const state = path.join(home, "profile-b");
    assert.equal(testing.legacyStore(path.join(state, "memcc")), null, "no older store: nothing to say");
    fs.mkdirSync(path.join(home, ".openclaw", "memcc"), { recursive: true });
    fs.writeFileSync(path.join(home, ".openclaw", "memcc", "context.db"), "");
    assert.match(testing.legacyStore(path.join(state, "memcc")), /an older MemCC store is at .*\.openclaw\/memcc and is not used/);
    assert.equal(testing.legacyStore(path.join(home, ".openclaw", "memcc")), null, "the default state dir is that store");
    fs.mkdirSync(path.join(state, "memcc"), { recursive: true });
    fs.writeFileSync(path.join(state, "memcc", "memory.db"), "");
    assert.equal(testing.legacyStore(path.join(state, "memcc")), null, "the new place is in use: nothing to say");
  } finally {
    process.env.HOME = savedHome;
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test("two copies of the plugin in one process share one addon, one engine and the hosts' models", async () => {
  // OpenClaw loads a plugin from several capture directories in one gateway; each copy of the
  // addon would bring its own SQLite, blind to the other's file locks.
  const second = await import("../index.js?second-copy");
  const addon = fakeAddon();
  testing.setAddon(addon);
  second.testing.useHostModel({ sessionId: "s2", runtimeContext: { llm: { complete: async () => ({ text: "by the host" }) } } });
  testing.hostComplete(JSON.stringify({ callId: 9, sessionId: "s2", request: { messages: [] } }));
  await settle();
  assert.deepEqual(addon.calls.find((c) => c[0] === "resolve"), ["resolve", 9, true, "by the host", false]);
  let loads = 0;
  const api = { pluginConfig: {}, logger: { warn() {} }, registerContextEngine() {}, registerMemoryCapability() {}, registerTool() {}, on() {} };
  second.testing.registerWithLoader(api, () => {
    loads += 1;
    return { MemccNative: null, toolCatalogue: () => "[]" };
  });
  assert.equal(loads, 1, "registering loads the addon when no copy has");
});

test("the manifest parses and declares both slots and the four tools", () => {
  const dir = path.dirname(fileURLToPath(import.meta.url));
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "..", "openclaw.plugin.json"), "utf8"));
  assert.equal(manifest.id, "memcc");
  assert.deepEqual([...manifest.kind].sort(), ["context-engine", "memory"]);
  assert.deepEqual(manifest.contracts.tools, ["memory_search", "memory_get", "lcm_grep", "lcm_expand_query"]);
  assert.equal(manifest.configSchema.additionalProperties, false);
});

test("a memory snippet is cut between characters, never inside a surrogate pair", () => {
  const text = "a".repeat(699) + "😀" + "tail";
  const snippet = testing.firstChars(text, 700);
  assert.equal(snippet, "a".repeat(699) + "😀", "the emoji whole, as the 700th character");
  assert.ok(!/[\uD800-\uDBFF]$/.test(testing.firstChars(text, 700)), "no lone high surrogate at the end");
  assert.equal(testing.firstChars("short", 700), "short");
});
