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

/// The model is read from the file prepared beside its sources; that file is made on first
/// load, read in place later with the same results, and made again when it is damaged or its
/// sources change.
#[test]
fn the_prepared_model_embeds_as_the_sources_do_and_is_remade_when_stale() {
    use memcc_memory::embed::prepared::FILE;
    let Some(source) = model_dir() else {
        memcc_testkit::skip("the USE model is not installed (run scripts/fetch-model.sh, or set MEMCC_MODEL_DIR)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for f in ["weights.npz", "sp.model"] {
        std::fs::copy(source.join(f), dir.path().join(f)).unwrap();
    }
    let texts = ["Alice moved the API to port 8443 last Tuesday.", "我们决定下周发布", "emoji 🎉 and ünïcödé"];
    let first = Usem3::load(dir.path()).unwrap();
    let prepared = dir.path().join(FILE);
    assert!(prepared.is_file(), "the first load prepares the model");
    let want = first.embed(&texts).unwrap();
    let ids: Vec<Vec<u32>> = texts.iter().map(|t| first.tokenize(t)).collect();
    drop(first);
    let same = |why: &str| {
        let model = Usem3::load(dir.path()).unwrap();
        assert_eq!(model.embed(&texts).unwrap(), want, "{why}: the same vectors, bit for bit");
        assert_eq!(texts.iter().map(|t| model.tokenize(t)).collect::<Vec<_>>(), ids, "{why}: the same token ids");
    };
    same("read in place");
    // Cut short: it does not read, so it is made again.
    let len = std::fs::metadata(&prepared).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&prepared).unwrap().set_len(len / 2).unwrap();
    same("after the prepared file was cut short");
    assert_eq!(std::fs::metadata(&prepared).unwrap().len(), len, "made again");
    // Sources rewritten (a new fetch): made again from them.
    let before = std::fs::metadata(&prepared).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::copy(source.join("sp.model"), dir.path().join("sp.model")).unwrap();
    same("after the sources changed");
    assert!(std::fs::metadata(&prepared).unwrap().modified().unwrap() > before, "made again");
    // A directory of other files is still an error naming what is missing.
    std::fs::remove_file(dir.path().join("sp.model")).unwrap();
    let err = Usem3::load(dir.path()).err().expect("sp.model is missing").to_string();
    assert!(err.contains("sp.model") && err.contains("memcc model fetch"), "{err}");
}
