//! Vector search behind the [`VectorStore`] trait.
//!
//! The default, [`ExactScan`], keeps int8-quantised copies of every vector in memory and scans
//! them all (exact, no index to build or tune), then reranks an oversampled candidate set with
//! the exact f32 vectors, which it fetches from their source of truth (the `vectors` table in
//! `memory.db`) rather than holding a second full-precision copy in memory.

use std::collections::HashMap;
use std::sync::RwLock;

#[cfg(feature = "lancedb")]
pub mod lance;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    pub id: i64,
    /// Cosine similarity (vectors are normalised).
    pub score: f32,
}

/// One vector to store: record id, owning agent, vector.
pub type VectorRow<'a> = (i64, &'a str, &'a [f32]);

/// A searchable collection of vectors, each owned by one agent.
pub trait VectorStore: Send + Sync {
    fn dim(&self) -> usize;
    fn upsert(&self, id: i64, owner: &str, vector: &[f32]);
    /// Many upserts; stores with a per-write cost (LanceDB commits) do them in one write.
    fn upsert_many(&self, rows: &[VectorRow<'_>]) {
        for (id, owner, vector) in rows {
            self.upsert(*id, owner, vector);
        }
    }
    fn remove(&self, id: i64);
    /// The `k` nearest of the vectors owned by one of `owners`, best first.
    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> Vec<VectorHit>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where exact f32 vectors come from for the rerank.
pub type ExactSource = Box<dyn Fn(&[i64]) -> Vec<(i64, Vec<f32>)> + Send + Sync>;

/// Candidates scanned in int8 per result returned.
pub const OVERSAMPLE: usize = 4;

/// At most this many candidates beyond the `k` asked for are reranked: int8 only misorders
/// near-ties, so a long list (the hybrid search asks for up to 200) needs no 4× margin, and
/// each candidate is an exact vector read from the store.
pub const MAX_EXTRA: usize = 100;

/// Collections this large are scanned on several threads (below it, starting them costs more
/// than it saves).
pub const PARALLEL_SCAN_FROM: usize = 20_000;

/// At most this many scan threads: the scan is bound by memory bandwidth soon after.
const MAX_SCAN_THREADS: usize = 4;

#[derive(Default)]
struct Inner {
    ids: Vec<i64>,
    owners: Vec<u32>,
    scales: Vec<f32>,
    codes: Vec<i8>,
    position: HashMap<i64, usize>,
    owner_ids: HashMap<String, u32>,
}

pub struct ExactScan {
    dim: usize,
    inner: RwLock<Inner>,
    exact: Option<ExactSource>,
}

/// Symmetric int8 quantisation: `v ≈ code × scale`.
pub fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    (v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect(), scale)
}

/// i8 dot product with i32 accumulation; the fixed-width inner loop lets the compiler vectorise.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let chunks_a = a.chunks_exact(16);
    let chunks_b = b.chunks_exact(16);
    let (ra, rb) = (chunks_a.remainder(), chunks_b.remainder());
    for (x, y) in chunks_a.zip(chunks_b) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    acc.iter().sum::<i32>() + ra.iter().zip(rb).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum::<i32>()
}

