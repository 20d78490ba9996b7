//! Arbitrary bytes as a conversation: lines are messages (JSON when they parse, text otherwise),
//! the first two bytes a budget. Ingest, compact, assemble, flush, recall in a new session and
//! search: nothing may panic, no prompt may exceed its budget, nothing stored may be lost.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memcc::context::SessionRef;
use memcc::context::message::AgentMessage;
use memcc::{Memcc, MemccConfig};

fuzz_target!(|data: &[u8]| {
    let Some((head, body)) = data.split_first_chunk::<2>() else { return };
    let budget = 1 + usize::from(u16::from_le_bytes(*head));
    let dir = tempfile::tempdir().expect("temp dir");
    let config = MemccConfig {
        data_dir: Some(dir.path().to_path_buf()),
        embedding_model: "hashing".into(),
        ..Default::default()
    };
    let memcc = Memcc::open(config).expect("open");
    let session = SessionRef::new("fuzz");
    let mut stored = 0;
    for line in String::from_utf8_lossy(body).lines() {
        let message = match serde_json::from_str(line) {
            Ok(v) => AgentMessage::from_value(v),
            Err(_) => AgentMessage::user(line),
        };
        stored += memcc.context.ingest(&session, &message).expect("ingest").inserted.len();
        memcc.context.compact("fuzz", budget, false).expect("compact");
        let a = memcc.assemble_for(&session, budget, None, &[]).expect("assemble");
        assert!(a.estimated_tokens <= budget, "{} > {budget}", a.estimated_tokens);
    }
    if stored == 0 {
        return;
    }
    memcc.context.flush("fuzz", budget.max(64)).expect("flush");
    let report = memcc.context.verify("fuzz").expect("verify");
    assert!(report.ok() && report.messages == stored, "{report:?}");
    let question = [AgentMessage::user(&String::from_utf8_lossy(body))];
    let a = memcc.assemble_for(&SessionRef::new("next"), budget, None, &question).expect("recall");
    assert!(a.estimated_tokens <= budget);
    let _ = memcc.memory().expect("memory").memory_search("main", &String::from_utf8_lossy(body), 10, 0.0, None);
});
