//! The agent boundary over MCP: `memcc --agent alice mcp` acts for alice, whatever a call puts
//! in `agentId` — another agent's memory and conversations are out of reach (read, write,
//! forget alike) unless the operator names that agent with `--allow-agent`. Spoken as any MCP
//! client speaks it: JSON-RPC lines over the server's stdin and stdout.

mod common;

use std::io::{BufRead, Write};

use common::{McpClient, ok, run};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

/// `memcc --agent alice mcp --session alice-chat EXTRA…`.
fn alice_server(home: &std::path::Path, extra: &[&str]) -> McpClient {
    let mut args = vec!["--agent", "alice", "mcp", "--session", "alice-chat"];
    args.extend_from_slice(extra);
    McpClient::start(home, &args)
}

#[test]
fn an_mcp_client_acts_for_the_servers_agent_and_only_the_agents_its_operator_allows() {
    let home = tempfile::tempdir().unwrap();
    ok(run(home.path(), &["--agent", "bob", "memory", "add", "Bob's locker code is 4242."]));
    let mut alice = alice_server(home.path(), &[]);
    let refused = |r: Result<String, String>| match r {
        Err(e) => assert!(e.contains("not allowed") && e.contains("alice"), "{e}"),
        Ok(out) => panic!("served another agent: {out}"),
    };
    // Every way in to bob is closed: read, write, forget, conversations.
    refused(alice.call("memory_search", json!({"query": "locker code", "agentId": "bob"})));
    refused(alice.call("memory_get", json!({"id": "mem_1", "agentId": "bob"})));
    refused(alice.call("memory_add", json!({"text": "planted", "pin": true, "agentId": "bob"})));
    refused(alice.call("memory_forget", json!({"id": "mem_1", "purge": true, "agentId": "bob"})));
    refused(alice.call("lcm_grep", json!({"pattern": "locker", "agentId": "bob"})));
    refused(alice.call(
        "conversation_append",
        json!({"sessionId": "bob-chat", "messages": [{"role": "user", "content": "hi"}], "agentId": "bob"}),
    ));
    refused(alice.call("conversation_assemble", json!({"sessionId": "bob-chat", "agentId": "bob"})));
    // Her own calls work, naming herself or not, and never see bob's memory.
    let found = alice.call("memory_search", json!({"query": "locker code"})).unwrap();
    assert!(!found.contains("4242"), "{found}");
    assert!(alice.call("memory_add", json!({"text": "Alice parks on level 3.", "agentId": "alice"})).is_ok());
    drop(alice);
    // Bob's memory is as it was: nothing planted, nothing forgotten.
    let bob = ok(run(home.path(), &["--agent", "bob", "--json", "memory", "search", "locker code planted"]));
    assert!(bob.contains("4242") && !bob.contains("planted"), "{bob}");
    // The operator allows bob: now a call may name him.
    let mut both = alice_server(home.path(), &["--allow-agent", "bob"]);
    let found = both.call("memory_search", json!({"query": "locker code", "agentId": "bob"})).unwrap();
    assert!(found.contains("4242"), "{found}");
    refused(both.call("memory_search", json!({"query": "locker code", "agentId": "carol"})));
}

