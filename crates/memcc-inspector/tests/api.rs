//! The inspector's HTTP API on a real socket over a real store: what each page reads, the
//! errors it shows, and the guards (loopback host names only; forget only from the page).

use std::sync::Arc;
use std::sync::mpsc;

use serde_json::Value;

use memcc::lab::context::SessionRef;
use memcc::lab::context::message::{AgentMessage, ContentPart};
use memcc::{Memcc, MemccConfig};

struct Server {
    base: String,
    http: ureq::Agent,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        Server::start_capped(None)
    }

    /// A server whose settings cap every prompt at `token_budget` tokens.
    fn start_capped(token_budget: Option<u32>) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let config = MemccConfig {
            data_dir: Some(dir.path().to_path_buf()),
            embedding_model: "hashing".into(),
            token_budget,
            ..Default::default()
        };
        let memcc = Memcc::open(config).unwrap();
        let s = SessionRef::new("trip");
        let t0 = 1_767_261_600_000i64;
        for i in 0..80i64 {
            let user = match i {
                3 => "I live in Oslo and I love hiking in the fjords.".to_string(),
                40 => "I moved: I live in Berlin now.".to_string(),
                10 => "We check the trip planner's code with Jest.".to_string(),
                60 => "We switched from Jest to Vitest for the trip planner.".to_string(),
                _ => format!("Question {i}: what are the museum opening hours on day {i} of the trip?"),
            };
            memcc.context.ingest(&s, &AgentMessage::user(&user).with_timestamp(t0 + i * 3_600_000)).unwrap();
            let answer = format!("Answer {i}: the museum opens at nine; tickets cost {} euros.", 10 + i);
            memcc
                .context
                .ingest(
                    &s,
                    &AgentMessage::assistant(vec![ContentPart::text(answer)]).with_timestamp(t0 + i * 3_600_000 + 1),
                )
                .unwrap();
        }
        memcc.context.flush("trip", 1_500).unwrap();
        memcc.context.ingest(&SessionRef::new("next"), &AgentMessage::user("Where do I live now?")).unwrap();
        let long = format!("{}THE END", "A long pasted log line. ".repeat(300));
        memcc.context.ingest(&SessionRef::new("long"), &AgentMessage::user(&long)).unwrap();
        // A Claude Code session in a repository, as its hook imports it.
        let transcript = concat!(
            "{\"type\":\"custom-title\",\"customTitle\":\"Fix the flaky checkout test\"}\n",
            "{\"type\":\"user\",\"sessionId\":\"cc-1\",\"cwd\":\"/home/ada/shop\",\"timestamp\":\"2099-12-05T10:00:00Z\",",
            "\"message\":{\"role\":\"user\",\"content\":\"Why does checkout time out?\"}}\n"
        );
        memcc.context.import_jsonl(None, transcript.as_bytes()).unwrap();
        let (tx, rx) = mpsc::channel();
        let memcc = Arc::new(memcc);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
            let addr = "127.0.0.1:0".parse().unwrap();
            runtime
                .block_on(memcc_inspector::serve(memcc, "main".into(), addr, |bound| tx.send(bound).unwrap()))
                .unwrap();
        });
        let bound = rx.recv().unwrap();
        let http = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        Server { base: format!("http://{bound}"), http, _dir: dir }
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let mut response = self.http.get(format!("{}{path}", self.base)).call().unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn ok(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        body
    }
}

