//! The USE multilingual v3 port against vectors and token ids computed once by the model's
//! reference implementation (the wheel's numpy backend): cosine ≥ 0.9999.
//! Needs the model files (scripts/fetch-model.sh); skips with a message without them (fails under CI=true).

use memcc_memory::embed::Embedder;
use memcc_memory::embed::usem3::{Usem3, default_dir};

fn model_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("MEMCC_MODEL_DIR").map(std::path::PathBuf::from).unwrap_or_else(default_dir);
    dir.join("weights.npz").exists().then_some(dir)
}

#[test]
fn matches_reference_vectors_and_token_ids() {
    let Some(dir) = model_dir() else {
        memcc_testkit::skip("the USE model is not installed (run scripts/fetch-model.sh, or set MEMCC_MODEL_DIR)");
        return;
    };
    let golden: serde_json::Value = serde_json::from_str(include_str!("fixtures/usem3_golden.json")).unwrap();
    let model = Usem3::load(&dir).unwrap();
    let sentences: Vec<&str> = golden["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    for (s, ids) in sentences.iter().zip(golden["token_ids"].as_array().unwrap()) {
        let want: Vec<u32> = ids.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        assert_eq!(model.tokenize(s), want, "token ids of {s:?}");
    }
    let vectors = model.embed(&sentences).unwrap();
    for ((s, got), want) in sentences.iter().zip(&vectors).zip(golden["vectors"].as_array().unwrap()) {
        let want: Vec<f32> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let cos: f32 = got.iter().zip(&want).map(|(a, b)| a * b).sum();
        assert!(cos >= 0.9999, "{s:?}: cosine {cos}");
    }
    // Batching does not change a sentence's vector.
    let one = model.embed(&[sentences[3]]).unwrap();
    let cos: f32 = one[0].iter().zip(&vectors[3]).map(|(a, b)| a * b).sum();
    assert!(cos > 0.99999);
}
