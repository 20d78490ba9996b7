//! The `VectorStore` contract, run against every implementation (today: the flat int8 scan, on
//! each of its paths), and the scan's recall against brute-force f32 search.

use std::sync::Arc;

use memcc_memory::vector::{FlatScan, ScanPlan, VectorStore};
use proptest::prelude::*;

fn normalised(seed: u64, dim: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15).wrapping_add(1);
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// What every `VectorStore` must do.
pub fn contract(make: impl Fn(usize) -> Box<dyn VectorStore>) {
    let dim = 32;
    let store = make(dim);
    assert!(store.is_empty());
    for i in 0..100 {
        store.upsert(i, if i % 2 == 0 { "a" } else { "b" }, &normalised(i as u64, dim));
    }
    assert_eq!(store.len(), 100);
    // Exact match first, owners respected.
    let hits = store.search(&normalised(42, dim), 5, &["a".to_string()]).unwrap();
    assert_eq!(hits[0].id, 42);
    assert!((hits[0].score - 1.0).abs() < 2e-2, "int8 scores are within quantisation error");
    assert!(hits.iter().all(|h| h.id % 2 == 0));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(store.search(&normalised(42, dim), 5, &["nobody".to_string()]).unwrap().is_empty());
    // Upsert replaces, remove removes.
    store.upsert(42, "a", &normalised(4242, dim));
    assert_eq!(store.len(), 100);
    assert_ne!(store.search(&normalised(42, dim), 1, &["a".to_string()]).unwrap()[0].id, 42);
    store.remove(42);
    store.remove(42);
    assert_eq!(store.len(), 99);
    assert!(store.search(&normalised(4242, dim), 3, &["a".to_string()]).unwrap().iter().all(|h| h.id != 42));
    // Wrong dimensions are ignored, not a panic.
    store.upsert(1000, "a", &[1.0, 0.0]);
    assert_eq!(store.len(), 99);
    assert!(store.search(&[1.0, 0.0], 3, &["a".to_string()]).unwrap().is_empty());
}

#[test]
fn exact_scan_meets_the_contract() {
    contract(|dim| Box::new(FlatScan::new(dim, None)));
    contract(|dim| {
        // With an exact-vector source for the rerank, as the runtime builds it.
        let table: Arc<std::sync::Mutex<std::collections::HashMap<i64, Vec<f32>>>> = Arc::default();
        let source = table.clone();
        let scan = FlatScan::new(
            dim,
            Some(Box::new(move |ids: &[i64]| {
                let t = source.lock().unwrap();
                Ok(ids.iter().filter_map(|id| t.get(id).map(|v| (*id, v.clone()))).collect())
            })),
        );
        Box::new(Recording { scan, table, dim })
    });
}

/// Keeps the exact vectors the rerank source serves, as `memory.db` does for the runtime.
struct Recording {
    scan: FlatScan,
    table: Arc<std::sync::Mutex<std::collections::HashMap<i64, Vec<f32>>>>,
    dim: usize,
}

impl VectorStore for Recording {
    fn dim(&self) -> usize {
        self.scan.dim()
    }
    fn upsert(&self, id: i64, owner: &str, v: &[f32]) {
        if v.len() == self.dim {
            self.table.lock().unwrap().insert(id, v.to_vec());
        }
        self.scan.upsert(id, owner, v)
    }
    fn remove(&self, id: i64) {
        self.table.lock().unwrap().remove(&id);
        self.scan.remove(id)
    }
    fn search(
        &self,
        q: &[f32],
        k: usize,
        owners: &[String],
    ) -> memcc_memory::error::Result<Vec<memcc_memory::vector::VectorHit>> {
        self.scan.search(q, k, owners)
    }
    fn len(&self) -> usize {
        self.scan.len()
    }
}

/// Every path of the scan on small data: shortlisting by sign bits from the first vector, and
/// scoring split across threads from 8 candidates.
const EVERY_PATH: ScanPlan =
    ScanPlan { shortlist_from: 0, shortlist_fraction: 4, shortlist_per_result: 2, parallel_from: 8 };

