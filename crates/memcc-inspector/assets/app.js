// The MemCC inspector's page: hash routes over the JSON API under /api. Every value from the
// store is put in the page as text (never as HTML): messages and memories are untrusted.
"use strict";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const SVG = "http://www.w3.org/2000/svg";

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function s(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, String(v));
  }
  if (text !== undefined) el.textContent = text;
  return el;
}

async function api(path, options) {
  const res = await fetch(path, options);
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

const enc = encodeURIComponent;
const when = (ms) => (ms == null ? "—" : new Date(ms).toISOString().slice(0, 16).replace("T", " "));
const fmt = (n) => (n == null ? "—" : Number(n).toLocaleString("en-US"));

// Go to a page; the same page again reloads it (a hashchange would not fire).
function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function show(...nodes) {
  main.replaceChildren(...nodes.flat(2).filter((n) => n !== null && n !== undefined && n !== false));
}

function failure(e) {
  return h("p", { class: "error", id: "error" }, String(e.message || e));
}

function setNav(agent, active) {
  const link = (href, label, key) => h("a", { href, class: active === key ? "active" : "" }, label);
  nav.replaceChildren(...[
    link("#/", "Agents & sessions", "home"),
    agent ? link(`#/memory/${enc(agent)}`, "Memory", "memory") : null,
    agent ? link(`#/triples/${enc(agent)}`, "Knowledge graph", "triples") : null,
  ].filter((part) => part !== null));
}

// ---- Agents and sessions -------------------------------------------------------------------

async function home() {
  const o = await api("/api/overview");
  setNav(o.defaultAgent, "home");
  const cards = o.agents.map((a) =>
    h("div", { class: "card", "data-agent": a.agentId },
      h("h2", {}, `Agent ${a.agentId}`),
      h("p", { class: "muted" },
        `${a.sessions.length} session(s) · ${fmt(a.memoryRecords)} memory record(s) · `,
        h("a", { href: `#/memory/${enc(a.agentId)}` }, "memory"), " · ",
        h("a", { href: `#/triples/${enc(a.agentId)}` }, "knowledge graph")),
      a.sessions.length === 0 ? null : h("table", {},
        h("tr", {}, ["Session", "Project", "From", "Started", "Last activity", "Messages", "Summaries", "DAG depth", "Context tokens", "Waiting for memory"].map((t) => h("th", {}, t))),
        a.sessions.map((ss) =>
          h("tr", { class: "clickable", "data-session": ss.sessionId,
                    onclick: () => navigate(`#/session/${enc(a.agentId)}/${enc(ss.sessionId)}`) },
            h("td", {}, ss.title ? h("span", {}, ss.title) : null, ss.title ? h("br") : null,
              h("span", { class: "mono muted" }, ss.sessionId)),
            h("td", { title: ss.projectPath || "" }, ss.project || "—"),
            h("td", {}, ss.source || "—"),
            h("td", {}, when(ss.firstMessageAt)), h("td", {}, when(ss.lastMessageAt)),
            h("td", {}, fmt(ss.messages)), h("td", {}, fmt(ss.summaries)), h("td", {}, fmt(ss.maxDepth)),
            h("td", {}, fmt(ss.contextTokens)), h("td", {}, fmt(ss.pendingMemoryHandoffs)))))));
  show(
    h("h1", {}, "Agents and sessions"),
    o.memoryError ? h("p", { class: "error" }, `Memory: ${o.memoryError}`) : null,
    !o.memoryEnabled ? h("p", { class: "muted" }, "Long-term memory is disabled.") : null,
    cards.length ? cards : h("p", { class: "muted" }, "Nothing stored yet."),
  );
}

// ---- A session: its DAG ----------------------------------------------------------------------

function sessionTabs(agent, session, active) {
  const base = `${enc(agent)}/${enc(session)}`;
  return h("p", { class: "tabs" },
    h("a", { href: `#/session/${base}`, class: active === "dag" ? "active" : "" }, "Summary DAG"),
    h("a", { href: `#/prompt/${base}`, class: active === "prompt" ? "active" : "" }, "Assembled prompt"));
}

async function session(agent, sessionId, params = new URLSearchParams()) {
  setNav(agent, "");
  const view = await api(`/api/dag?agent=${enc(agent)}&session=${enc(sessionId)}`);
  // `range`: the message sequence numbers the drawing spans (the whole session, or zoomed in).
  const whole = wholeRange(view);
  const state = { expanded: new Map(), selected: null, view, range: { ...whole } };
  const svgBox = h("div", { id: "dag" });
  const side = h("div", { class: "side card", id: "node-detail" },
    h("p", { class: "muted" }, "Click a summary to see its sources; click again to fold it."));
  const shown = h("span", { class: "muted", id: "dag-range" });
  const redraw = () => {
    svgBox.replaceChildren(drawDag(state, toggle, zoomAt));
    shown.textContent = `showing messages #${Math.round(state.range.lo)}–${Math.round(state.range.hi)} of #${whole.lo}–${whole.hi}`;
  };
  // Zoom by `factor` (< 1: in) around message `at`, never past the whole session.
  function zoomAt(at, factor) {
    const { lo, hi } = state.range;
    const span = Math.min(whole.hi - whole.lo, Math.max(8, (hi - lo) * factor));
    const start = Math.max(whole.lo, Math.min(whole.hi - span, at - ((at - lo) / Math.max(1, hi - lo)) * span));
    state.range = { lo: start, hi: start + span };
    redraw();
  }
  // Open a node's span when it is too narrow to read in the current drawing: the view follows it.
  function follow(node) {
    const span = node.lastSeq + 1 - node.firstSeq, { lo, hi } = state.range;
    if (span * 8 < hi - lo || node.firstSeq > hi || node.lastSeq < lo) {
      const pad = Math.max(2, span * 0.15);
      state.range = { lo: Math.max(whole.lo, node.firstSeq - pad), hi: Math.min(whole.hi, node.lastSeq + 1 + pad) };
    }
  }
  async function toggle(node) {
    state.selected = node.id;
    if (state.expanded.has(node.id)) {
      collapse(state, node.id);
    } else {
      try {
        state.expanded.set(node.id, await api(`/api/node/${enc(node.id)}?agent=${enc(agent)}`));
      } catch (e) {
        side.replaceChildren(failure(e));
        return;
      }
      follow(node);
    }
    redraw();
    side.replaceChildren(...nodeDetail(state, node));
  }
  const tools = h("div", { class: "toolbar", id: "dag-tools" },
    h("button", { id: "dag-zoom-in", title: "Zoom in (or scroll over the drawing)", onclick: () => zoomAt((state.range.lo + state.range.hi) / 2, 0.5) }, "+"),
    h("button", { id: "dag-zoom-out", title: "Zoom out", onclick: () => zoomAt((state.range.lo + state.range.hi) / 2, 2) }, "−"),
    h("button", { id: "dag-whole", onclick: () => { state.range = { ...whole }; redraw(); } }, "Whole session"),
    shown, h("span", { class: "muted" }, "· scroll to zoom, drag to pan, click a summary to open it"));
  redraw();
  show(
    h("h1", {}, `Session ${sessionId}`, h("span", { class: "muted" }, ` · agent ${agent}`)),
    sessionTabs(agent, sessionId, "dag"),
    h("p", { class: "muted", id: "dag-stats" },
      `${fmt(view.messages)} messages · ${fmt(view.summaries)} summaries · depth ${view.maxDepth} · `,
      `${view.roots.length} top node(s) · ${fmt(view.uncoveredMessages)} message(s) not summarised yet`),
    h("p", { class: "legend" },
      h("span", {}, h("i", { class: "swatch sw-condensed" }), "condensed summary"),
      h("span", {}, h("i", { class: "swatch sw-leaf" }), "leaf summary"),
      h("span", {}, h("i", { class: "swatch sw-msg" }), "raw message"),
      h("span", { class: "muted" }, "x: position in the conversation (message sequence) · y: depth")),
    tools,
    h("div", { class: "row" }, h("div", { class: "grow" }, svgBox), side),
  );
  // Arrived from a memory record (`?node=sum_…&msgs=12,13`): that summary opened, the
  // record's source messages marked.
  const focus = params.get("node");
  if (focus) {
    try {
      const children = await api(`/api/node/${enc(focus)}?agent=${enc(agent)}`);
      state.expanded.set(focus, children);
      state.selected = focus;
      follow(children.node);
      redraw();
      side.replaceChildren(...nodeDetail(state, children.node));
      const marked = new Set((params.get("msgs") || "").split(",").filter(Boolean).map((m) => `msg_${m}`));
      for (const el of side.querySelectorAll(".msg[data-message]")) {
        if (marked.has(el.dataset.message)) el.classList.add("source");
      }
      side.querySelector(".msg.source")?.scrollIntoView({ block: "center" });
    } catch (e) {
      side.replaceChildren(failure(e));
    }
  }
}

function collapse(state, id) {
  const c = state.expanded.get(id);
  state.expanded.delete(id);
  for (const child of (c && c.summaries) || []) collapse(state, child.id);
}

/** The message sequence numbers the session's top summaries span. */
function wholeRange(view) {
  if (view.roots.length === 0) return { lo: 0, hi: 1 };
  return { lo: Math.min(...view.roots.map((r) => r.firstSeq)), hi: Math.max(...view.roots.map((r) => r.lastSeq)) + 1 };
}

function drawDag(state, toggle, zoomAt) {
  const { view, expanded } = state;
  const width = 1200, rowH = 64, boxH = 34, left = 40, right = width - 10;
  if (view.roots.length === 0) return h("p", { class: "muted" }, "No summaries yet: nothing has been compacted in this session.");
  const { lo, hi } = state.range;
  const x = (seq) => left + ((seq - lo) / Math.max(1, hi - lo)) * (right - left);
  const rows = view.maxDepth + 2; // depths maxDepth..0, then raw messages
  const y = (depth) => 10 + (view.maxDepth - depth) * rowH;
  const msgY = y(-1);
  const svg = s("svg", { class: "dag", viewBox: `0 0 ${width} ${rows * rowH + 10}`, role: "img" });
  for (let d = view.maxDepth; d >= 0; d--) svg.append(s("text", { x: 2, y: y(d) + boxH / 2 + 3, class: "axis" }, `d${d}`));
  svg.append(s("text", { x: 2, y: msgY + boxH / 2 + 3, class: "axis" }, "msgs"));
  const edges = s("g"), nodes = s("g");
  svg.append(edges, nodes);
  // Cut to what the drawing shows: a node wider than the view is drawn to its edges.
  const clip = (v) => Math.max(left - 4, Math.min(right + 4, v));
  const place = (n) => {
    const x0 = clip(x(n.firstSeq)), x1 = clip(x(n.lastSeq + 1));
    return { x: x0 + 1, w: Math.max(4, x1 - x0 - 2) };
  };
  const visible = (first, last) => last + 1 > lo && first < hi;
  const drawNode = (n, parent) => {
    const c = expanded.get(n.id);
    // Outside the view: not drawn, but its opened descendants may reach into it.
    if (!visible(n.firstSeq, n.lastSeq)) {
      for (const child of (c && c.summaries) || []) drawNode(child, n.id);
      return;
    }
    const p = place(n), top = y(n.depth);
    const classes = ["node", n.kind, expanded.has(n.id) ? "expanded" : "", state.selected === n.id ? "selected" : ""].join(" ");
    const rect = s("rect", { x: p.x, y: top, width: p.w, height: boxH, rx: 4, class: classes, "data-node": n.id, "data-parent": parent || "", onclick: () => toggle(n) });
    rect.append(s("title", {}, `${n.id}\n${n.kind}, depth ${n.depth}, ${n.tokens} tokens\nmessages ${n.firstSeq}–${n.lastSeq} (${n.descendantMessages})\n${when(n.earliest)} → ${when(n.latest)}`));
    nodes.append(rect);
    if (p.w > 70) {
      nodes.append(s("text", { x: p.x + 4, y: top + 14 }, `${n.kind === "leaf" ? "leaf" : "cond"} d${n.depth} · ${n.tokens}t`));
      nodes.append(s("text", { x: p.x + 4, y: top + 27 }, `#${n.firstSeq}–${n.lastSeq}`));
    }
    if (!c) return;
    for (const child of c.summaries) {
      const q = place(child);
      edges.append(s("line", { class: "edge", x1: p.x + p.w / 2, y1: top + boxH, x2: q.x + q.w / 2, y2: y(child.depth) }));
      drawNode(child, n.id);
    }
    for (const m of c.messages) {
      if (!visible(m.seq, m.seq)) continue;
      const x0 = x(m.seq), w = Math.max(2, x(m.seq + 1) - x0 - 1);
      edges.append(s("line", { class: "edge", x1: p.x + p.w / 2, y1: top + boxH, x2: x0 + w / 2, y2: msgY }));
      const r = s("rect", { x: x0, y: msgY, width: w, height: boxH, class: "message", "data-message": m.id });
      r.append(s("title", {}, `${m.id} (${m.role}, ${m.tokens} tokens)\n${m.text.slice(0, 300)}`));
      nodes.append(r);
    }
  };
  view.roots.forEach((r) => drawNode(r));
  // Scroll to zoom around the pointer; drag to pan.
  const seqAt = (clientX) => {
    const box = svg.getBoundingClientRect();
    return lo + ((((clientX - box.left) / box.width) * width - left) / (right - left)) * (hi - lo);
  };
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    zoomAt(seqAt(e.clientX), e.deltaY < 0 ? 0.8 : 1.25);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (e) => {
    if (e.target.dataset.node) return; // a click on a summary opens it
    drag = { x: e.clientX, lo, hi };
  });
  svg.addEventListener("pointerup", (e) => {
    if (!drag) return;
    const box = svg.getBoundingClientRect();
    const moved = ((e.clientX - drag.x) / box.width) * width / (right - left) * (drag.hi - drag.lo);
    drag = null;
    if (Math.abs(moved) > 0.5) zoomAt((lo + hi) / 2 - moved, 1);
  });
  return svg;
}

