//! A fault inside MemCC during a search (a part of it that panics) is MemCC's error, coded
//! `internal`, not the caller's `invalid_input`; the runtime and its store go on.

use std::sync::Arc;

use memcc_memory::embed::{EmbedError, Embedder, HashingEmbedder};
use memcc_memory::{MemoryConfig, MemoryRuntime, RecordKind};

/// The hashing embedder, except that it panics on one query, as a buggy model binding might.
struct PanicsOnQuery(HashingEmbedder);

impl Embedder for PanicsOnQuery {
    fn model_id(&self) -> String {
        self.0.model_id()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.iter().any(|t| t.contains("trigger the fault")) {
            panic!("a bug in the embedder");
        }
        self.0.embed(texts)
    }
}

#[test]
fn a_search_part_that_panics_is_an_internal_error_and_the_runtime_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(PanicsOnQuery(HashingEmbedder::default()));
    let rt = MemoryRuntime::open(&dir.path().join("memory.db"), MemoryConfig::default(), embedder).unwrap();
    rt.add("main", "The spare key is under the blue flowerpot.", RecordKind::Fact, false, None).unwrap();
    let err = rt.memory_search("main", "where is the spare key? trigger the fault", 5, 0.0, None).unwrap_err();
    assert_eq!(err.code(), memcc_core::ErrorCode::Internal, "{err}");
    assert!(err.to_string().contains("panicked"), "{err}");
    let hits = rt.memory_search("main", "where is the spare key", 5, 0.0, None).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("flowerpot")), "{hits:?}");
}
