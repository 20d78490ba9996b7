//! Vector search behind the [`VectorStore`] trait.
//!
//! The default, [`FlatScan`], keeps int8-quantised copies and sign bits of every vector in memory
//! (no index to build or tune). Up to 20k vectors it scores all of them in int8; from there a
//! 1-bit pass over all of them (Hamming distance of the signs, an eighth of the bytes) shortlists
//! a tenth for the int8 scan. An oversampled candidate set is then reranked with the exact f32
//! vectors, which it fetches from their source of truth (the `vectors` table in `memory.db`)
//! rather than holding a second full-precision copy in memory.

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
    /// The `k` nearest of the vectors owned by one of `owners`, best first. A store that
    /// cannot answer says so (a pgvector server away, a LanceDB read that failed), never an
    /// empty list that reads as "nothing similar".
    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> crate::error::Result<Vec<VectorHit>>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where exact f32 vectors come from for the rerank.
pub type ExactSource = Box<dyn Fn(&[i64]) -> crate::error::Result<Vec<(i64, Vec<f32>)>> + Send + Sync>;

/// Candidates scanned in int8 per result returned.
pub const OVERSAMPLE: usize = 4;

/// At most this many candidates beyond the `k` asked for are reranked: int8 only misorders
/// near-ties, so a long list (the hybrid search asks for up to 200) needs no 4× margin, and
/// each candidate is an exact vector read from the store.
pub const MAX_EXTRA: usize = 100;

/// How [`FlatScan`] scans: when it shortlists by sign bits first, and when it splits across
/// threads. The defaults are what the runtime uses; tests set them to reach each path on small data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanPlan {
    /// From this many vectors, a 1-bit pass (Hamming distance of the signs, 1/8 of the int8 bytes)
    /// picks the candidates the int8 scan scores; below it every vector is scored in int8.
    pub shortlist_from: usize,
    /// The shortlist keeps `1 / shortlist_fraction` of the vectors…
    pub shortlist_fraction: usize,
    /// …and at least this many per result asked for.
    pub shortlist_per_result: usize,
    /// From this many int8 candidates, scoring is split across the cores (below it, starting
    /// threads costs more than it saves).
    pub parallel_from: usize,
}

impl Default for ScanPlan {
    /// Measured on real embeddings (USE m-v3, 4,033 LoCoMo turns, questions and held-out turns
    /// as queries): a Hamming shortlist of a tenth holds the true top 10 for every query, and
    /// 99.9 % of the true top 1 % (40 of 4,033) — the hybrid search's longest list is 0.3 % of
    /// 100k. On random vectors, which have no neighbours, only near-ties, it holds less (the
    /// speed bench reports both).
    fn default() -> Self {
        ScanPlan { shortlist_from: 20_000, shortlist_fraction: 10, shortlist_per_result: 32, parallel_from: 20_000 }
    }
}

/// At most this many scan threads: the scan is bound by memory bandwidth soon after.
const MAX_SCAN_THREADS: usize = 4;

#[derive(Default)]
struct Inner {
    ids: Vec<i64>,
    owners: Vec<u32>,
    scales: Vec<f32>,
    codes: Vec<i8>,
    /// Sign bits, `words` u64 per vector, for the shortlist pass.
    signs: Vec<u64>,
    position: HashMap<i64, usize>,
    owner_ids: HashMap<String, u32>,
}

pub struct FlatScan {
    dim: usize,
    /// u64 words of sign bits per vector.
    words: usize,
    plan: ScanPlan,
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
    (v.iter().map(|x| round_half_away(x / scale).clamp(-127, 127) as i8).collect(), scale)
}

/// `y.round() as i32` for |y| well inside i32 (a code is within ±128), without the libm call
/// `round` is on the baseline x86-64 target (a store's whole load paid a fifth of its time for it):
/// the fraction left by truncation is exact, and a half goes away from zero as `round` does.
/// NaN is 0, as `NaN.round() as i8` is.
#[inline(always)]
fn round_half_away(y: f32) -> i32 {
    let t = y as i32;
    let frac = y - t as f32;
    t + i32::from(frac >= 0.5) - i32::from(frac <= -0.5)
}