function nodeDetail(state, node) {
  const c = state.expanded.get(node.id);
  const out = [
    h("h2", { class: "mono" }, node.id),
    h("p", {}, h("span", { class: "tag" }, node.kind), h("span", { class: "tag" }, `depth ${node.depth}`),
      h("span", { class: "tag" }, `${node.tokens} tokens`), h("span", { class: "tag" }, `from ${fmt(node.sourceTokens)} source tokens`)),
    h("p", { class: "muted" }, `Messages #${node.firstSeq}–${node.lastSeq} (${node.descendantMessages}) · ${when(node.earliest)} → ${when(node.latest)}`),
    // Folded, a node shows its preview; expanded, the summary's whole text.
    h("div", { class: "part summary", id: "summary-text" }, h("pre", {}, c ? c.content : node.preview)),
  ];
  if (!c) return out.concat(h("p", { class: "muted" }, "Folded. Click it to expand."));
  if (c.summaries.length) {
    out.push(h("h2", {}, `${c.summaries.length} child summaries`),
      h("table", {}, c.summaries.map((k) => h("tr", {}, h("td", { class: "mono" }, k.id), h("td", {}, `${k.kind} d${k.depth}`), h("td", {}, `${k.tokens}t`), h("td", {}, `#${k.firstSeq}–${k.lastSeq}`)))));
  }
  if (c.messages.length) {
    out.push(h("h2", {}, `${c.messages.length} raw messages`),
      h("div", { id: "raw-messages" }, c.messages.map((m) =>
        h("div", { class: "msg", "data-message": m.id },
          h("span", { class: "tag" }, m.role), h("span", { class: "mono muted" }, `${m.id} · #${m.seq} · ${when(m.timestamp)} · ${m.tokens}t`),
          h("pre", {}, m.text + (m.cut ? "\n[… cut here; lcm_expand_query reads the rest]" : ""))))));
  }
  return out;
}

