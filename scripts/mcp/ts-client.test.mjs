// `memcc mcp` through the official TypeScript SDK's client (scripts/mcp-ts-client.sh installs it):
// the handshake, every tool's schema as a strict client reads it (one type and a description per
// argument), and the tools called as a model would — a mistake comes back as an isError result.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";

const cache = process.env.MEMCC_MCP_TS ?? path.join(process.env.HOME, ".cache/memcc/mcp-ts");
const require = createRequire(path.join(cache, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const bin = process.env.MEMCC_BIN;
const home = process.env.MEMCC_HOME_DIR;

async function connect() {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["--home", home, "--embedding-model", "hashing", "mcp", "--session", "ts-chat"],
    stderr: "ignore",
  });
  const client = new Client({ name: "memcc-ts-check", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const textOf = (result) => result.content.map((c) => c.text).join("\n");

test("the TypeScript SDK's client reads every tool and uses them as a model would", async () => {
  assert.ok(bin && home, "MEMCC_BIN and MEMCC_HOME_DIR are set by scripts/mcp-ts-client.sh");
  const client = await connect();
  try {
    assert.equal(client.getServerVersion()?.name, "memcc");
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    for (const name of ["memory_search", "memory_get", "memory_add", "memory_forget", "memory_facts", "lcm_grep",
      "lcm_describe", "lcm_expand_query", "conversation_append", "conversation_assemble"]) {
      assert.ok(names.includes(name), `${name} is listed: ${names}`);
    }
    for (const tool of tools) {
      assert.ok(tool.description?.length > 20, `${tool.name} says what it does`);
      const objects = [tool.inputSchema, ...Object.values(tool.inputSchema.$defs ?? {})];
      for (const object of objects) {
        for (const [arg, schema] of Object.entries(object.properties ?? {})) {
          assert.equal(typeof schema.type, "string", `${tool.name}.${arg} has one type, not ${JSON.stringify(schema.type)}`);
          assert.ok(schema.description, `${tool.name}.${arg} has a description`);
        }
      }
    }

    const added = JSON.parse(textOf(await client.callTool({ name: "memory_add", arguments: { text: "I live in Lisbon and keep bees on the roof." } })));
    assert.match(added.id, /^mem_\d+$/);
    const found = JSON.parse(textOf(await client.callTool({ name: "memory_search", arguments: { query: "where do I live" } })));
    assert.ok(found.some((h) => h.text.includes("Lisbon")), JSON.stringify(found));
    const facts = JSON.parse(textOf(await client.callTool({ name: "memory_facts", arguments: {} })));
    assert.ok(facts.facts.some((f) => f.object === "Lisbon" && f.current), JSON.stringify(facts));
    await client.callTool({ name: "conversation_append", arguments: { messages: [{ role: "user", content: "The hive inspection is on Saturday." }] } });
    const assembled = JSON.parse(textOf(await client.callTool({ name: "conversation_assemble", arguments: { pending: "when is the inspection?" } })));
    assert.ok(JSON.stringify(assembled).includes("hive inspection"), "the conversation is in the next prompt");

    // A mistake is a result the model reads, not a protocol error.
    const wrong = await client.callTool({ name: "memory_get", arguments: { id: "mem_999999" } });
    assert.equal(wrong.isError, true);
    assert.match(textOf(wrong), /^\[not_found\]/);
  } finally {
    await client.close();
  }
});
