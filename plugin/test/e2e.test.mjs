// End to end against a real OpenClaw (npm openclaw@2026.9.6) on Node 24: the plugin installs
// from its npm-pack tarball (its platform package resolved by OpenClaw's npm from a local
// registry, as from the public npm registry), keeps its data in the host's state dir, and loads in both slots
// with its four tools, turns persist through commitTurn, compaction
// puts summaries in the prompt with the lcm_grep hint, a grep → expand tool chain recovers an
// exact phrase, a session deleted through a running gateway ends without being flushed into
// memory (session_end; what a user deletes is not remembered),
// and a new session recalls a fact from the first one.
// Needs: OPENCLAW_BIN (openclaw executable), NODE24_BIN_DIR (a Node 24 bin dir), and the packed
// tarballs MEMCC_PLUGIN_TGZ and MEMCC_PLATFORM_TGZ (scripts/pack-plugin.sh).
// scripts/e2e-openclaw.sh sets all of that up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const openclaw = process.env.OPENCLAW_BIN;
const pluginTgz = process.env.MEMCC_PLUGIN_TGZ;
const platformTgz = process.env.MEMCC_PLATFORM_TGZ;
const nodeBin = process.env.NODE24_BIN_DIR;

const state = fs.mkdtempSync(path.join(os.tmpdir(), "memcc-e2e-"));
// The host's state (its npm tree, ~75 MB) goes when this file's process ends, after every
// server the tests started was stopped; MEMCC_KEEP_E2E_STATE=1 keeps it to look into.
process.on("exit", () => {
  if (process.env.MEMCC_KEEP_E2E_STATE === "1") console.error(`e2e: OpenClaw state kept in ${state}`);
  else fs.rmSync(state, { recursive: true, force: true });
});
const log = path.join(state, "mock.jsonl");
const registryLog = path.join(state, "registry.jsonl");
// MemCC's data, where the plugin puts it by default: memcc/ in the host's state dir.
const dataDir = path.join(state, "memcc");
const flags = path.join(state, "mock-flags");
const env = {
  ...process.env,
  PATH: `${nodeBin}:${process.env.PATH}`,
  OPENCLAW_STATE_DIR: state,
  OPENCLAW_CONFIG_PATH: path.join(state, "openclaw.json"),
  NO_COLOR: "1",
  // OpenClaw runs npm (pack, install) against the local registry: an npm cache of this test's
  // own, so another npm on the machine holding ~/.npm's locks cannot stall it past OpenClaw's
  // 60 s limit, and no update check.
  npm_config_cache: path.join(state, "npm-cache"),
  npm_config_update_notifier: "false",
};
delete env.MEMCC_HOME;

function run(args, runEnv = env) {
  const r = spawnSync(openclaw, args, { env: runEnv, encoding: "utf8", timeout: 180_000 });
  return { code: r.status, signal: r.signal, error: r.error, out: r.stdout ?? "", err: r.stderr ?? "" };
}

function requests() {
  if (!fs.existsSync(log)) return [];
  return fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** A summarisation request: MemCC's summary prompts open the system message. */
const isSummaryRequest = (r) => /^(You summarise|Compress)/.test(r.body.messages?.find((m) => m.role === "system")?.content ?? "");

function agentRequests() {
  return requests().filter((r) => Array.isArray(r.body.tools) && r.body.tools.length > 0);
}

let mock;
let port;
// The installed plugin's directory and its addon (from the platform package), set by the install step.
let installedDir;
let addonPath;
const addon = () => createRequire(import.meta.url)(addonPath);

/** Start a child that prints `<TAG> <port>` and resolve that port. */
function listening(child, tag) {
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      const m = String(d).match(new RegExp(`${tag} (\\d+)`));
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (c) => reject(new Error(`${tag}: exited ${c}`)));
  });
}