#[test]
fn every_page_reads_what_it_shows_and_errors_say_what_is_wrong() {
    let server = Server::start();

    let overview = server.ok("/api/overview");
    let sessions = &overview["agents"][0]["sessions"];
    assert_eq!(overview["agents"][0]["agentId"], "main");
    assert_eq!(sessions.as_array().unwrap().len(), 4, "{overview}");
    // Newest first, each with what it is.
    let first = &sessions[0];
    assert_eq!(first["sessionId"], "cc-1", "{overview}");
    assert_eq!(
        (&first["title"], &first["project"], &first["projectPath"], &first["source"]),
        (
            &Value::from("Fix the flaky checkout test"),
            &Value::from("shop"),
            &Value::from("/home/ada/shop"),
            &Value::from("Claude Code")
        )
    );
    assert!(overview["agents"][0]["memoryRecords"].as_i64().unwrap() > 0);

    let dag = server.ok("/api/dag?session=trip");
    assert_eq!(dag["messages"], 160);
    let root = dag["roots"][0]["id"].as_str().unwrap().to_string();
    let node = server.ok(&format!("/api/node/{root}"));
    assert_eq!(node["node"]["id"], root.as_str());
    assert!(!node["summaries"].as_array().unwrap().is_empty() || !node["messages"].as_array().unwrap().is_empty());

    // Scoping and unknown ids: 404 with the error's code.
    let (status, body) = server.get(&format!("/api/node/{root}?agent=someone-else"));
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "{body}");
    let (status, body) = server.get("/api/dag?session=nope");
    assert_eq!((status, body["code"].as_str()), (404, Some("unknown_session")), "{body}");
    let (status, body) = server.get("/api/dag");
    assert_eq!(status, 400, "a missing parameter is a bad request: {body}");

    // The assembled prompt: parts account for the estimate, recalled lines name their records.
    let (status, body) = server.get("/api/assemble?session=next&budget=10");
    assert_eq!((status, body["code"].as_str()), (400, Some("invalid_input")), "{body}");
    let prompt = server.ok("/api/assemble?session=next&budget=4000");
    let parts: u64 = prompt["parts"].as_array().unwrap().iter().map(|p| p["tokens"].as_u64().unwrap()).sum();
    assert_eq!(parts + prompt["systemTokens"].as_u64().unwrap(), prompt["estimatedTokens"].as_u64().unwrap());
    let memory = prompt["memory"].as_array().unwrap();
    let recalled: Vec<&Value> = memory.iter().flat_map(|m| m["lines"].as_array().unwrap()).collect();
    assert!(recalled.iter().any(|l| l["text"].as_str().unwrap().contains("Berlin")), "{prompt}");
    for line in recalled.iter().filter(|l| l["id"].as_str().is_some_and(|id| id.starts_with("mem_"))) {
        assert_eq!(line["record"]["sourceSessionIds"][0], "trip", "{line}");
    }

    // A long message is shown cut, and read whole on request.
    let long = server.ok("/api/assemble?session=long&budget=8000");
    let (i, cut) = (long["parts"].as_array().unwrap().iter().enumerate())
        .find(|(_, p)| p["text"].as_str().unwrap().starts_with("A long pasted"))
        .expect("the long message");
    assert_eq!(cut["cut"], true);
    assert!(!cut["text"].as_str().unwrap().contains("THE END"), "shown in part");
    let whole = server.ok(&format!("/api/assemble?session=long&budget=8000&part={i}"));
    assert!(whole["text"].as_str().unwrap().ends_with("THE END"), "{whole}");
    let (status, body) = server.get("/api/assemble?session=long&budget=8000&part=99");
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "{body}");

    // Memory: a search, a filtered page, the statement's history.
    let found = server.ok("/api/memory?q=where%20do%20I%20live");
    assert!(found["total"].as_u64().unwrap() > 0);
    let prefs = server.ok("/api/memory?kind=preference&limit=1");
    assert_eq!(prefs["items"].as_array().unwrap().len(), 1);
    let facets = server.ok("/api/memory/facets");
    assert!(facets["kinds"].as_array().unwrap().iter().any(|k| k[0] == "preference"), "{facets}");
    let berlin = server.ok("/api/memory?kind=preference")["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["record"]["text"].as_str().unwrap().contains("Berlin"))
        .map(|i| format!("mem_{}", i["record"]["id"]))
        .expect("a preference about Berlin");
    let history = server.ok(&format!("/api/memory/{berlin}/history"));
    let texts: Vec<&str> = history.as_array().unwrap().iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("Oslo") && texts[1].contains("Berlin"), "oldest first: {texts:?}");
    let (status, _) = server.get("/api/memory/banana/history");
    assert_eq!(status, 400);
    // The statements of the record that says "I live in Berlin": what it replaced, and (of the
    // older one) what changed since and where.
    let all = server.ok("/api/triples?limit=100");
    let said_berlin = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["object"] == "Berlin")
        .and_then(|t| t["sourceRecord"].as_i64())
        .expect("a triple about Berlin, from a record");
    let statements = server.ok(&format!("/api/memory/mem_{said_berlin}/statements"));
    let replaced = &statements["replaced"][0];
    assert!(replaced["statement"].as_str().unwrap().contains("Oslo") && replaced["now"] == "Berlin", "{statements}");
    let oslo = replaced["was_in"].as_str().unwrap().to_string();
    let older = server.ok(&format!("/api/memory/{oslo}/statements"));
    assert_eq!(older["changed"][0]["now"], "Berlin", "{older}");
    assert!(older["changed"][0]["in"].as_str().is_some(), "it points at where the change was said: {older}");
    let triples = server.ok("/api/triples");
    assert!(triples["total"].as_i64().unwrap() > 0);
    // A record naming a choice replaced later says so too, and where.
    let jest = server.ok("/api/memory?q=planner%20code%20Jest")["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["record"]["text"].as_str().unwrap().contains("with Jest"))
        .map(|i| format!("mem_{}", i["record"]["id"]))
        .expect("the record that names Jest");
    let jest = server.ok(&format!("/api/memory/{jest}/statements"));
    let change = jest["changed"].as_array().unwrap().iter().find(|c| c["statement"] == "Jest").expect("{jest}");
    assert!(change["now"] == "Vitest" && change["in"].as_str().is_some(), "{jest}");

    // Correct and pin, from the page only: the correction supersedes the record, which stays.
    let post = |path: &str, body: serde_json::Value| {
        let mut response = server
            .http
            .post(format!("{}{path}", server.base))
            .header(memcc_inspector::WRITE_HEADER, "1")
            .header("content-type", "application/json")
            .send(body.to_string())
            .unwrap();
        let status = response.status().as_u16();
        (status, serde_json::from_str::<Value>(&response.body_mut().read_to_string().unwrap()).unwrap_or(Value::Null))
    };
    let said = format!("mem_{said_berlin}");
    let (status, corrected) =
        post(&format!("/api/memory/{said}/edit"), serde_json::json!({"text": "I live in Hamburg now."}));
    assert_eq!(status, 200, "{corrected}");
    let newer = corrected["id"].as_str().unwrap().to_string();
    let chain = server.ok(&format!("/api/memory/{newer}/history"));
    assert!(chain.as_array().unwrap().iter().any(|r| format!("mem_{}", r["id"]) == said), "its history: {chain}");
    let (status, pinned) = post(&format!("/api/memory/{newer}/pin"), serde_json::json!({"pinned": true}));
    assert_eq!((status, &pinned["changed"]), (200, &Value::from(true)), "{pinned}");
    let (status, everywhere) =
        post(&format!("/api/memory/{newer}/pin"), serde_json::json!({"pinned": true, "everywhere": true}));
    assert_eq!((status, &everywhere["everywhere"]), (200, &Value::from(true)), "{everywhere}");
    let chain = server.ok(&format!("/api/memory/{newer}/history"));
    let record = chain.as_array().unwrap().iter().find(|r| format!("mem_{}", r["id"]) == newer).unwrap();
    assert!(record["project"].is_null() && record["pinned"] == true, "pinned in every project: {record}");
    let no_header = server
        .http
        .post(format!("{}/api/memory/{newer}/pin", server.base))
        .header("content-type", "application/json")
        .send(r#"{"pinned": false}"#)
        .unwrap();
    assert_eq!(no_header.status().as_u16(), 403, "writes come from the page only");

    // Forget: only with the page's header; then gone; twice is "not found".
    let forget = |header: bool| {
        let mut request = server.http.post(format!("{}/api/memory/{berlin}/forget", server.base));
        if header {
            request = request.header(memcc_inspector::WRITE_HEADER, "1");
        }
        let mut response = request.header("content-type", "application/json").send("{}").unwrap();
        (response.status().as_u16(), response.body_mut().read_to_string().unwrap())
    };
    assert_eq!(forget(false).0, 403, "a cross-site form cannot forget");
    let (status, body) = forget(true);
    assert_eq!(status, 200, "{body}");
    let (status, body) = forget(true);
    assert_eq!(status, 404, "{body}");
    let after = server.ok("/api/memory?kind=preference");
    assert!(after["items"].as_array().unwrap().iter().all(|i| format!("mem_{}", i["record"]["id"]) != berlin));
}

#[test]
fn only_loopback_host_names_are_answered() {
    let server = Server::start();
    let page = |host: &str| {
        let mut response = server.http.get(format!("{}/", server.base)).header("host", host).call().unwrap();
        let csp = response.headers().get("content-security-policy").map(|v| v.to_str().unwrap().to_string());
        (response.status().as_u16(), response.body_mut().read_to_string().unwrap(), csp)
    };
    let (status, body, csp) = page("localhost:1234");
    assert_eq!(status, 200);
    assert!(body.contains("MemCC inspector") && csp.unwrap().contains("default-src 'self'"));
    assert_eq!(page("[::1]:9").0, 200);
    // DNS rebinding: a page on attacker.example resolving to 127.0.0.1 sends its own host name.
    assert_eq!(page("attacker.example:1234").0, 403);
    assert_eq!(page("127.0.0.1.attacker.example").0, 403);
}

#[test]
fn it_refuses_to_listen_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let config = MemccConfig {
        data_dir: Some(dir.path().to_path_buf()),
        embedding_model: "hashing".into(),
        memory_enabled: false,
        ..Default::default()
    };
    let memcc = Arc::new(Memcc::open(config).unwrap());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result =
        runtime.block_on(memcc_inspector::serve(memcc.clone(), "main".into(), "0.0.0.0:0".parse().unwrap(), |_| {}));
    assert!(matches!(result, Err(memcc_inspector::InspectorError::NotLoopback(_))));
    // A port in use is said once, with what to do.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let err = runtime.block_on(memcc_inspector::serve(memcc, "main".into(), addr, |_| {})).unwrap_err();
    let said = anyhow_like(&err);
    assert!(said.contains("is in use") && said.contains("--port 0"), "{said}");
    assert_eq!(said.matches("in use").count(), 1, "said once: {said}");
}

/// An error and its sources, as `anyhow`'s `{:#}` prints them at the CLI.
fn anyhow_like(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    s
}

/// The page asks for a budget as a host does, and gets what a host would: no more than the
/// configured `tokenBudget`.
#[test]
fn the_assembled_prompt_keeps_to_the_configured_cap() {
    let server = Server::start_capped(Some(1_000));
    let prompt = server.ok("/api/assemble?session=trip&budget=8000");
    assert_eq!(prompt["budget"], 1_000, "{prompt}");
    assert!(prompt["estimatedTokens"].as_u64().unwrap() <= 1_000, "{prompt}");
    let asked_less = server.ok("/api/assemble?session=trip&budget=600");
    assert_eq!(asked_less["budget"], 600, "below the cap, the ask stands");
    // No budget asked: what a host that names none gets — the cap here, else the hosts' default.
    assert_eq!(server.ok("/api/assemble?session=trip")["budget"], 1_000);
    let uncapped = Server::start_capped(None);
    assert_eq!(uncapped.ok("/api/assemble?session=trip")["budget"], memcc::Budget::UNSAID as u64);
}