// ---- A session: the assembled prompt ----------------------------------------------------------

const LAYERS = { identity: "L0 identity", essential: "L1 essential", context: "L2 on-demand (wing)", recall: "L3 deep search" };

async function promptView(agent, sessionId, params) {
  setNav(agent, "");
  // No budget asked: the server grants what every host gets (the configured tokenBudget, else its default).
  const asked = Number(params.get("budget")) || null;
  const pending = params.get("pending") || "";
  const budgetInput = h("input", { type: "number", id: "budget", min: 256, step: 500, value: asked ?? "" });
  const pendingInput = h("input", { type: "text", id: "pending", size: 40, placeholder: "next user message (optional; joins the recall query)", value: pending });
  const go = () => navigate(`#/prompt/${enc(agent)}/${enc(sessionId)}?budget=${enc(budgetInput.value)}&pending=${enc(pendingInput.value)}`);
  const head = [
    h("h1", {}, `Session ${sessionId}`, h("span", { class: "muted" }, ` · agent ${agent}`)),
    sessionTabs(agent, sessionId, "prompt"),
    h("div", { class: "toolbar" }, "Budget (tokens)", budgetInput, pendingInput, h("button", { onclick: go, id: "assemble" }, "Assemble")),
  ];
  show(...head, h("p", { class: "muted" }, "Assembling…"));
  const budgetParam = asked ? `&budget=${asked}` : "";
  const a = await api(`/api/assemble?agent=${enc(agent)}&session=${enc(sessionId)}${budgetParam}&pending=${enc(pending)}`);
  const budget = a.budget;
  if (!asked) budgetInput.value = budget;
  const totals = { system: a.systemTokens, summary: 0, message: 0, dayMarker: 0 };
  for (const p of a.parts) if (p.source.kind !== "memory") totals[p.source.kind === "truncatedLatest" ? "message" : p.source.kind] += p.tokens;
  const layerTokens = Object.fromEntries(a.memory.map((m) => [m.name, m.tokens]));
  const segments = [["system", "system prompt", totals.system], ["summary", "summaries", totals.summary],
    ["message", "raw messages", totals.message], ["dayMarker", "day markers", totals.dayMarker],
    ...a.memory.map((m) => [m.name, LAYERS[m.name] || m.name, m.tokens])];
  const bar = h("div", { class: "bar", id: "budget-bar" });
  for (const [key, , t] of segments) {
    const seg = h("div", { class: `sw-${key}`, title: `${key}: ${t} tokens` });
    seg.style.width = `${(100 * t) / budget}%`;
    bar.append(seg);
  }
  const sectionsTable = h("table", { id: "sections" },
    h("tr", {}, h("th", {}, "Section"), h("th", {}, "Tokens"), h("th", {}, "Share of budget")),
    segments.map(([key, label, t]) => h("tr", { "data-section": key }, h("td", {}, h("i", { class: `swatch sw-${key}` }), label), h("td", {}, fmt(t)), h("td", {}, `${((100 * t) / budget).toFixed(1)}%`))),
    h("tr", {}, h("td", {}, h("b", {}, "Total")), h("td", {}, h("b", {}, fmt(a.estimatedTokens))), h("td", {}, `${((100 * a.estimatedTokens) / budget).toFixed(1)}% of ${fmt(budget)}`)));
  const memory = a.memory.map((m) =>
    h("div", { class: `card layer-${m.name}`, "data-layer": m.name },
      h("h2", {}, `${LAYERS[m.name] || m.name} · ${m.tokens} tokens`),
      h("table", {},
        h("tr", {}, ["Line", "Record", "Score", "Why", "Wing / room", "From"].map((t) => h("th", {}, t))),
        m.lines.map((l) => h("tr", { "data-item": l.id || "" },
          h("td", {}, l.text),
          h("td", { class: "mono" }, l.id ? h("a", { href: `#/memory/${enc(agent)}?id=${enc(l.id)}` }, l.id) : "—"),
          h("td", {}, l.score == null ? "—" : l.score.toFixed(3)),
          h("td", { class: "why" }, (l.why || []).join(" + ") || "—",
            l.matched?.length ? h("div", { class: "muted" }, `matched: ${l.matched.join(", ")}`) : null),
          h("td", {}, l.record ? `${l.record.wing} / ${l.record.room} (${l.record.kind})` : "—"),
          h("td", { class: "mono" }, l.record ? provenance(l.record) : "—"))))));
  show(...head,
    h("p", { class: "muted" }, `${a.summariesIncluded} summaries, ${a.rawMessagesIncluded} raw messages, ${a.itemsDropped} older item(s) left out.`),
    bar, h("p", { class: "legend" }, segments.map(([key, label]) => h("span", {}, h("i", { class: `swatch sw-${key}` }), label))),
    sectionsTable,
    h("h2", {}, "Recalled memory, by layer"),
    memory.length ? memory : h("p", { class: "muted" }, "Nothing recalled for this prompt."),
    h("h2", {}, "The prompt, message by message"),
    a.systemPromptAddition ? h("div", { class: "part" }, h("b", {}, `system prompt addition · ${a.systemTokens}t`), h("pre", {}, a.systemPromptAddition)) : null,
    a.parts.map((p, i) => {
      const text = h("pre", {}, p.text + (p.cut ? "\n[… shown in part]" : ""));
      // A long part shows its start; "Show all" reads it whole.
      const whole = p.cut ? h("button", { class: "show-all", "data-part": i, onclick: async () => {
        try {
          const full = await api(`/api/assemble?agent=${enc(agent)}&session=${enc(sessionId)}&budget=${budget}&pending=${enc(pending)}&part=${i}`);
          text.textContent = full.text;
          whole.remove();
        } catch (e) {
          whole.replaceWith(failure(e));
        }
      } }, "Show all") : null;
      return h("div", { class: `part ${p.source.kind === "truncatedLatest" ? "message" : p.source.kind}`, "data-part": i },
        h("b", {}, partLabel(p.source)), h("span", { class: "muted" }, ` · ${p.role} · ${p.tokens}t `), whole, text);
    }));
}