/// One bit per dimension, set where the component is positive.
pub fn sign_bits(v: &[f32]) -> Vec<u64> {
    v.chunks(64).map(|c| c.iter().enumerate().fold(0u64, |w, (i, x)| w | (u64::from(*x > 0.0) << i))).collect()
}

/// i8 dot product with i32 accumulation; the fixed-width inner loop lets the compiler vectorise.
#[inline(always)]
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

impl FlatScan {
    /// `exact`: fetches f32 vectors for the rerank; without it, int8 scores are returned as-is.
    pub fn new(dim: usize, exact: Option<ExactSource>) -> Self {
        Self::with_plan(dim, exact, ScanPlan::default())
    }

    /// As [`FlatScan::new`], with thresholds other than the defaults (tests reach each path on
    /// small data with them).
    pub fn with_plan(dim: usize, exact: Option<ExactSource>, plan: ScanPlan) -> Self {
        FlatScan { dim, words: dim.div_ceil(64), plan, inner: RwLock::new(Inner::default()), exact }
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
        if allowed.is_empty() || query.len() != self.dim || self.dim == 0 || k == 0 {
            return Vec::new();
        }
        let n = inner.ids.len();
        let shortlisted = n >= self.plan.shortlist_from;
        let candidates: Vec<usize> = if shortlisted {
            let keep = (n / self.plan.shortlist_fraction.max(1)).max(k.saturating_mul(self.plan.shortlist_per_result));
            self.shortlist(&inner, &allowed, &sign_bits(query), keep)
        } else {
            (0..n).filter(|&i| allowed.contains(&inner.owners[i])).collect()
        };
        let (q, q_scale) = quantize(query);
        let best = |part: &[usize]| -> Vec<(OrdF32, usize)> {
            // A bounded min-heap of the best k.
            let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(OrdF32, usize)>> =
                std::collections::BinaryHeap::with_capacity(k.min(part.len()) + 1);
            for (&i, dot) in part.iter().zip(dots(&inner.codes, self.dim, part, &q, shortlisted)) {
                let score = dot as f32 * inner.scales[i] * q_scale;
                if heap.len() < k {
                    heap.push(std::cmp::Reverse((OrdF32(score), i)));
                } else if heap.peek().is_some_and(|std::cmp::Reverse((min, _))| score > min.0) {
                    heap.pop();
                    heap.push(std::cmp::Reverse((OrdF32(score), i)));
                }
            }
            heap.into_iter().map(|std::cmp::Reverse(x)| x).collect()
        };
        // Scoring is bound by reading the codes; many candidates are split across the cores
        // (on a host's machine the other retriever mostly waits on this one).
        let parts = if candidates.len() >= self.plan.parallel_from {
            std::thread::available_parallelism().map_or(1, |p| p.get()).min(MAX_SCAN_THREADS)
        } else {
            1
        };
        let mut found: Vec<(OrdF32, usize)> = if parts == 1 {
            best(&candidates)
        } else {
            let mut chunks = candidates.chunks(candidates.len().div_ceil(parts));
            let first = chunks.next().unwrap_or_default();
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunks.map(|part| scope.spawn(move || best(part))).collect();
                // The first part on this thread, which is running already.
                let mut found = best(first);
                // A part that panicked (it cannot: slices are in bounds) contributes nothing.
                found.extend(handles.into_iter().flat_map(|h| h.join().unwrap_or_default()));
                found
            })
        };
        found.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
        found.truncate(k);
        found.into_iter().map(|(s, i)| VectorHit { id: inner.ids[i], score: s.0 }).collect()
    }

    /// The `keep` allowed vectors whose signs differ least from the query's (more where
    /// distances tie at the cut), in storage order. Distances are small integers, so the cut
    /// comes from their histogram: one pass, no sort.
    fn shortlist(&self, inner: &Inner, allowed: &[u32], query: &[u64], keep: usize) -> Vec<usize> {
        let distances = sign_distances(inner, self.words, allowed, query);
        let mut histogram = vec![0usize; self.words * 64 + 1];
        for &d in distances.iter().filter(|&&d| d != OUTSIDE) {
            histogram[usize::from(d)] += 1;
        }
        let mut cut = 0;
        let mut kept = 0;
        for (d, count) in histogram.iter().enumerate() {
            kept += count;
            cut = d;
            if kept >= keep {
                break;
            }
        }
        distances.iter().enumerate().filter(|&(_, &d)| d != OUTSIDE && usize::from(d) <= cut).map(|(i, _)| i).collect()
    }
}

