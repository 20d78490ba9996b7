// An OpenAI-compatible chat server for end-to-end tests, on 127.0.0.1 only. It streams (SSE)
// or not as asked, logs every request body as a JSON line to $MOCK_LOG, and follows a tiny
// script so tests can make the "model" call tools:
//   - user text containing "PLEASE_GREP <phrase>"  → tool call lcm_grep {pattern: phrase}
//   - after an lcm_grep result                     → tool call lcm_expand_query {ids: [first id]}
//   - after an lcm_expand_query result             → a text answer quoting it
//   - user text containing "PLEASE_SEARCH <query>" → tool call memory_search {query}, then quote the result
//   - summarisation requests (system prompt "You summarise…"/"Compress…") → "SUMMARY: " + the
//     opening of their input; while the file $MOCK_FLAGS contains "fail-summaries": HTTP 500
//   - otherwise                                    → "ACK <n>"
import http from "node:http";
import fs from "node:fs";

const log = process.env.MOCK_LOG;
let n = 0;

/** Text of the last user message (recalled memory arrives as an earlier user message and may
 * quote old instructions, which must not steer the script). */
function currentUserText(messages) {
  const m = messages.filter((x) => x.role === "user").at(-1);
  if (!m) return "";
  return typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join(" ");
}

const isHostNote = (m) => m.role === "user" && JSON.stringify(m.content ?? "").includes("BEGIN_OPENCLAW_INTERNAL_CONTEXT");

function reply(body) {
  // The host appends its own context note after the conversation; look past it.
  const msgs = (body.messages ?? []).filter((m) => !isHostNote(m));
  const last = msgs[msgs.length - 1] ?? {};
  if (last.role === "tool") {
    const content = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
    const prior = msgs.slice().reverse().find((m) => m.role === "assistant" && m.tool_calls);
    const name = prior?.tool_calls?.[0]?.function?.name;
    if (name === "lcm_grep") {
      const ids = [...content.matchAll(/"(?:summaryId|id)"\s*:\s*"((?:sum|msg)_[A-Za-z0-9]+)"/g)].map((m) => m[1]);
      const id = ids.find((x) => x.startsWith("sum_")) ?? ids[0] ?? "msg_1";
      return { tool: { name: "lcm_expand_query", args: { ids: [id], maxTokens: 4000 } } };
    }
    if (name === "memory_search") return { text: `SEARCHED: ${content.slice(0, 4000)}` };
    return { text: `EXPANDED: ${content.slice(0, 4000)}` };
  }
  const user = currentUserText(msgs);
  const grep = user.match(/PLEASE_GREP (.+)$/m);
  if (grep) return { tool: { name: "lcm_grep", args: { pattern: grep[1].trim(), scope: "messages" } } };
  const search = user.match(/PLEASE_SEARCH (.+)$/m);
  if (search) return { tool: { name: "memory_search", args: { query: search[1].trim(), maxResults: 5 } } };
  return { text: `ACK ${n}` };
}

const server = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    n += 1;
    let body = {};
    try { body = JSON.parse(raw || "{}"); } catch { /* logged as-is */ }
    if (log) fs.appendFileSync(log, JSON.stringify({ n, path: req.url, body }) + "\n");
    if (!req.url.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "not found" } }));
    }
    const sys = (body.messages ?? []).find((m) => m.role === "system");
    const flags = process.env.MOCK_FLAGS && fs.existsSync(process.env.MOCK_FLAGS) ? fs.readFileSync(process.env.MOCK_FLAGS, "utf8") : "";
    const isSummary = typeof sys?.content === "string" && /^(You summarise|Compress)/.test(sys.content);
    if (flags.includes("fail-summaries") && isSummary) {
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "summaries disabled" } }));
    }
    // A summary "model": the opening of what it was asked to summarise, so facts survive.
    const r = isSummary ? { text: `SUMMARY: ${currentUserText(body.messages ?? []).slice(0, 600)}` } : reply(body);
    const id = `chatcmpl-${n}`;
    const model = body.model ?? "mock";
    if (!body.stream) {
      const message = r.tool
        ? { role: "assistant", content: null, tool_calls: [{ id: `call_${n}`, type: "function", function: { name: r.tool.name, arguments: JSON.stringify(r.tool.args) } }] }
        : { role: "assistant", content: r.text };
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ id, object: "chat.completion", model, choices: [{ index: 0, message, finish_reason: r.tool ? "tool_calls" : "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    const chunk = (delta, finish = null) => send({ id, object: "chat.completion.chunk", model, choices: [{ index: 0, delta, finish_reason: finish }] });
    chunk({ role: "assistant" });
    if (r.tool) {
      chunk({ tool_calls: [{ index: 0, id: `call_${n}`, type: "function", function: { name: r.tool.name, arguments: "" } }] });
      chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(r.tool.args) } }] });
      chunk({}, "tool_calls");
    } else {
      chunk({ content: r.text });
      chunk({}, "stop");
    }
    send({ id, object: "chat.completion.chunk", model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    res.write("data: [DONE]\n\n");
    res.end();
  });
});

server.listen(Number(process.env.MOCK_PORT ?? 0), "127.0.0.1", () => {
  console.log(`MOCK_LISTENING ${server.address().port}`);
});