function provenance(r) {
  const sessions = (r.sourceSessionIds || []).join(", ");
  const msgs = r.sourceMessageIds || [];
  const span = msgs.length ? ` msg_${msgs[0]}${msgs.length > 1 ? `…msg_${msgs[msgs.length - 1]}` : ""}` : "";
  const sum = (r.sourceSummaryIds || [])[0];
  return `${sessions || "added directly"}${sum ? ` · ${sum}` : ""}${span}`;
}

/** A record's provenance as a link to its summary in the session's DAG, its source messages marked. */
function provenanceLink(agent, r) {
  const session = (r.sourceSessionIds || [])[0];
  const sum = (r.sourceSummaryIds || [])[0];
  if (!session || !sum) return provenance(r);
  const msgs = (r.sourceMessageIds || []).join(",");
  return h("a", { href: `#/session/${enc(agent)}/${enc(session)}?node=${enc(sum)}&msgs=${enc(msgs)}` }, provenance(r));
}

function partLabel(src) {
  switch (src.kind) {
    case "summary": return `summary ${src.id} (depth ${src.depth})`;
    case "message": return `message msg_${src.id}`;
    case "dayMarker": return "day marker";
    case "memory": return "recalled memory";
    case "truncatedLatest": return `start of msg_${src.id} (too long for the budget)`;
    default: return src.kind;
  }
}