/// What a model sees of the contract: a call it got wrong comes back as a tool result marked
/// isError with MemCC's code first (it can read and correct it), ids are "mem_N" in every
/// answer, and the tools say which only read and which destroys.
#[test]
fn a_models_mistakes_come_back_as_error_results_and_ids_have_one_shape() {
    let home = tempfile::tempdir().unwrap();
    let mut c = alice_server(home.path(), &[]);
    let tools = c.request("tools/list", json!({}));
    let tool =
        |name: &str| tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap().clone();
    for read_only in [
        "memory_search",
        "memory_get",
        "memory_facts",
        "lcm_grep",
        "lcm_describe",
        "lcm_expand_query",
        "conversation_assemble",
    ] {
        assert_eq!(tool(read_only)["annotations"]["readOnlyHint"], json!(true), "{read_only}");
    }
    assert_eq!(tool("memory_forget")["annotations"]["destructiveHint"], json!(true));
    assert_eq!(tool("memory_add")["annotations"]["readOnlyHint"], json!(false));
    assert!(tool("memory_search")["annotations"]["title"].is_string());

    let added: Value =
        serde_json::from_str(&c.call("memory_add", json!({"text": "The boat is moored at pier 9."})).unwrap()).unwrap();
    let id = added["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("mem_"), "{added}");
    c.call("conversation_append", json!({"messages": [{"role": "user", "content": "Check the mooring lines."}]}))
        .unwrap();
    let got: Value = serde_json::from_str(&c.call("memory_get", json!({"id": id})).unwrap()).unwrap();
    assert_eq!(got["id"], json!(id), "memory_get answers the id as memory_search gives it");
    for (tool, args, code) in [
        ("memory_get", json!({"id": "mem_999999"}), "[not_found]"),
        ("lcm_grep", json!({"pattern": "(unclosed", "mode": "regex"}), "[invalid_input]"),
        ("lcm_grep", json!({"pattern": "x", "mode": "bogus"}), "[invalid_input]"),
        ("memory_add", json!({"text": "   "}), "[invalid_input]"),
        // A session nobody appended to is said, not started on the spot.
        ("conversation_assemble", json!({"sessionId": "alice-chta"}), "[unknown_session]"),
    ] {
        let v = c.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(v.get("error").is_none(), "{tool}: a tool result, not a JSON-RPC error: {v}");
        assert_eq!(v["result"]["isError"], json!(true), "{tool}: {v}");
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with(code), "{tool}: {text}");
    }
    // A typo'd role is kept as given, and the answer says so.
    let appended: Value = serde_json::from_str(
        &c.call("conversation_append", json!({"messages": [{"role": "usr", "content": "Typo in the role."}]})).unwrap(),
    )
    .unwrap();
    assert_eq!(appended["added"], json!(1), "{appended}");
    let warning = appended["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.starts_with("message 1: role \"usr\" is not user"), "{appended}");
    // camelCase everywhere, lcm_describe's summary included.
    c.call("conversation_append", json!({"messages": (0..40).map(|i| json!({"role": "user", "content": format!("Mooring note {i}: check the lines at pier 9 and the fenders.")})).collect::<Vec<_>>(), "budget": 300})).unwrap();
    let grep: Value =
        serde_json::from_str(&c.call("lcm_grep", json!({"pattern": "mooring", "scope": "summaries"})).unwrap())
            .unwrap();
    let summary_id = grep[0]["id"].as_str().expect("a summary matches").to_string();
    let described = c.call("lcm_describe", json!({"id": summary_id})).unwrap();
    assert!(described.contains("\"tokenCount\"") && !described.contains("token_count"), "{described}");
    let forgot: Value = serde_json::from_str(&c.call("memory_forget", json!({"id": id})).unwrap()).unwrap();
    assert_eq!(forgot["removed"], json!([id]), "{forgot}");
    // A query that matches nothing gets nothing, not the one record at 0.000.
    let none: Value = serde_json::from_str(&c.call("memory_search", json!({"query": "zzqx vrrk"})).unwrap()).unwrap();
    assert_eq!(none, json!([]), "{none}");
}

#[test]
fn a_models_tiny_budget_is_raised_to_the_floor_every_host_applies() {
    let home = tempfile::tempdir().unwrap();
    let mut c = alice_server(home.path(), &[]);
    let turns: Vec<Value> =
        (0..8).map(|i| json!({"role": "user", "content": format!("Short note {i} about the pier.")})).collect();
    let appended: Value =
        serde_json::from_str(&c.call("conversation_append", json!({"messages": turns, "budget": 1})).unwrap()).unwrap();
    // At a budget of 1 token these eight lines would be folded away; at the floor (256) they fit.
    assert_eq!(appended["compaction"]["compacted"], json!(false), "{appended}");
    let assembled: Value =
        serde_json::from_str(&c.call("conversation_assemble", json!({"budget": 0})).unwrap()).unwrap();
    assert!(assembled["messages"].as_array().unwrap().len() >= 8, "{assembled}");
}

#[test]
fn a_request_line_over_16_mib_is_answered_with_an_error_for_its_id_and_the_server_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let mut c = alice_server(home.path(), &[]);
    // The id last, as the TypeScript SDK writes it: the server finds it past the 16 MiB.
    let text = "a".repeat(17 * 1024 * 1024);
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"memory_add","arguments":{{"text":"{text}"}}}},"id":41}}"#
    );
    writeln!(c.stdin, "{line}").unwrap();
    c.stdin.flush().unwrap();
    let mut answer = String::new();
    c.stdout.read_line(&mut answer).unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], json!(41), "{answer}");
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("request too large") && message.contains("16777216"), "{message}");
    assert_eq!(answer["error"]["data"]["bytes"], json!(line.len() + 1));
    // Nothing of it was stored, and the next request is served as usual.
    let stats: Value = serde_json::from_str(&c.call("memory_search", json!({"query": "aaaa"})).unwrap()).unwrap();
    assert_eq!(stats, json!([]));
    assert!(c.call("memory_add", json!({"text": "Short notes still go in."})).is_ok());
}

