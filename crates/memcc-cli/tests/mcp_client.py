"""Drive `memcc mcp` with the official Python MCP client (PyPI `mcp`), as an agent would.

    python mcp_client.py write|read|sampling|slow stdio MEMCC_BIN HOME
    python mcp_client.py write|read|sampling|slow http URL TOKEN

`sampling` offers the client's own model (sampling/createMessage) and appends a conversation
long enough to compact: the summaries must be that model's. `slow` does the same with a model
that takes 8 s a summary: the append must return in seconds, with progress, and the summaries
follow.

Prints one JSON object of what it observed; crates/memcc-cli/tests/mcp.rs asserts on it.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def attempt(session, tool, args):
    """A tool call that should fail: what the client saw (an MCP error or an error result)."""
    try:
        result = await session.call_tool(tool, args)
    except Exception as e:  # the MCP error a bad call must give
        return {"error": str(e)}
    if getattr(result, "is_error", False):
        return {"error": text_of(result)}
    return {"ok": text_of(result)}


async def write(session):
    out = {}
    tools = await session.list_tools()
    out["tools"] = sorted(t.name for t in tools.tools)
    out["schemas"] = {t.name: sorted((getattr(t, "input_schema", None) or {}).get("properties", {}).keys()) for t in tools.tools}
    added = json.loads(text_of(await session.call_tool("memory_add", {"text": "The canoe rental code is 7781."})))
    out["added"] = added
    turns = [
        {"role": "user", "content": f"Turn {i}: we planned the trip, and the passphrase is blue-otter-{i}. " + "More words about the plan. " * 12}
        for i in range(40)
    ]
    appended = json.loads(text_of(await session.call_tool("conversation_append", {"sessionId": "mcp-s", "messages": turns, "budget": 2000})))
    out["appended"] = appended["added"]
    out["compacted"] = appended["compaction"]["compacted"]
    hits = json.loads(text_of(await session.call_tool("lcm_grep", {"pattern": "blue-otter-3", "sessionId": "mcp-s"})))
    out["grep"] = [h["id"] for h in hits]
    expanded = json.loads(text_of(await session.call_tool("lcm_expand_query", {"ids": out["grep"][:1], "sessionId": "mcp-s"})))
    out["expanded"] = " ".join(i["text"] for i in expanded["items"])
    summary = next((h["summaryId"] for h in hits if h.get("summaryId")), None)
    if summary:
        described = json.loads(text_of(await session.call_tool("lcm_describe", {"id": summary})))
        out["described"] = described["summary"]["id"]
        out["method"] = described["summary"].get("method")
    assembled = json.loads(text_of(await session.call_tool("conversation_assemble", {"sessionId": "mcp-s", "budget": 1500, "pending": "what was the passphrase?"})))
    out["assembled_tokens"] = assembled["estimatedTokens"]
    resources = await session.list_resources()
    out["resources"] = [str(r.uri) for r in resources.resources]
    prompt = await session.read_resource("memcc://memory-prompt")
    out["prompt"] = "".join(getattr(c, "text", "") for c in prompt.contents)
    out["errors"] = {
        "get_bad_id": await attempt(session, "memory_get", {"id": "nonsense"}),
        "get_missing": await attempt(session, "memory_get", {"id": "mem_999999"}),
        "grep_bad_mode": await attempt(session, "lcm_grep", {"pattern": "x", "mode": "bogus"}),
        "grep_bad_regex": await attempt(session, "lcm_grep", {"pattern": "(unclosed", "mode": "regex"}),
        "search_no_query": await attempt(session, "memory_search", {}),
        "search_wrong_type": await attempt(session, "memory_search", {"query": 42}),
        "unknown_field": await attempt(session, "memory_get", {"id": "mem_1", "bogus": True}),
        "append_no_session": await attempt(session, "conversation_append", {"messages": []}),
        "expand_other_agent": await attempt(session, "lcm_expand_query", {"ids": out["grep"][:1], "agentId": "intruder"}),
        "unknown_tool": await attempt(session, "no_such_tool", {}),
        "forget_missing": await attempt(session, "memory_forget", {"id": "mem_999999"}),
    }
    return out


async def read(session):
    out = {}
    hits = json.loads(text_of(await session.call_tool("memory_search", {"query": "canoe rental code"})))
    found = [h for h in hits if "7781" in h["text"]]
    out["found"] = bool(found)
    if found:
        got = json.loads(text_of(await session.call_tool("memory_get", {"id": found[0]["id"]})))
        out["got"] = got["text"]
        await session.call_tool("memory_forget", {"id": found[0]["id"]})
        after = json.loads(text_of(await session.call_tool("memory_search", {"query": "canoe rental code"})))
        out["found_after_forget"] = any("7781" in h["text"] for h in after)
    return out


SAMPLED = []


async def sample(context, params):
    """The client's model: a short summary that says it was written here."""
    import mcp.types as types

    source = "".join(getattr(m.content, "text", "") for m in params.messages)
    SAMPLED.append({"system": bool(params.system_prompt), "max_tokens": params.max_tokens, "chars": len(source)})
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"CLIENT-MODEL summary {len(SAMPLED)}: the trip plan and its passphrases."),
        model="client-test-model",
    )


