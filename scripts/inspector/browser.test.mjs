// The inspector in a real headless Chromium (Debian's), driven by playwright-core: every page
// loads, a DAG node expands down to raw messages, the prompt view names each recalled line's
// record, a memory search finds records, forget (after its confirmation) hides one, and the
// knowledge graph lists triples. Screenshots go to SCREENSHOTS.
// Env: INSPECTOR_URL, AGENT, SESSION (compacted), NEXT_SESSION, QUESTION (asked in the next
// session), SEARCH (memory search words), SCREENSHOTS, CHROMIUM, PLAYWRIGHT_DIR.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const base = env("INSPECTOR_URL").replace(/\/$/, "");
const bigBase = env("BIG_INSPECTOR_URL").replace(/\/$/, ""), bigSession = env("BIG_SESSION");
const agent = env("AGENT"), session = env("SESSION"), next = env("NEXT_SESSION"), shots = env("SCREENSHOTS");
const question = env("QUESTION"), search = env("SEARCH");
const { chromium } = createRequire(join(env("PLAYWRIGHT_DIR"), "/"))("playwright-core");

const browser = await chromium.launch({
  executablePath: env("CHROMIUM"),
  headless: true,
  // No network beyond loopback here: keep Chromium from trying.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const failures = [];
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on("pageerror", (e) => failures.push(`page error: ${e.message}`));
  // A 404 the page handles (the unknown-session check below) is logged by Chromium too.
  page.on("console", (m) => m.type() === "error" && !/Failed to load resource/.test(m.text()) && failures.push(`console: ${m.text()}`));
  const ready = () => page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: 60_000 });
  const visit = async (hash) => {
    await page.evaluate(() => (document.body.dataset.ready = "0"));
    await page.evaluate((h) => (location.hash = h), hash);
    await ready();
    assert.equal(await page.locator("#error").count(), 0, `error on ${hash}: ${await page.locator("#error").allTextContents()}`);
  };
  const shot = (name) => page.screenshot({ path: join(shots, name), fullPage: true });

  // Agents and sessions.
  await page.goto(`${base}/`);
  await ready();
  await page.locator(`tr[data-session="${session}"]`).waitFor();
  await page.locator(`tr[data-session="${next}"]`).waitFor();
  const row = await page.locator(`tr[data-session="${session}"]`).textContent();
  assert.ok(/\d{4}-\d\d-\d\d \d\d:\d\d.*\d{4}-\d\d-\d\d \d\d:\d\d/.test(row), `a session shows when it started and was last active: ${row}`);
  const navText = await page.locator("#nav").textContent();
  assert.ok(!navText.includes("null"), `the home page's navigation has no "null": ${navText}`);
  await shot("1-sessions.png");

  // The DAG: click the first top node, then its first child, and so on down to a leaf's messages.
  await page.evaluate(() => (document.body.dataset.ready = "0"));
  await page.locator(`tr[data-session="${session}"]`).click();
  await ready();
  const roots = await page.locator("svg.dag rect[data-node]").count();
  assert.ok(roots >= 1, "the compacted session draws its top summaries");
  let node = await page.locator("svg.dag rect[data-node]").first().getAttribute("data-node");
  for (let depth = 0; depth < 12; depth++) {
    const before = await page.locator("svg.dag rect[data-node]").count();
    await page.locator(`svg.dag rect[data-node="${node}"]`).click();
    await page.locator("#node-detail h2.mono").filter({ hasText: node }).waitFor();
    const messages = await page.locator("#raw-messages .msg").count();
    if (messages > 0) break;
    const after = await page.locator("svg.dag rect[data-node]").count();
    assert.ok(after > before, `expanding ${node} shows its children`);
    // Down to its first child.
    node = await page.locator(`svg.dag rect[data-parent="${node}"]`).first().getAttribute("data-node");
  }
  const raw = await page.locator("#raw-messages .msg").count();
  assert.ok(raw > 0, "a leaf expands to its raw messages");
  // An expanded summary shows its whole text, not the 240-character preview the DAG draws.
  const summaryText = await page.locator("#summary-text pre").textContent();
  assert.ok(summaryText.length > 300, `the summary's whole text (${summaryText.length} characters)`);
  assert.ok((await page.locator("svg.dag rect.message").count()) === raw, "and draws them");
  const firstText = await page.locator("#raw-messages .msg pre").first().textContent();
  assert.ok(firstText.trim().length > 0 && !firstText.startsWith("{"), `raw messages show their words, not their JSON: ${firstText}`);
  await shot("2-dag.png");

  // A session of 8,400 messages: opening a summary follows it down to a leaf, whose label and
  // messages are readable (the drawing zooms to it); scrolling zooms, "Whole session" resets.
  await page.goto(`${bigBase}/#/session/main/${encodeURIComponent(bigSession)}`);
  await ready();
  const stats = await page.locator("#dag-stats").textContent();
  assert.ok(/8,400 messages/.test(stats), `the long session's stats: ${stats}`);
  const wholeText = await page.locator("#dag-range").textContent();
  const width = async (id) => Number(await page.locator(`svg.dag rect[data-node="${id}"]`).getAttribute("width"));
  let big = await page.locator("svg.dag rect[data-node]").first().getAttribute("data-node");
  for (let depth = 0; depth < 12; depth++) {
    await page.locator(`svg.dag rect[data-node="${big}"]`).click();
    await page.locator("#node-detail h2.mono").filter({ hasText: big }).waitFor();
    assert.ok((await width(big)) > 70, `${big}, opened, is drawn wide enough to label (${await width(big)})`);
    if ((await page.locator("#raw-messages .msg").count()) > 0) break;
    big = await page.locator(`svg.dag rect[data-parent="${big}"]`).first().getAttribute("data-node");
  }
  const leafMessages = await page.locator("svg.dag rect.message").count();
  assert.ok(leafMessages > 0, "the long session's leaf draws its messages");
  const narrowest = await page.locator("svg.dag rect.message").evaluateAll((rs) => Math.min(...rs.map((r) => Number(r.getAttribute("width")))));
  assert.ok(narrowest >= 4, `each message is wide enough to point at (${narrowest})`);
  const label = await page.locator("svg.dag text").allTextContents();
  assert.ok(label.some((t) => /^#\d+–\d+$/.test(t)), `the leaf is labelled with its messages: ${label.slice(0, 6)}`);
  const zoomed = await page.locator("#dag-range").textContent();
  assert.notEqual(zoomed, wholeText, "the drawing followed the opened node");
  await shot("2b-dag-8k-leaf.png");
  await page.locator("#dag-whole").click();
  assert.equal(await page.locator("#dag-range").textContent(), wholeText, "Whole session shows it all again");
  const box = await page.locator("svg.dag").boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((w) => document.querySelector("#dag-range").textContent !== w, wholeText);
  await shot("2c-dag-8k-zoomed.png");
  await page.goto(`${base}/`);
  await ready();

  // The assembled prompt of the next session, with a question that recalls the long one.
  await visit(`#/prompt/${encodeURIComponent(agent)}/${encodeURIComponent(next)}?budget=4000&pending=${encodeURIComponent(question)}`);
  const sections = await page.locator("#sections tr[data-section]").allTextContents();
  assert.ok(sections.length >= 3, `sections listed: ${sections}`);
  const layers = await page.locator("[data-layer]").evaluateAll((ls) => ls.map((l) => l.dataset.layer));
  assert.ok(layers.includes("recall"), `L3 recalled something: ${layers}`);
  const items = await page.locator('[data-layer="recall"] tr[data-item^="mem_"]').count();
  assert.ok(items > 0, "each recalled line names its record");
  const from = await page.locator('[data-layer="recall"] tr[data-item^="mem_"] td.mono').nth(1).textContent();
  assert.ok(from.includes(session), `a recalled line says which session it came from: ${from}`);
  // …and why it is there: the parts of its score and the question's words it holds.
  const why = await page.locator('[data-layer="recall"] tr[data-item^="mem_"] td.why').first().textContent();
  assert.ok(/(words|meaning) \d\.\d\d/.test(why) && why.includes("matched:"), `a recalled line explains its score: ${why}`);
  // A part shown in part (the recalled memory, here) reads whole on "Show all".
  const cutIndex = await page.locator(".part button.show-all").first().getAttribute("data-part");
  assert.ok(cutIndex !== null, "a long prompt part is shown in part, with Show all");
  const cutPart = page.locator(`.part[data-part="${cutIndex}"]`);
  const before = (await cutPart.locator("pre").textContent()).length;
  await cutPart.locator("button.show-all").click();
  await cutPart.locator("button.show-all").waitFor({ state: "detached" });
  const after = await cutPart.locator("pre").textContent();
  assert.ok(after.length > before && !after.includes("[… shown in part]"), `Show all reads the part whole (${before} → ${after.length})`);
  await shot("3-prompt.png");

  // Memory: search, open a record, forget it after confirming.
  await visit(`#/memory/${encodeURIComponent(agent)}`);
  assert.ok((await page.locator("#records tr[data-record]").count()) > 0, "a page of records");
  await page.locator("#search").fill(search);
  await page.evaluate(() => (document.body.dataset.ready = "0"));
  await page.locator("#search").press("Enter");
  await ready();
  const hits = await page.locator("#records tr[data-record]").count();
  assert.ok(hits > 0, "the search finds records");
  const target = await page.locator("#records tr[data-record]").first().getAttribute("data-record");
  await page.locator(`#records tr[data-record="${target}"]`).click();
  await page.locator("#record-detail h2.mono").filter({ hasText: target }).waitFor();
  await page.locator("#forget").waitFor();
  // The record links to the summary it came from, opened in its session's DAG with the
  // record's source messages marked.
  const link = page.locator("#provenance a");
  if (await link.count()) {
    const href = await link.getAttribute("href");
    await visit(href);
    await page.locator("#node-detail h2.mono").first().waitFor();
    const marked = await page.locator("#node-detail .msg.source").count();
    assert.ok(marked > 0, `the record's source messages are marked in its summary (${href})`);
    await shot("4b-record-in-dag.png");
    await visit(`#/memory/${encodeURIComponent(agent)}`);
    await page.locator("#search").fill(search);
    await page.evaluate(() => (document.body.dataset.ready = "0"));
    await page.locator("#search").press("Enter");
    await ready();
    await page.locator(`#records tr[data-record="${target}"]`).click();
    await page.locator("#forget").waitFor();
  } else {
    assert.fail(`${target} has no summary to link to`);
  }
  const detail = await page.locator("#record-detail").textContent();
  assert.ok(!/null|undefined/.test(detail), `no "null" where a record lacks a part: ${detail}`);
  await shot("4-memory.png");
  page.once("dialog", (d) => d.accept());
  await page.evaluate(() => (document.body.dataset.ready = "0"));
  await page.locator("#forget").click();
  await ready();
  const still = await page.locator(`#records tr[data-record="${target}"]`).count();
  assert.equal(still, 0, `${target} is gone from the results once forgotten`);

  // Correct another record through the browser's own dialog: the correction opens as a new
  // record, and the old one is its history. Then pin and unpin it.
  const other = await page.locator("#records tr[data-record]").first().getAttribute("data-record");
  await page.locator(`#records tr[data-record="${other}"]`).click();
  await page.locator("#record-detail h2.mono").filter({ hasText: other }).waitFor();
  const corrected = `Corrected in the browser test at ${Date.now()}.`;
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(corrected); });
  await page.locator("#edit").click();
  await page.locator("#record-detail pre").filter({ hasText: corrected }).waitFor();
  assert.ok(asked.startsWith(`Correct ${other}`), `the dialog names the record: ${asked}`);
  const correction = (await page.locator("#record-detail h2.mono").textContent()).trim();
  assert.notEqual(correction, other, "the correction is a record of its own");
  await page.locator("#pin").filter({ hasText: /^Pin$/ }).click();
  await page.locator("#record-detail .tag").filter({ hasText: /^pinned$/ }).waitFor();
  await page.locator("#pin").filter({ hasText: /^Unpin$/ }).click();
  await page.locator("#pin").filter({ hasText: /^Pin$/ }).waitFor();
  await shot("4c-corrected.png");

  // The knowledge graph.
  await visit(`#/triples/${encodeURIComponent(agent)}`);
  const triples = await page.locator("#triples tr").allTextContents();
  assert.ok(triples.some((t) => t.includes("lives_in") && t.includes("Boston")), `triples: ${triples}`);
  await shot("5-triples.png");
  // An agent without facts is told why the page is empty and what would fill it.
  await visit(`#/triples/nobody-${Date.now()}`);
  const empty = await page.locator("#no-triples").textContent();
  assert.ok(empty.includes("No facts yet") && empty.includes("I live in"), empty);
  // A page that cannot load says so instead of breaking.
  await visit(`#/session/${encodeURIComponent(agent)}/no-such-session`).catch(() => {});
  assert.match(await page.locator("#error").textContent(), /no-such-session/);
} finally {
  await browser.close();
}
assert.deepEqual(failures, [], "no script errors in the page");
console.log(`inspector browser test passed; screenshots in ${shots}`);