/// An argument value a model (or an attacker behind it) might send: hostile strings, other
/// agents' names, sizes from nothing to far past every bound, numbers of any sign and size,
/// and the wrong type altogether.
fn wild_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec!["bob", "BOB", " bob", "bob\0", "alice", "", "*", "../bob", "mem_1", "sum_1"])
            .prop_map(|s| json!(s)),
        "\\PC{0,40}".prop_map(|s| json!(s)),
        any::<String>().prop_map(|s| json!(s)),
        (1usize..120_000).prop_map(|n| json!("locker ".repeat(n / 7 + 1))),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![Just(json!(-1.5e300)), Just(json!(1e300)), Just(json!(0)), Just(json!(u64::MAX))],
        Just(json!(null)),
        Just(json!(true)),
        Just(json!({"agentId": "bob"})),
        Just(json!([{"role": "usr", "content": "x"}])),
        Just(json!([{"role": "user", "content": "the locker code is"}])),
    ]
}

/// A wild string: hostile text, other agents' names, sizes from nothing to far past every bound.
fn wild_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "bob", "BOB", " bob", "bob\0", "alice", "", "*", "../bob", "mem_1", "sum_1", "msg_1"
        ])
        .prop_map(String::from),
        "\\PC{0,40}",
        any::<String>(),
        (1usize..120_000).prop_map(|n| "locker ".repeat(n / 7 + 1)),
        Just("(a+)+$ [[:^".to_string()),
    ]
}

/// A call to one of the tools: its required arguments as wild strings, often an `agentId`, and
/// a few other arguments given wild values of any type.
fn wild_call() -> impl Strategy<Value = (String, Value)> {
    let keys = [
        "query",
        "maxResults",
        "minScore",
        "wing",
        "agentId",
        "id",
        "text",
        "pin",
        "purge",
        "pattern",
        "mode",
        "scope",
        "sessionId",
        "limit",
        "ids",
        "maxTokens",
        "deep",
        "messages",
        "budget",
        "pending",
    ];
    let tools = vec![
        ("memory_search", "query"),
        ("memory_get", "id"),
        ("memory_add", "text"),
        ("memory_forget", "id"),
        ("lcm_grep", "pattern"),
        ("lcm_describe", "id"),
        ("lcm_expand_query", "query"),
        ("conversation_append", "messages"),
        ("conversation_assemble", "pending"),
        ("memory_facts", "about"),
    ];
    (
        prop::sample::select(tools),
        wild_string(),
        prop::option::weighted(0.3, wild_string()),
        prop::option::weighted(0.3, (prop::sample::select(keys.to_vec()), wild_value())),
    )
        .prop_map(|((tool, required), value, agent, extra)| {
            let mut args = serde_json::Map::new();
            if let Some((k, v)) = extra {
                args.insert(k.to_string(), v);
            }
            let value = match required {
                "messages" => json!([{"role": "user", "content": value}]),
                _ => json!(value),
            };
            args.insert(required.to_string(), value);
            if let Some(a) = agent {
                args.insert("agentId".into(), json!(a));
            }
            (tool.to_string(), Value::Object(args))
        })
}

/// Whatever a client sends, the server answers every call, stays up, and never lets alice's
/// server show or change bob's memory or conversation.
#[test]
fn any_arguments_get_an_answer_and_never_reach_another_agent() {
    let home = tempfile::tempdir().unwrap();
    ok(run(home.path(), &["--agent", "bob", "memory", "add", "Bob's locker code is 4242-QX."]));
    let bob_chat = home.path().join("bob.jsonl");
    std::fs::write(&bob_chat, "{\"role\": \"user\", \"content\": \"My locker code is 4242-QX, keep it.\"}\n").unwrap();
    ok(run(home.path(), &["--agent", "bob", "ingest", "--session", "bob-chat", bob_chat.to_str().unwrap()]));
    let bob_before = ok(run(home.path(), &["--agent", "bob", "--json", "memory", "search", "locker code"]));
    let alice = std::cell::RefCell::new(alice_server(home.path(), &[]));
    let (served, succeeded) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96);
    // A fixed seed: the same calls every run, so the share that reaches MemCC is a fact of the
    // generator, not of the day's luck.
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let rng = proptest::test_runner::TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&wild_call(), |(tool, arguments)| {
            served.set(served.get() + 1);
            let v = alice.borrow_mut().request("tools/call", json!({"name": tool, "arguments": arguments}));
            let text = v.to_string();
            prop_assert!(v.get("result").is_some() || v.get("error").is_some(), "no answer to {tool}: {text}");
            if v["result"]["isError"] != json!(true) && v.get("error").is_none() {
                succeeded.set(succeeded.get() + 1);
            }
            prop_assert!(!text.contains("4242-QX"), "{tool} {arguments} showed bob's memory: {text}");
            if let Some(content) = v["result"]["content"][0]["text"].as_str() {
                prop_assert!(content.len() <= 200_000, "{tool} answered {} bytes", content.len());
            }
            Ok(())
        })
        .unwrap();
    // Most calls are well formed enough to reach MemCC, not refused by the schema.
    eprintln!("{} of {} calls succeeded", succeeded.get(), served.get());
    assert!(succeeded.get() * 5 >= served.get(), "{} of {} calls succeeded", succeeded.get(), served.get());
    // Still serving, and bob's memory is as it was.
    let mut alice = alice.into_inner();
    assert!(alice.call("memory_search", json!({"query": "locker"})).is_ok());
    drop(alice);
    let bob_after = ok(run(home.path(), &["--agent", "bob", "--json", "memory", "search", "locker code"]));
    assert_eq!(bob_after, bob_before);
    let bob_chat = ok(run(home.path(), &["--agent", "bob", "--json", "stats", "--session", "bob-chat"]));
    let stats: Value = serde_json::from_str(&bob_chat).unwrap();
    assert_eq!(stats["messages"], 1, "nothing appended to bob's conversation: {stats}");
}