// ---- Memory ----------------------------------------------------------------------------------

async function memory(agent, params) {
  setNav(agent, "memory");
  const q = params.get("q") || "", wing = params.get("wing") || "", room = params.get("room") || "";
  const kind = params.get("kind") || "", forgotten = params.get("forgotten") === "1";
  const offset = Number(params.get("offset")) || 0, limit = 50, focus = params.get("id");
  const facets = await api(`/api/memory/facets?agent=${enc(agent)}`);
  const select = (id, values, current, label) => h("select", { id },
    h("option", { value: "" }, `any ${label}`),
    values.map(([v, n]) => h("option", { value: v, selected: v === current }, `${v} (${n})`)));
  const qInput = h("input", { type: "search", id: "search", size: 36, placeholder: "search memory", value: q });
  const wingSel = select("wing", facets.wings, wing, "wing"), roomSel = select("room", facets.rooms, room, "room");
  const kindSel = select("kind", facets.kinds, kind, "kind");
  const forgottenBox = h("input", { type: "checkbox", id: "forgotten", checked: forgotten });
  const go = (off = 0) => {
    const p = new URLSearchParams({ q: qInput.value, wing: wingSel.value, room: roomSel.value, kind: kindSel.value, forgotten: forgottenBox.checked ? "1" : "0", offset: String(off) });
    navigate(`#/memory/${enc(agent)}?${p}`);
  };
  qInput.addEventListener("keydown", (e) => e.key === "Enter" && go());
  const detail = h("div", { class: "side card", id: "record-detail" }, h("p", { class: "muted" }, "Click a record for its sources and history."));
  const toolbar = h("div", { class: "toolbar" }, qInput, wingSel, roomSel, kindSel,
    h("label", {}, forgottenBox, " forgotten too"), h("button", { id: "go", onclick: () => go() }, "Search"));
  show(h("h1", {}, `Memory of ${agent}`), toolbar, h("p", { class: "muted" }, "Loading…"));
  const url = `/api/memory?agent=${enc(agent)}&q=${enc(q)}&wing=${enc(wing)}&room=${enc(room)}&kind=${enc(kind)}&forgotten=${forgotten}&offset=${offset}&limit=${limit}`;
  const page = await api(url);
  const rows = page.items.map((item) => {
    const r = item.record, hit = item.hit;
    const id = hit ? hit.id : `mem_${r.id}`;
    const text = hit ? hit.text : r.text;
    return h("tr", { class: "clickable", "data-record": id, onclick: () => openRecord(agent, id, r, detail, () => go(offset)) },
      h("td", { class: "mono" }, id),
      h("td", {}, h("span", { class: "tag" }, hit ? hit.kind : r.kind),
        r && r.forgotten ? h("span", { class: "tag forgotten" }, "forgotten") : null,
        r && r.supersededBy ? h("span", { class: "tag superseded" }, "superseded") : null),
      h("td", {}, `${hit ? hit.wing : r.wing} / ${hit ? hit.room : r.room}`),
      h("td", {}, hit ? hit.score.toFixed(3) : when(r.eventTime ?? r.createdAt)),
      h("td", {}, text.length > 400 ? `${text.slice(0, 400)}…` : text));
  });
  const pager = q ? null : h("div", { class: "pager" },
    h("button", { disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, "← newer"),
    h("span", { class: "muted", id: "page-info" }, `${fmt(offset + 1)}–${fmt(Math.min(offset + limit, page.total))} of ${fmt(page.total)}`),
    h("button", { disabled: offset + limit >= page.total, id: "older", onclick: () => go(offset + limit) }, "older →"));
  show(h("h1", {}, `Memory of ${agent}`), toolbar,
    h("p", { class: "muted", id: "result-count" }, q ? `${page.total} result(s) for “${q}”` : `${fmt(page.total)} record(s)`),
    h("div", { class: "row" },
      h("div", { class: "grow" },
        h("table", { id: "records" }, h("tr", {}, ["Id", "Kind", "Wing / room", q ? "Score" : "When", "Text"].map((t) => h("th", {}, t))), rows),
        pager),
      detail));
  if (focus) openRecord(agent, focus, null, detail, () => go(offset));
}

async function openRecord(agent, id, record, detail, refresh) {
  detail.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  try {
    const [chain, statements] = await Promise.all([
      api(`/api/memory/${enc(id)}/history?agent=${enc(agent)}`),
      api(`/api/memory/${enc(id)}/statements?agent=${enc(agent)}`).catch(() => ({ changed: [], replaced: [] })),
    ]);
    const r = record || chain.find((c) => `mem_${c.id}` === id) || chain[chain.length - 1];
    const forget = h("button", { class: "danger", id: "forget", onclick: async () => {
      if (!confirm(`Forget ${id}? It will no longer be recalled or searched.`)) return;
      try {
        await api(`/api/memory/${enc(id)}/forget?agent=${enc(agent)}`, { method: "POST", headers: { "content-type": "application/json", "x-memcc-inspector": "1" }, body: "{}" });
        refresh();
      } catch (e) { detail.append(failure(e)); }
    } }, "Forget…");
    const post = (what, body) => api(`/api/memory/${enc(id)}/${what}?agent=${enc(agent)}`,
      { method: "POST", headers: { "content-type": "application/json", "x-memcc-inspector": "1" }, body: JSON.stringify(body) });
    const correct = h("button", { id: "edit", onclick: async () => {
      const text = window.prompt(`Correct ${id}: what should it say now? (The old text stays as its history.)`, r.text);
      if (text === null || text.trim() === "" || text === r.text) return;
      try {
        const done = await post("edit", { text });
        navigate(`#/memory/${enc(agent)}?id=${enc(done.id)}`);
      } catch (e) { detail.append(failure(e)); }
    } }, "Correct…");
    const pinToggle = h("button", { id: "pin", onclick: async () => {
      // The record again, as it is now (the list's page says nothing of pins).
      try { await post("pin", { pinned: !r.pinned }); await openRecord(agent, id, null, detail, refresh); } catch (e) { detail.append(failure(e)); }
    } }, r.pinned ? "Unpin" : "Pin");
    // A pin holds in the project its record was learnt in; this one holds in every project.
    const pinEverywhere = r.project ? h("button", { id: "pin-everywhere", title: `Learnt in ${r.project}`, onclick: async () => {
      try { await post("pin", { pinned: true, everywhere: true }); await openRecord(agent, id, null, detail, refresh); } catch (e) { detail.append(failure(e)); }
    } }, "Pin in every project") : null;
    // replaceChildren writes a null as the text "null": the parts a record lacks are left out first.
    detail.replaceChildren(...[
      h("h2", { class: "mono" }, id),
      h("p", {}, h("span", { class: "tag" }, r.kind), h("span", { class: "tag" }, `${r.wing} / ${r.room}`),
        r.pinned ? h("span", { class: "tag" }, r.project ? "pinned in this project" : "pinned") : null, r.forgotten ? h("span", { class: "tag forgotten" }, "forgotten") : null,
        r.supersededBy ? h("a", { class: "tag superseded", href: `#/memory/${enc(agent)}?id=mem_${r.supersededBy}` }, `superseded by mem_${r.supersededBy}`) : null),
      h("div", { class: "part memory" }, h("pre", {}, r.text)),
      h("p", { class: "muted" }, `Said ${when(r.eventTime)} · stored ${when(r.createdAt)} · weight ${r.weight}`),
      h("p", { class: "mono", id: "provenance" }, "From: ", provenanceLink(agent, r)),
      r.subject ? h("p", {}, `States: ${r.subject} · ${r.predicate}`) : null,
      statements.changed.length ? h("div", { id: "changed" }, h("h2", {}, "Since changed"),
        h("ul", {}, statements.changed.map((c) => h("li", {}, `${c.statement}, now ${c.now}`,
          c.in ? [" (", h("a", { href: `#/memory/${enc(agent)}?id=${enc(c.in)}` }, c.in), ")"] : null)))) : null,
      statements.replaced.length ? h("div", { id: "replaced" }, h("h2", {}, "Replaced"),
        h("ul", {}, statements.replaced.map((c) => h("li", {}, `${c.statement} → ${c.now}`,
          c.was_in ? [" (was ", h("a", { href: `#/memory/${enc(agent)}?id=${enc(c.was_in)}` }, c.was_in), ")"] : null)))) : null,
      chain.length > 1 ? h("div", { id: "history" }, h("h2", {}, "Supersession history (oldest first)"),
        h("table", {}, chain.map((c) => h("tr", { class: `mem_${c.id}` === id ? "selected" : "" },
          h("td", { class: "mono" }, `mem_${c.id}`), h("td", {}, when(c.eventTime ?? c.createdAt)),
          h("td", {}, c.text.slice(0, 200)), h("td", {}, c.supersededBy ? `→ mem_${c.supersededBy}` : "current"))))) : null,
      r.forgotten || r.supersededBy ? null : h("p", {}, correct, " ", pinToggle, ...(pinEverywhere ? [" ", pinEverywhere] : [])),
      r.forgotten ? null : forget].filter((part) => part !== null));
  } catch (e) {
    detail.replaceChildren(failure(e));
  }
}

// ---- Knowledge graph -----------------------------------------------------------------------------

async function triples(agent, params) {
  setNav(agent, "triples");
  const offset = Number(params.get("offset")) || 0, limit = 50;
  const page = await api(`/api/triples?agent=${enc(agent)}&offset=${offset}&limit=${limit}`);
  const go = (off) => navigate(`#/triples/${enc(agent)}?offset=${off}`);
  if (page.total === 0 && offset === 0) {
    show(h("h1", {}, `Knowledge graph of ${agent}`),
      h("p", { id: "no-triples" }, "No facts yet. MemCC reads (subject, predicate, object) facts from what is said about ",
        "a person — \"I live in Lisbon\", \"I work at Fidelity\", \"my sister Ana is a nurse\", \"我住在北京\" — as the ",
        "conversation is compacted or a memory is added (with a chat model configured, from summaries too). A later ",
        "statement of the same kind replaces an earlier one, which stays here marked superseded."));
    return;
  }
  show(h("h1", {}, `Knowledge graph of ${agent}`),
    h("p", { class: "muted" }, `${fmt(page.total)} triple(s)`),
    h("table", { id: "triples" },
      h("tr", {}, ["Subject", "Predicate", "Object", "Valid from", "Until", "Source"].map((t) => h("th", {}, t))),
      page.items.map((t) => h("tr", {}, h("td", {}, t.subject), h("td", {}, t.predicate), h("td", {}, t.object),
        h("td", {}, when(t.validFrom)), h("td", {}, t.supersededBy ? `${when(t.validUntil)} (superseded)` : when(t.validUntil)),
        h("td", { class: "mono" }, t.sourceRecord ? h("a", { href: `#/memory/${enc(agent)}?id=mem_${t.sourceRecord}` }, `mem_${t.sourceRecord}`) : "—")))),
    h("div", { class: "pager" },
      h("button", { disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, "← newer"),
      h("button", { disabled: offset + limit >= page.total, onclick: () => go(offset + limit) }, "older →")));
}

// ---- Routing --------------------------------------------------------------------------------------

async function route() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || "");
  document.body.dataset.ready = "0";
  try {
    if (parts[0] === "session" && parts.length === 3) await session(parts[1], parts[2], params);
    else if (parts[0] === "prompt" && parts.length === 3) await promptView(parts[1], parts[2], params);
    else if (parts[0] === "memory" && parts.length === 2) await memory(parts[1], params);
    else if (parts[0] === "triples" && parts.length === 2) await triples(parts[1], params);
    else await home();
  } catch (e) {
    show(failure(e));
  }
  // Tests (and people) can tell a page has finished loading.
  document.body.dataset.ready = "1";
}

window.addEventListener("hashchange", route);
route();