impl ExactScan {
    /// `exact`: fetches f32 vectors for the rerank; without it, int8 scores are returned as-is.
    pub fn new(dim: usize, exact: Option<ExactSource>) -> Self {
        ExactScan { dim, inner: RwLock::new(Inner::default()), exact }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Scan only, int8 scores: the oversampled candidate set.
    pub fn scan(&self, query: &[f32], k: usize, owners: &[String]) -> Vec<VectorHit> {
        let inner = self.read();
        let allowed: Vec<u32> = owners.iter().filter_map(|o| inner.owner_ids.get(o).copied()).collect();
        if allowed.is_empty() || query.len() != self.dim || k == 0 {
            return Vec::new();
        }
        let (q, q_scale) = quantize(query);
        let n = inner.ids.len();
        // Scanning is bound by reading the codes; large collections are split across the cores
        // (on a host's machine the other retriever mostly waits on this one).
        let parts = if n >= PARALLEL_SCAN_FROM {
            std::thread::available_parallelism().map_or(1, |p| p.get()).min(MAX_SCAN_THREADS)
        } else {
            1
        };
        let per_part = n.div_ceil(parts);
        let best = |range: std::ops::Range<usize>| -> Vec<(OrdF32, usize)> {
            // A bounded min-heap of the best k.
            let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(OrdF32, usize)>> =
                std::collections::BinaryHeap::with_capacity(k + 1);
            for i in range {
                if !allowed.contains(&inner.owners[i]) {
                    continue;
                }
                let code = &inner.codes[i * self.dim..(i + 1) * self.dim];
                let score = dot_i8(code, &q) as f32 * inner.scales[i] * q_scale;
                if heap.len() < k {
                    heap.push(std::cmp::Reverse((OrdF32(score), i)));
                } else if heap.peek().is_some_and(|std::cmp::Reverse((min, _))| score > min.0) {
                    heap.pop();
                    heap.push(std::cmp::Reverse((OrdF32(score), i)));
                }
            }
            heap.into_iter().map(|std::cmp::Reverse(x)| x).collect()
        };
        let mut found: Vec<(OrdF32, usize)> = if parts == 1 {
            best(0..n)
        } else {
            let range = |p: usize| p * per_part..((p + 1) * per_part).min(n);
            std::thread::scope(|scope| {
                let handles: Vec<_> = (1..parts).map(|p| scope.spawn(move || best(range(p)))).collect();
                // The first part on this thread, which is running already.
                let mut found = best(range(0));
                // A part that panicked (it cannot: slices are in bounds) contributes nothing.
                found.extend(handles.into_iter().flat_map(|h| h.join().unwrap_or_default()));
                found
            })
        };
        found.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
        found.truncate(k);
        found.into_iter().map(|(s, i)| VectorHit { id: inner.ids[i], score: s.0 }).collect()
    }
}

#[derive(Clone, Copy)]
struct OrdF32(f32);
impl PartialEq for OrdF32 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for OrdF32 {}
impl PartialOrd for OrdF32 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF32 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl VectorStore for ExactScan {
    fn dim(&self) -> usize {
        self.dim
    }

    fn upsert(&self, id: i64, owner: &str, vector: &[f32]) {
        if vector.len() != self.dim {
            tracing::warn!(id, got = vector.len(), want = self.dim, "vector of the wrong dimension not indexed");
            return;
        }
        let (code, scale) = quantize(vector);
        let mut inner = self.write();
        let next = inner.owner_ids.len() as u32;
        let owner = *inner.owner_ids.entry(owner.to_string()).or_insert(next);
        if let Some(&pos) = inner.position.get(&id) {
            inner.codes[pos * self.dim..(pos + 1) * self.dim].copy_from_slice(&code);
            inner.scales[pos] = scale;
            inner.owners[pos] = owner;
            return;
        }
        let pos = inner.ids.len();
        inner.ids.push(id);
        inner.owners.push(owner);
        inner.scales.push(scale);
        inner.codes.extend_from_slice(&code);
        inner.position.insert(id, pos);
    }

    fn remove(&self, id: i64) {
        let mut inner = self.write();
        let Some(pos) = inner.position.remove(&id) else { return };
        let last = inner.ids.len() - 1;
        if pos != last {
            let moved = inner.ids[last];
            inner.ids.swap(pos, last);
            inner.owners.swap(pos, last);
            inner.scales.swap(pos, last);
            let (dim, codes) = (self.dim, &mut inner.codes);
            let (head, tail) = codes.split_at_mut(last * dim);
            head[pos * dim..(pos + 1) * dim].copy_from_slice(&tail[..dim]);
            inner.position.insert(moved, pos);
        }
        inner.ids.pop();
        inner.owners.pop();
        inner.scales.pop();
        let new_len = inner.codes.len() - self.dim;
        inner.codes.truncate(new_len);
    }

    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> Vec<VectorHit> {
        let candidates = self.scan(query, (k * OVERSAMPLE).min(k + MAX_EXTRA), owners);
        let Some(exact) = &self.exact else {
            return candidates.into_iter().take(k).collect();
        };
        let ids: Vec<i64> = candidates.iter().map(|h| h.id).collect();
        let mut hits: Vec<VectorHit> = exact(&ids)
            .into_iter()
            .map(|(id, v)| VectorHit { id, score: v.iter().zip(query).map(|(a, b)| a * b).sum() })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(k);
        hits
    }

    fn len(&self) -> usize {
        self.read().ids.len()
    }
}