#[test]
fn the_shortlisting_and_split_scan_meets_the_contract() {
    contract(|dim| Box::new(FlatScan::with_plan(dim, None, EVERY_PATH)));
}

/// Split across threads, the scan finds what one thread would: the same hits, in order, with
/// owners respected across the split, and a vector in the last part found.
#[test]
fn a_scan_split_across_threads_finds_what_one_thread_finds() {
    let dim = 16;
    let n = 5_000;
    let one_thread = ScanPlan { shortlist_from: usize::MAX, parallel_from: usize::MAX, ..EVERY_PATH };
    let split = ScanPlan { parallel_from: 100, ..one_thread };
    let (large, small) = (FlatScan::with_plan(dim, None, split), FlatScan::with_plan(dim, None, one_thread));
    for i in 0..n as i64 {
        let owner = if i % 3 == 0 { "a" } else { "b" };
        large.upsert(i, owner, &normalised(i as u64, dim));
        small.upsert(i, owner, &normalised(i as u64, dim));
    }
    let q = normalised(7, dim);
    let hits = large.search(&q, 25, &["a".to_string()]).unwrap();
    assert_eq!(hits, small.search(&q, 25, &["a".to_string()]).unwrap());
    assert_eq!(hits.len(), 25);
    assert!(hits.iter().all(|h| h.id % 3 == 0));
    let last = (n - 1) as i64 / 3 * 3;
    assert_eq!(large.search(&normalised(last as u64, dim), 1, &["a".to_string()]).unwrap()[0].id, last);
}