async def sampling(session):
    turns = [
        {"role": "user", "content": f"Turn {i}: we planned the canal walk, and the gate code is {4000 + i}. " + "More about the walk. " * 12}
        for i in range(40)
    ]
    appended = json.loads(text_of(await session.call_tool("conversation_append", {"sessionId": "sampled", "messages": turns, "budget": 2000})))
    hits = json.loads(text_of(await session.call_tool("lcm_grep", {"pattern": "CLIENT-MODEL", "sessionId": "sampled", "scope": "summaries"})))
    described = json.loads(text_of(await session.call_tool("lcm_describe", {"id": hits[0]["id"]}))) if hits else {}
    return {"method": described.get("summary", {}).get("method"),"compacted": appended["compaction"]["compacted"], "asked": SAMPLED, "summaries_by_client": len(hits)}


async def slow_sample(context, params):
    await asyncio.sleep(8)
    return await sample(context, params)


async def slow(session):
    import time
    turns = [
        {"role": "user", "content": f"Turn {i}: the lighthouse tour starts at pier {i}. " + "Details of the tour. " * 12}
        for i in range(40)
    ]
    progress = []

    async def on_progress(done, total, message):
        progress.append(done)

    started = time.monotonic()
    appended = json.loads(text_of(await session.call_tool(
        "conversation_append", {"sessionId": "slow", "messages": turns, "budget": 2000}, progress_callback=on_progress)))
    took = time.monotonic() - started
    # The summaries follow: the first by the client's model within a minute.
    hits = []
    for _ in range(60):
        hits = json.loads(text_of(await session.call_tool("lcm_grep", {"pattern": "CLIENT-MODEL", "sessionId": "slow", "scope": "summaries"})))
        if hits:
            break
        await asyncio.sleep(1)
    return {"took": took, "compaction": appended["compaction"], "added": appended["added"], "progress": progress,
            "summaries_by_client": len(hits)}


async def main():
    step, transport = sys.argv[1], sys.argv[2]
    run = {"write": write, "read": read, "sampling": sampling, "slow": slow}[step]
    callback = {"sampling": sample, "slow": slow_sample}.get(step)
    if transport == "stdio":
        params = StdioServerParameters(command=sys.argv[3], args=["--home", sys.argv[4], "--embedding-model", "hashing", "mcp"])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w, sampling_callback=callback) as session:
                init = await session.initialize()
                out = await run(session)
    else:
        url, token = sys.argv[3], sys.argv[4]
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            async with streamable_http_client(url, http_client=client) as (r, w, *_):
                async with ClientSession(r, w, sampling_callback=callback) as session:
                    init = await session.initialize()
                    out = await run(session)
    info = getattr(init, "server_info", None) or getattr(init, "serverInfo")
    out["server"] = [info.name, info.version]
    out["instructions"] = getattr(init, "instructions", None) or ""
    print(json.dumps(out))


asyncio.run(main())
