// The plugin's own host plumbing, with a fake addon standing in for the native one: what runs
// inside a host callback never throws into the host, the host's model is the session's own, a
// turn without an advancement key is refused, a deleted session is not flushed into memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import plugin, { testing } from "../index.js";

function fakeAddon() {
  const calls = [];
  return {
    calls,
    resolveHostCall: (id, ok, text) => calls.push(["resolve", id, ok, text]),
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
  assert.deepEqual(resolved.map((c) => [c[1], c[2]]), [[2, false], [1, false]]);
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
  assert.deepEqual(addon.calls.find((c) => c[0] === "resolve"), ["resolve", 7, true, "summary by alice-model"]);
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