/// Vectors with neighbours, as embeddings have: 20 topics, each vector its topic plus noise, and
/// queries near a stored vector.
fn topical(seed: u64, dim: usize) -> Vec<f32> {
    let topic = normalised(seed % 20 + 1_000_000, dim);
    let noise = normalised(seed, dim);
    let mut v: Vec<f32> = topic.iter().zip(&noise).map(|(t, n)| t + 1.5 * n).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// The sign-bit shortlist (by default a tenth of the vectors) loses almost nothing of what scoring every
/// vector finds, on vectors that have neighbours; and it keeps the vector the query is.
#[test]
fn the_sign_bit_shortlist_keeps_the_nearest_vectors() {
    let (dim, n) = (128, 10_000);
    let every = ScanPlan { shortlist_from: usize::MAX, ..ScanPlan::default() };
    let shortlisted = ScanPlan { shortlist_from: 0, ..ScanPlan::default() };
    let (full, short) = (FlatScan::with_plan(dim, None, every), FlatScan::with_plan(dim, None, shortlisted));
    for i in 0..n {
        let v = topical(i, dim);
        full.upsert(i as i64, "a", &v);
        short.upsert(i as i64, "a", &v);
    }
    let (mut found, mut wanted) = (0, 0);
    for qi in 0..50u64 {
        // A stored vector, moved a little: a question near a fact.
        let near = topical(qi * 197, dim);
        let jitter = normalised(qi + 5_000_000, dim);
        let q: Vec<f32> = near.iter().zip(&jitter).map(|(a, b)| a + 0.3 * b).collect();
        let truth = full.search(&q, 10, &["a".to_string()]).unwrap();
        let got = short.search(&q, 10, &["a".to_string()]).unwrap();
        found += got.iter().filter(|h| truth.iter().any(|t| t.id == h.id)).count();
        wanted += truth.len();
        assert_eq!(short.search(&near, 1, &["a".to_string()]).unwrap()[0].id, (qi * 197) as i64);
    }
    let recall = found as f64 / wanted as f64;
    assert!(recall >= 0.98, "recall@10 of the shortlist {recall:.3}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    /// int8 scan + oversampled f32 rerank finds the true top k: recall@10 ≥ 0.9 per query with a
    /// 4× margin, and for the hybrid search's long list (200, its margin capped at
    /// `MAX_EXTRA`) all of the true top 200 with exact scores.
    #[test]
    fn scan_recall_against_brute_force(seed in 0u64..10_000) {
        let dim = 64;
        let vectors: Vec<Vec<f32>> = (0..2000).map(|i| normalised(seed * 10_000 + i, dim)).collect();
        let exact = vectors.clone();
        let scan = FlatScan::new(dim, Some(Box::new(move |ids: &[i64]| Ok(ids.iter().map(|&i| (i, exact[i as usize].clone())).collect()))));
        for (i, v) in vectors.iter().enumerate() {
            scan.upsert(i as i64, "a", v);
        }
        let q = normalised(seed + 999_999, dim);
        let mut truth: Vec<(i64, f32)> = vectors.iter().enumerate().map(|(i, v)| (i as i64, v.iter().zip(&q).map(|(a, b)| a * b).sum())).collect();
        truth.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<i64> = truth.iter().take(10).map(|t| t.0).collect();
        let got = scan.search(&q, 10, &["a".to_string()]).unwrap();
        let found = got.iter().filter(|h| top.contains(&h.id)).count();
        prop_assert!(found >= 9, "recall@10 {found}/10");
        let top: std::collections::HashMap<i64, f32> = truth.iter().take(200).copied().collect();
        let got = scan.search(&q, 200, &["a".to_string()]).unwrap();
        let found = got.iter().filter(|h| top.contains_key(&h.id)).count();
        prop_assert_eq!(found, 200, "recall@200");
        for h in &got {
            let exact = vectors[h.id as usize].iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
            prop_assert!((h.score - exact).abs() < 1e-5, "an exact score: {} vs {exact}", h.score);
        }
    }
}

#[cfg(feature = "lancedb")]
mod lancedb {
    use super::*;
    use memcc_memory::vector::lance::LanceVectorStore;

    #[test]
    fn lancedb_meets_the_contract() {
        let dirs = std::sync::Mutex::new(Vec::new());
        contract(|dim| {
            let dir = tempfile::tempdir().unwrap();
            let store = LanceVectorStore::open(dir.path(), dim).unwrap();
            dirs.lock().unwrap().push(dir);
            Box::new(store)
        });
    }

    #[test]
    fn lancedb_keeps_vectors_across_reopen_and_refuses_another_dimension() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = LanceVectorStore::open(dir.path(), 16).unwrap();
            let rows: Vec<(i64, &str, Vec<f32>)> = (0..50).map(|i| (i, "a", normalised(i as u64, 16))).collect();
            let view: Vec<memcc_memory::vector::VectorRow<'_>> =
                rows.iter().map(|(i, o, v)| (*i, *o, v.as_slice())).collect();
            store.upsert_many(&view);
            // One key twice in a batch: the last one wins.
            store.upsert_many(&[(7, "a", &normalised(700, 16)), (7, "b", &normalised(701, 16))]);
            assert_eq!(store.len(), 50);
        }
        let store = LanceVectorStore::open(dir.path(), 16).unwrap();
        assert_eq!(store.len(), 50);
        assert_eq!(store.search(&normalised(701, 16), 1, &["b".to_string()]).unwrap()[0].id, 7);
        assert!(
            store.search(&normalised(3, 16), 3, &["x' OR '1'='1".to_string()]).unwrap().is_empty(),
            "owner filter is a literal"
        );
        let err = LanceVectorStore::open(dir.path(), 32).err().expect("dimension mismatch refused");
        assert!(err.to_string().contains("16-dimensional"), "{err}");
    }
}

/// A caller asking for more results than any store holds gets every vector, not an overflow or
/// an allocation the size of the request.
#[test]
fn asking_for_every_result_there_could_be_returns_what_there_is() {
    for plan in [ScanPlan::default(), EVERY_PATH] {
        let scan = FlatScan::with_plan(16, None, plan);
        for i in 0..50 {
            scan.upsert(i, "a", &normalised(i as u64, 16));
        }
        assert_eq!(scan.search(&normalised(3, 16), usize::MAX, &["a".to_string()]).unwrap().len(), 50);
    }
}