/** A port nothing listens on right now (for the gateway). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
    srv.on("error", reject);
  });
}

test("MemCC in a real OpenClaw", { timeout: 900_000 }, async (t) => {
  assert.ok(openclaw && nodeBin && pluginTgz && platformTgz, "OPENCLAW_BIN, NODE24_BIN_DIR, MEMCC_PLUGIN_TGZ and MEMCC_PLATFORM_TGZ must be set (scripts/e2e-openclaw.sh)");
  const registry = spawn(path.join(nodeBin, "node"), [path.join(here, "registry.mjs"), pluginTgz, platformTgz], { env: { ...env, REGISTRY_LOG: registryLog } });
  t.after(() => registry.kill());
  env.npm_config_registry = `http://127.0.0.1:${await listening(registry, "REGISTRY_LISTENING")}/`;
  mock = spawn(path.join(nodeBin, "node"), [path.join(here, "mock-llm.mjs")], { env: { ...env, MOCK_LOG: log, MOCK_FLAGS: flags } });
  port = await listening(mock, "MOCK_LISTENING");
  t.after(() => mock.kill());
  fs.writeFileSync(env.OPENCLAW_CONFIG_PATH, "{}");

  await t.test("without its platform package on the registry, the plugin fails to load and says why", async () => {
    // npm skips an optional dependency it cannot fetch, so the install itself succeeds.
    const empty = spawn(path.join(nodeBin, "node"), [path.join(here, "registry.mjs")], { env });
    t.after(() => empty.kill());
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "memcc-e2e-missing-"));
    const otherEnv = { ...env, OPENCLAW_STATE_DIR: other, OPENCLAW_CONFIG_PATH: path.join(other, "openclaw.json"), npm_config_registry: `http://127.0.0.1:${await listening(empty, "REGISTRY_LISTENING")}/` };
    fs.writeFileSync(otherEnv.OPENCLAW_CONFIG_PATH, "{}");
    const install = run(["plugins", "install", `npm-pack:${pluginTgz}`, "--force", "--accept-capabilities"], otherEnv);
    assert.equal(install.code, 0, install.err);
    const inspect = run(["plugins", "inspect", "memcc", "--runtime", "--json"], otherEnv);
    const info = JSON.parse(inspect.out.slice(inspect.out.indexOf("{")));
    assert.equal(info.plugin.status, "error");
    assert.match(String(info.plugin.error), /memcc: \[addon_missing\] .*@memcc\/openclaw-plugin-linux-x64-gnu@0\.1\.0/);
    empty.kill();
    fs.rmSync(other, { recursive: true, force: true });
  });

  await t.test("installs from the packed tarball and loads in both slots with four tools", () => {
    const install = run(["plugins", "install", `npm-pack:${pluginTgz}`, "--force", "--accept-capabilities"]);
    assert.equal(install.code, 0, install.err + install.out);
    const fetched = fs.readFileSync(registryLog, "utf8");
    assert.match(fetched, /openclaw-plugin-linux-x64-gnu/, "OpenClaw's npm resolved the platform package from the registry");
    // OpenClaw's bundled memory-core keeps registering memory_search/memory_get after another
    // plugin takes the memory slot, and an installed (not linked) plugin loads after the
    // bundled ones, so memory-core's tools would win the name conflict: the README's install
    // step disables it.
    const disable = run(["plugins", "disable", "memory-core"]);
    assert.equal(disable.code, 0, disable.err + disable.out);
    const config = JSON.parse(fs.readFileSync(env.OPENCLAW_CONFIG_PATH, "utf8"));
    config.agents = { defaults: { model: { primary: "mock/mock-model" } } };
    config.models = {
      mode: "merge",
      providers: {
        mock: {
          baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "sk-mock", api: "openai-completions", timeoutSeconds: 60,
          models: [{ id: "mock-model", name: "Mock", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 4096 }],
        },
      },
    };
    config.tools = { toolSearch: false };
    // Nested settings pass through to the engine (which refuses unknown keys, so a wrong name fails to load).
    // The manifest's configSchema is generated from MemccConfig, nested settings key by key: OpenClaw's
    // own validator refuses a wrong type deep inside before the engine is ever asked.
    config.plugins.entries.memcc.config = { embeddingModel: "hashing", memory: { tuning: { lexical: "high" } } };
    fs.writeFileSync(env.OPENCLAW_CONFIG_PATH, JSON.stringify(config, null, 1));
    const refused = run(["config", "validate"]);
    assert.notEqual(refused.code, 0, "a string where memory.tuning.lexical takes a number is refused");
    assert.match(refused.out + refused.err, /memory\.tuning\.lexical/, refused.out + refused.err);
    config.plugins.entries.memcc.config = { embeddingModel: "hashing", tokenBudget: 1500, context: { freshTailCount: 4 }, memory: { chunkTokens: 300, vectorBackend: "exact" } };
    fs.writeFileSync(env.OPENCLAW_CONFIG_PATH, JSON.stringify(config, null, 1));
    const valid = run(["config", "validate"]);
    assert.equal(valid.code, 0, valid.out + valid.err);
    const inspect = run(["plugins", "inspect", "memcc", "--runtime", "--json"]);
    assert.equal(inspect.code, 0, inspect.err);
    const info = JSON.parse(inspect.out);
    assert.equal(info.plugin.status, "loaded", JSON.stringify(info.plugin.error ?? info.plugin.diagnostics));
    installedDir = info.plugin.rootDir;
    assert.ok(installedDir.startsWith(state) && installedDir.includes("node_modules"), `installed under the host's npm root: ${installedDir}`);
    assert.ok(!fs.existsSync(path.join(installedDir, "memcc.node")), "no source-build addon beside the installed plugin");
    addonPath = createRequire(path.join(installedDir, "index.js")).resolve("@memcc/openclaw-plugin-linux-x64-gnu");
    const size = fs.statSync(addonPath).size;
    assert.ok(size < 20 * 1024 * 1024, `the shipped addon is stripped (${(size / 1048576).toFixed(1)} MB)`);
    assert.deepEqual(info.plugin.kind, ["memory", "context-engine"]);
    assert.deepEqual(info.plugin.contextEngineIds, ["memcc"]);
    assert.ok(info.plugin.memorySlotSelected);
    for (const tool of ["memory_search", "memory_get", "lcm_grep", "lcm_expand_query"]) assert.ok(info.plugin.toolNames.includes(tool), tool);
    // The tools' schemas and limits are the engine's catalogue, the one MCP serves.
    const catalogue = JSON.parse(addon().toolCatalogue());
    assert.deepEqual(catalogue.map((t) => t.name), ["memory_search", "memory_get", "lcm_grep", "lcm_expand_query"]);
    const search = catalogue[0].parameters.properties;
    assert.equal(search.maxResults.maximum, 100);
    assert.equal(search.agentId, undefined, "the host fixes the agent");
  });

  const turn = (session, message) => {
    const r = run(["agent", "--local", "--session-id", session, "--message", message, "--json"]);
    assert.equal(r.code, 0, `exit ${r.code} signal ${r.signal} ${r.error ?? ""}\n${r.err}`);
    assert.doesNotMatch(r.err, /quarantin|falling back to (the )?legacy/i);
    return { ...r, json: JSON.parse(r.out) };
  };

  await t.test("turns persist, compaction summarises, grep then expand recovers an exact phrase", () => {
    const first = turn("e2e-a", "Fact to keep: my storage unit code is 4417, unit at Harbor Street. " + "Some context about the move. ".repeat(60));
    assert.match(first.err, /context engine "memcc" owns compaction/);
    for (let i = 0; i < 4; i++) turn("e2e-a", `Filler message ${i}: ` + "We talked about boxes, tape and the van rental schedule. ".repeat(60));
    const reqs = agentRequests();
    const summaryCalls = requests().filter(isSummaryRequest);
    assert.ok(summaryCalls.length > 0, "with compactionModel null, summaries were written by the host's model");
    const last = JSON.stringify(reqs[reqs.length - 1].body);
    assert.match(last, /<summary id=/, "the oldest turns were replaced by summaries");
    assert.match(last, /lcm_grep/, "the system prompt carries the lcm_grep hint");
    const grep = turn("e2e-a", "PLEASE_GREP storage unit code");
    const text = grep.json.payloads.map((p) => p.text).join("\n");
    assert.match(text, /4417/, "lcm_grep → lcm_expand_query returned the exact phrase");
    assert.match(text, /EXPANDED/);
  });

  await t.test("turns are stored exactly once; a retried commitTurn is a duplicate", async () => {
    const { MemccNative } = addon();
    const native = new MemccNative(JSON.stringify({ dataDir, embeddingModel: "hashing" }));
    const hits = JSON.parse(await native.grep(JSON.stringify({ pattern: "Fact to keep storage unit", sessionId: "e2e-a", scope: "messages" })));
    const original = hits.filter((h) => h.role === "user" && h.snippet.startsWith("Fact to keep"));
    assert.equal(original.length, 1, "the first turn's user message is stored once");
    const sums = JSON.parse(await native.grep(JSON.stringify({ pattern: "storage unit", sessionId: "e2e-a", scope: "summaries" })));
    const methods = await Promise.all(sums.map(async (h) => JSON.parse(await native.describe(null, h.id)).summary.method));
    assert.ok(methods.some((m) => m.startsWith("llm:host")), `a summary written by the host's model was committed (${methods})`);
    const msgs = JSON.stringify([{ role: "user", content: "retry me", timestamp: 1 }, { role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 }]);
    const s = JSON.stringify({ sessionId: "e2e-retry" });
    assert.equal(JSON.parse(await native.commitTurn(s, "turn-1", msgs)).status, "committed");
    assert.equal(JSON.parse(await native.commitTurn(s, "turn-1", msgs)).status, "duplicate");
    await assert.rejects(native.grep("{not json"), /^Error: memcc: \[invalid_input\] invalid grep request JSON/);
    // Another agent's conversation is as unknown as one that does not exist, whatever the ids say.
    await assert.rejects(native.grep(JSON.stringify({ pattern: "storage unit", sessionId: "e2e-a", agentId: "intruder" })), /\[unknown_session\]/);
    const other = JSON.parse(await native.grep(JSON.stringify({ pattern: "storage unit", agentId: "intruder" })));
    assert.deepEqual(other, [], "an agent without conversations finds nothing");
    await assert.rejects(native.expand(JSON.stringify({ ids: [hits[0].id], agentId: "intruder" })), /\[not_found\]/);
    assert.throws(() => new MemccNative('{"bogus": true}'), /unknown field/);
  });

  await t.test("summaries fail at the model: turns still succeed, nothing is lost", async () => {
    fs.writeFileSync(flags, "fail-summaries");
    const config = JSON.parse(fs.readFileSync(env.OPENCLAW_CONFIG_PATH, "utf8"));
    const plain = { ...config.plugins.entries.memcc.config };
    config.plugins.entries.memcc.config = { ...plain, compactionModel: "mock-model", llmBaseUrl: `http://127.0.0.1:${port}/v1`, llmTimeoutSecs: 5 };
    fs.writeFileSync(env.OPENCLAW_CONFIG_PATH, JSON.stringify(config, null, 1));
    const before = requests().length;
    for (let i = 0; i < 4; i++) turn("e2e-c", `Unit test ${i}: the caravan is parked at bay ${40 + i}. ` + "Notes about the campsite rules. ".repeat(70));
    fs.writeFileSync(flags, "");
    config.plugins.entries.memcc.config = plain;
    fs.writeFileSync(env.OPENCLAW_CONFIG_PATH, JSON.stringify(config, null, 1));
    const failed = requests().slice(before).filter(isSummaryRequest);
    assert.ok(failed.length > 0, "summaries went to the model and failed");
    const { MemccNative } = addon();
    const native = new MemccNative(JSON.stringify({ dataDir, embeddingModel: "hashing" }));
    const stats = JSON.parse(await native.stats(JSON.stringify({ sessionId: "e2e-c" })));
    assert.ok(stats.context.summaries > 0, "fallback summaries were written");
    const hits = JSON.parse(await native.grep(JSON.stringify({ pattern: "caravan parked bay", sessionId: "e2e-c", scope: "messages" })));
    assert.equal(hits.length, 4, "every turn's message is kept");
    const sum = JSON.parse(await native.grep(JSON.stringify({ pattern: "caravan", sessionId: "e2e-c", scope: "summaries", limit: 1 })))[0];
    const d = JSON.parse(await native.describe(null, sum.id));
    assert.match(d.summary.method, /extractive-fallback|truncated/);
  });

  await t.test("a resumed session is bootstrapped from the host transcript without duplicates", async () => {
    const { MemccNative } = addon();
    const count = async () => JSON.parse(await new MemccNative(JSON.stringify({ dataDir, embeddingModel: "hashing", memoryEnabled: false })).stats(JSON.stringify({ sessionId: "e2e-a" }))).context.messages;
    const before = await count();
    turn("e2e-a", "One more short turn.");
    assert.equal(await count(), before + 2, "bootstrap re-read the whole transcript and added only the new turn");
  });

  await t.test("a session deleted through the gateway ends, and is not flushed into memory", async () => {
    turn("e2e-end", "Before I go: my gym locker number is 5521.");
    const { MemccNative } = addon();
    const native = new MemccNative(JSON.stringify({ dataDir, embeddingModel: "hashing" }));
    // The hits' texts, not their JSON: a score or timestamp may contain the digits by chance.
    const found = async () => JSON.parse(await native.memorySearch("main", JSON.stringify({ query: "gym locker number", maxResults: 5, minScore: 0 }))).some((h) => h.text.includes("5521"));
    assert.equal(await found(), false, "one short turn is still in the fresh tail, not in memory");
    const gatewayPort = await freePort();
    const gateway = spawn(openclaw, ["gateway", "run", "--port", String(gatewayPort), "--bind", "loopback", "--token", "e2e-token", "--allow-unconfigured"], { env });
    t.after(() => gateway.kill());
    let gatewayLog = "";
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`gateway not ready in 90 s:\n${gatewayLog.slice(-2000)}`)), 90_000);
      const onData = (d) => {
        gatewayLog += String(d);
        if (/\[gateway\] ready/.test(gatewayLog)) {
          clearTimeout(timer);
          resolve();
        }
      };
      gateway.stdout.on("data", onData);
      gateway.stderr.on("data", onData);
    });
    const del = run(["sessions", "delete", "agent:main:explicit:e2e-end", "--yes", "--json", "--url", `ws://127.0.0.1:${gatewayPort}`, "--token", "e2e-token"]);
    assert.equal(del.code, 0, del.err);
    let ended = false;
    for (let i = 0; i < 40 && !ended; i++) {
      await new Promise((r) => setTimeout(r, 500));
      ended = /memcc: session \S*e2e-end\S* was deleted; not flushed/.test(gatewayLog);
    }
    const memccLog = gatewayLog.split("\n").filter((l) => /memcc/.test(l)).join("\n");
    assert.ok(ended, `session_end reached the plugin for the deleted session; gateway log:\n${memccLog}`);
    assert.equal(await found(), false, `what the user deleted did not go into long-term memory:\n${memccLog}`);
    // The gateway loads the plugin from more than one capture directory; one copy of the addon
    // (one SQLite) must serve them all, or two SQLite libraries would share the files blind to
    // each other's locks.
    const maps = fs.readFileSync(`/proc/${gateway.pid}/maps`, "utf8");
    const addons = new Set(maps.split("\n").map((l) => l.split(/\s+/).at(-1)).filter((f) => /memcc[^/]*\.node$/.test(f)));
    assert.equal(addons.size, 1, `one MemCC addon mapped in the gateway: ${[...addons].join(", ")}`);
    // `agent --local` refuses to run beside a live gateway: wait for it to be gone.
    const exited = new Promise((r) => gateway.once("exit", r));
    gateway.kill("SIGTERM");
    const timer = setTimeout(() => gateway.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  });

  await t.test("a new session recalls a fact from the first one", () => {
    const before = requests().length;
    turn("e2e-b", "What was my storage unit code again?");
    const bodies = requests().slice(before).map((r) => JSON.stringify(r.body));
    assert.ok(bodies.some((b) => b.includes("memcc-recall") && b.includes("4417")), "recall reached the model");
    const tool = agentRequests().at(-1).body.tools.find((x) => x.function.name === "memory_search");
    assert.match(tool.function.description, /long-term memory/, "the model is offered MemCC's memory_search");
    const searched = turn("e2e-b2", "PLEASE_SEARCH storage unit code");
    assert.match(searched.json.payloads.map((p) => p.text).join("\n"), /SEARCHED:[\s\S]*4417/, "memory_search finds the fact");
  });
});