/// `q`'s int8 dot product with the code of each of `rows`; `sparse`: rows far apart (a
/// shortlist), whose codes are fetched ahead.
fn dots(codes: &[i8], dim: usize, rows: &[usize], q: &[i8], sparse: bool) -> Vec<i32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one feature the function is compiled with. (The default
        // x86-64 target stops at SSE2, which widens and multiplies half as many lanes at a time.)
        return unsafe { dots_avx2(codes, dim, rows, q, sparse) };
    }
    dots_portable(codes, dim, rows, q, sparse)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(codes: &[i8], dim: usize, rows: &[usize], q: &[i8], sparse: bool) -> Vec<i32> {
    dots_portable(codes, dim, rows, q, sparse)
}

#[inline(always)]
fn dots_portable(codes: &[i8], dim: usize, rows: &[usize], q: &[i8], sparse: bool) -> Vec<i32> {
    if !sparse {
        return rows.iter().map(|&i| dot_i8(&codes[i * dim..(i + 1) * dim], q)).collect();
    }
    rows.iter()
        .enumerate()
        .map(|(j, &i)| {
            if let Some(&ahead) = rows.get(j + PREFETCH_AHEAD) {
                prefetch(&codes[ahead * dim..(ahead + 1) * dim]);
            }
            dot_i8(&codes[i * dim..(i + 1) * dim], q)
        })
        .collect()
}

/// Rows a shortlist's scoring asks the memory for ahead of the one it scores: shortlisted
/// codes are far apart, so the hardware prefetcher does not see them coming.
const PREFETCH_AHEAD: usize = 8;