/// Schemas every client reads the same way: each argument has one type (an optional one is
/// left out, never `null`), a description, and its allowed values or range where it has them.
#[test]
fn every_tool_argument_has_one_type_a_description_and_its_values() {
    let home = tempfile::tempdir().unwrap();
    let mut c = alice_server(home.path(), &[]);
    let tools = c.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 12);
    let mut seen = 0;
    for tool in &tools {
        let schema = &tool["inputSchema"];
        let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
        for object in std::iter::once(schema).chain(defs.values()) {
            for (name, p) in object["properties"].as_object().unwrap() {
                seen += 1;
                let at = format!("{}.{name}", tool["name"]);
                assert!(p["type"].is_string(), "{at}: one type, not {}", p["type"]);
                assert!(p.get("anyOf").is_none() && p.get("oneOf").is_none(), "{at}: {p}");
                assert!(p["description"].as_str().is_some_and(|d| d.len() > 8), "{at} has no description");
            }
        }
    }
    assert!(seen >= 40, "{seen} arguments");
    let arg = |tool: &str, name: &str| -> Value {
        let t = tools.iter().find(|t| t["name"] == tool).unwrap();
        let s = &t["inputSchema"];
        s["properties"].get(name).cloned().unwrap_or_else(|| s["$defs"]["TurnMessage"]["properties"][name].clone())
    };
    assert_eq!(arg("lcm_grep", "mode")["enum"], json!(["text", "regex"]));
    assert_eq!(arg("lcm_grep", "scope")["enum"], json!(["messages", "summaries", "both"]));
    assert_eq!(arg("conversation_append", "role")["enum"], json!(["user", "assistant", "toolResult"]));
    assert_eq!(
        (arg("memory_search", "maxResults")["minimum"].clone(), arg("memory_search", "maxResults")["maximum"].clone()),
        (json!(1), json!(100))
    );
}

/// What memory knows about the user is reachable over MCP: the facts it learned, current first,
/// the one a later statement replaced marked as no longer holding, each with its memory.
#[test]
fn memory_facts_lists_what_memory_knows_about_someone() {
    let home = tempfile::tempdir().unwrap();
    let mut c = alice_server(home.path(), &[]);
    c.call("memory_add", json!({"text": "I live in Boston and I work at Fidelity."})).unwrap();
    c.call("memory_add", json!({"text": "Actually I moved: I live in Lisbon now."})).unwrap();
    let now: Value = serde_json::from_str(&c.call("memory_facts", json!({})).unwrap()).unwrap();
    assert_eq!(now["about"], "user");
    let facts = now["facts"].as_array().unwrap();
    let said = |f: &Value| format!("{} {} {}", f["subject"], f["predicate"], f["object"]).to_lowercase();
    assert!(facts.iter().any(|f| said(f).contains("lisbon") && f["current"] == true), "{now}");
    assert!(facts.iter().all(|f| !said(f).contains("boston")), "only what holds now: {now}");
    assert!(facts.iter().all(|f| f["source"].as_str().is_some_and(|s| s.starts_with("mem_"))), "{now}");
    let all: Value = serde_json::from_str(&c.call("memory_facts", json!({"history": true})).unwrap()).unwrap();
    let facts = all["facts"].as_array().unwrap();
    let boston = facts.iter().find(|f| said(f).contains("boston")).expect("the old home, in the history");
    assert_eq!(boston["current"], false, "{all}");
    let first_old = facts.iter().position(|f| f["current"] == false).unwrap();
    assert!(facts[..first_old].iter().all(|f| f["current"] == true), "current first: {all}");
}