/// Asks for `bytes` to be brought into the cache (a hint: nothing on other targets).
#[inline(always)]
fn prefetch(bytes: &[i8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch is a hint that cannot fault; the pointer is in bounds besides.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// The distance of a vector outside the owners searched.
const OUTSIDE: u16 = u16::MAX;

/// Hamming distance from `query` to the sign bits of every vector, [`OUTSIDE`] for a vector
/// not owned by one of `allowed`.
fn sign_distances(inner: &Inner, words: usize, allowed: &[u32], query: &[u64]) -> Vec<u16> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, the one feature the function is compiled with. (The
        // default x86-64 target has none, and counting bits without it costs ~10× more.)
        return unsafe { sign_distances_popcnt(inner, words, allowed, query) };
    }
    sign_distances_portable(inner, words, allowed, query)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn sign_distances_popcnt(inner: &Inner, words: usize, allowed: &[u32], query: &[u64]) -> Vec<u16> {
    sign_distances_portable(inner, words, allowed, query)
}

#[inline(always)]
fn sign_distances_portable(inner: &Inner, words: usize, allowed: &[u32], query: &[u64]) -> Vec<u16> {
    inner
        .signs
        .chunks_exact(words)
        .zip(&inner.owners)
        .map(|(signs, owner)| {
            if !allowed.contains(owner) {
                return OUTSIDE;
            }
            let d = signs.iter().zip(query).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>();
            // Only a dimension beyond 65,534 could reach it.
            d.min(u32::from(OUTSIDE - 1)) as u16
        })
        .collect()
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

impl VectorStore for FlatScan {
    fn dim(&self) -> usize {
        self.dim
    }

    fn upsert(&self, id: i64, owner: &str, vector: &[f32]) {
        self.upsert_many(&[(id, owner, vector)]);
    }

    /// Quantised outside the lock, then stored under one write lock (a store's whole load comes
    /// through here, 2,048 vectors at a time).
    fn upsert_many(&self, rows: &[VectorRow<'_>]) {
        // (id, owner, int8 code, its scale, sign bits)
        type Coded<'a> = (i64, &'a str, Vec<i8>, f32, Vec<u64>);
        let coded: Vec<Coded<'_>> = rows
            .iter()
            .filter(|(id, _, vector)| {
                let fits = vector.len() == self.dim;
                if !fits {
                    tracing::warn!(
                        id,
                        got = vector.len(),
                        want = self.dim,
                        "vector of the wrong dimension not indexed"
                    );
                }
                fits
            })
            .map(|&(id, owner, vector)| {
                let (code, scale) = quantize(vector);
                (id, owner, code, scale, sign_bits(vector))
            })
            .collect();
        let mut inner = self.write();
        inner.ids.reserve(coded.len());
        inner.codes.reserve(coded.len() * self.dim);
        inner.signs.reserve(coded.len() * self.words);
        for (id, owner, code, scale, signs) in coded {
            let owner = match inner.owner_ids.get(owner) {
                Some(&o) => o,
                None => {
                    let next = inner.owner_ids.len() as u32;
                    inner.owner_ids.insert(owner.to_string(), next);
                    next
                }
            };
            if let Some(&pos) = inner.position.get(&id) {
                inner.codes[pos * self.dim..(pos + 1) * self.dim].copy_from_slice(&code);
                inner.signs[pos * self.words..(pos + 1) * self.words].copy_from_slice(&signs);
                inner.scales[pos] = scale;
                inner.owners[pos] = owner;
                continue;
            }
            let pos = inner.ids.len();
            inner.ids.push(id);
            inner.owners.push(owner);
            inner.scales.push(scale);
            inner.codes.extend_from_slice(&code);
            inner.signs.extend_from_slice(&signs);
            inner.position.insert(id, pos);
        }
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
            let (words, signs) = (self.words, &mut inner.signs);
            let (head, tail) = signs.split_at_mut(last * words);
            head[pos * words..(pos + 1) * words].copy_from_slice(&tail[..words]);
            inner.position.insert(moved, pos);
        }
        inner.ids.pop();
        inner.owners.pop();
        inner.scales.pop();
        let new_len = inner.codes.len() - self.dim;
        inner.codes.truncate(new_len);
        let new_len = inner.signs.len() - self.words;
        inner.signs.truncate(new_len);
    }

    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> crate::error::Result<Vec<VectorHit>> {
        let candidates = self.scan(query, k.saturating_mul(OVERSAMPLE).min(k.saturating_add(MAX_EXTRA)), owners);
        let Some(exact) = &self.exact else {
            return Ok(candidates.into_iter().take(k).collect());
        };
        let ids: Vec<i64> = candidates.iter().map(|h| h.id).collect();
        let mut hits: Vec<VectorHit> = exact(&ids)?
            .into_iter()
            .map(|(id, v)| VectorHit { id, score: v.iter().zip(query).map(|(a, b)| a * b).sum() })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(k);
        Ok(hits)
    }

    fn len(&self) -> usize {
        self.read().ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The codes as they were first written: `round` and a bit set per positive component.
    fn reference(v: &[f32]) -> (Vec<i8>, f32, Vec<u64>) {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let mut bits = vec![0u64; v.len().div_ceil(64)];
        for (i, x) in v.iter().enumerate() {
            if *x > 0.0 {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        if max == 0.0 {
            return (vec![0; v.len()], 0.0, bits);
        }
        let scale = max / 127.0;
        (v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect(), scale, bits)
    }

    proptest! {
        /// Same codes, scale and signs as the reference, bit for bit: halves (which `round`
        /// takes away from zero), zeros, NaN and every length of the last sign word included.
        #[test]
        fn codes_and_signs_are_the_references(
            values in proptest::collection::vec(
                prop_oneof![
                    -1.0f32..1.0,
                    (-254i32..=254).prop_map(|h| h as f32 / 254.0),
                    Just(0.0f32),
                    Just(-0.0f32),
                    Just(f32::NAN),
                ],
                0..200,
            ),
        ) {
            let (code, scale) = quantize(&values);
            let (want_code, want_scale, want_bits) = reference(&values);
            prop_assert_eq!(code, want_code);
            prop_assert_eq!(scale.to_bits(), want_scale.to_bits());
            prop_assert_eq!(sign_bits(&values), want_bits);
        }
    }
}
