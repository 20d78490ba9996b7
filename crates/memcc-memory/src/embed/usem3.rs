//! Universal Sentence Encoder multilingual v3 (512 dimensions), forward pass in Rust.
//!
//! Architecture, as in the model's reference implementation: quantised token embeddings →
//! projection + layer norm → three n-gram CNN branches (orders 2, 3, 5; two residual conv layers
//! each) → layer norm → mean pooling (sum · 1/√n) → output projection → a small residual MLP →
//! tanh → L2 normalisation. Sentences are packed into micro-batches of about 384 tokens so each
//! weight matrix is streamed once per batch; n-gram windows never reach across sentences.

use std::path::{Path, PathBuf};

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, s};
use ndarray_npy::NpzReader;
use safetensors::tensor::Dtype;

use super::prepared::{self, Prepared, Slice, SourceKey, Tensor};
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

/// Width of the output MLP's hidden layers.
const HIDDEN: usize = 320;

/// A weight matrix of the prepared model, read in place.
struct Mat {
    data: Slice,
    rows: usize,
    cols: usize,
}

impl Mat {
    fn view(&self) -> Result<ArrayView2<'_, f32>, EmbedError> {
        ArrayView2::from_shape((self.rows, self.cols), self.data.f32s()).map_err(model_err)
    }
}

fn vector(s: &Slice) -> ArrayView1<'_, f32> {
    ArrayView1::from(s.f32s())
}

pub struct Usem3 {
    sp: SentencePiece,
    /// Quantised embedding table, row = piece id, 512 bytes each.
    table: Slice,
    scale: Slice,
    lo: Slice,
    proj_w: Mat,
    proj_b: Slice,
    ln_g_all: Slice,
    ln_b_all: Slice,
    w1: [Mat; 3],
    b1: [Slice; 3],
    w2: [Mat; 3],
    b2: [Slice; 3],
    ln_g: Slice,
    ln_b: Slice,
    cnn_w: Mat,
    cnn_b: Slice,
    d: [Mat; 4],
    p1: Mat,
    p3: Mat,
    eps: f32,
}

fn model_err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(format!("USE weights: {e}"))
}

impl Usem3 {
    /// Load from a directory holding `weights.npz` and `sp.model`: from the prepared file beside
    /// them ([`prepared`]), prepared first when it is missing or was made from other files.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let key = SourceKey::of(dir, &FILES.map(|(f, _)| f))?;
        if let Some(p) = Prepared::open(dir, &key) {
            match Self::from_prepared(&p) {
                Ok(model) => return Ok(model),
                Err(e) => tracing::info!("{}: {e}; preparing it again", dir.join(prepared::FILE).display()),
            }
        }
        Self::from_prepared(&Prepared::store(dir, &key, Self::prepare(dir)?)?)
    }

    /// Write the prepared file in `dir` now (`memcc model fetch` does, so the first hook does
    /// not), unless it is there and current.
    pub fn prepare_dir(dir: &Path) -> Result<(), EmbedError> {
        // Loading prepares it when it is missing or stale, and only then.
        Self::load(dir).map(drop)
    }

    /// The tensors of `weights.npz` and `sp.model`, as the model reads them.
    fn prepare(dir: &Path) -> Result<Vec<(&'static str, Tensor)>, EmbedError> {
        let sp_bytes = std::fs::read(dir.join("sp.model")).map_err(model_err)?;
        let mut tensors = SentencePiece::prepare(&sp_bytes)?;
        let file = std::fs::File::open(dir.join("weights.npz")).map_err(model_err)?;
        let mut npz = NpzReader::new(file).map_err(model_err)?;
        let mut f2 =
            |name: &str| -> Result<Array2<f32>, EmbedError> { npz.by_name(&format!("{name}.npy")).map_err(model_err) };
        let mat = |a: &Array2<f32>| Tensor::f32s(&[a.nrows(), a.ncols()], &a.iter().copied().collect::<Vec<_>>());
        let proj_w = ndarray::concatenate(Axis(1), &[f2("proj2")?.view(), f2("proj3")?.view(), f2("proj5")?.view()])
            .map_err(model_err)?;
        tensors.push(("proj_w", mat(&proj_w)));
        for name in ["w1_2", "w1_3", "w1_5", "w2_2", "w2_3", "w2_5", "cnn_W", "d0", "d1", "d2", "d3", "p1", "p3"] {
            tensors.push((name, mat(&f2(name)?)));
        }
        let mut f1 =
            |name: &str| -> Result<Array1<f32>, EmbedError> { npz.by_name(&format!("{name}.npy")).map_err(model_err) };
        for (out, parts) in [
            ("proj_b", ["proj_b2", "proj_b3", "proj_b5"]),
            ("ln_g_all", ["ln_g2", "ln_g3", "ln_g5"]),
            ("ln_b_all", ["ln_b2", "ln_b3", "ln_b5"]),
        ] {
            let mut values = Vec::new();
            for part in parts {
                values.extend(f1(part)?);
            }
            tensors.push((out, Tensor::f32s(&[values.len()], &values)));
        }
        for name in ["b1_2", "b1_3", "b1_5", "b2_2", "b2_3", "b2_5", "ln_g", "ln_b", "cnn_b", "scale", "lo"] {
            let v = f1(name)?;
            tensors.push((name, Tensor::f32s(&[v.len()], &v.to_vec())));
        }
        let eps: ndarray::Array0<f64> = npz.by_name("eps.npy").map_err(model_err)?;
        tensors.push(("eps", Tensor::f32s(&[1], &[eps.into_scalar() as f32])));
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
        tensors.push(("table", Tensor::u8s(&[CHUNKS * VOCAB_ROWS, DIM], table)));
        Ok(tensors)
    }

    /// The model read in place from its prepared tensors, each of the shape the forward pass
    /// multiplies it by.
    fn from_prepared(p: &Prepared) -> Result<Self, EmbedError> {
        let mat = |name: &str, rows: usize, cols: usize| -> Result<Mat, EmbedError> {
            Ok(Mat { data: p.get(name, Dtype::F32, &[rows, cols])?, rows, cols })
        };
        let vec = |name: &str, len: usize| p.get(name, Dtype::F32, &[len]);
        let [(n2, _), (n3, _), (n5, _)] = ORDERS;
        Ok(Usem3 {
            sp: SentencePiece::from_prepared(p)?,
            table: p.get("table", Dtype::U8, &[CHUNKS * VOCAB_ROWS, DIM])?,
            scale: vec("scale", CHUNKS)?,
            lo: vec("lo", CHUNKS)?,
            proj_w: mat("proj_w", DIM, 3 * CNN_DIM)?,
            proj_b: vec("proj_b", 3 * CNN_DIM)?,
            ln_g_all: vec("ln_g_all", 3 * CNN_DIM)?,
            ln_b_all: vec("ln_b_all", 3 * CNN_DIM)?,
            w1: [
                mat("w1_2", n2 * CNN_DIM, CNN_DIM)?,
                mat("w1_3", n3 * CNN_DIM, CNN_DIM)?,
                mat("w1_5", n5 * CNN_DIM, CNN_DIM)?,
            ],
            b1: [vec("b1_2", CNN_DIM)?, vec("b1_3", CNN_DIM)?, vec("b1_5", CNN_DIM)?],
            w2: [
                mat("w2_2", n2 * CNN_DIM, CNN_DIM)?,
                mat("w2_3", n3 * CNN_DIM, CNN_DIM)?,
                mat("w2_5", n5 * CNN_DIM, CNN_DIM)?,
            ],
            b2: [vec("b2_2", CNN_DIM)?, vec("b2_3", CNN_DIM)?, vec("b2_5", CNN_DIM)?],
            ln_g: vec("ln_g", DIM + 3 * CNN_DIM)?,
            ln_b: vec("ln_b", DIM + 3 * CNN_DIM)?,
            cnn_w: mat("cnn_W", DIM + 3 * CNN_DIM, DIM)?,
            cnn_b: vec("cnn_b", DIM)?,
            d: [mat("d0", DIM, HIDDEN)?, mat("d1", HIDDEN, HIDDEN)?, mat("d2", HIDDEN, DIM)?, mat("d3", DIM, DIM)?],
            p1: mat("p1", DIM, HIDDEN)?,
            p3: mat("p3", HIDDEN, DIM)?,
            eps: vec("eps", 1)?.f32s().first().copied().unwrap_or(f32::EPSILON),
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

    fn layer_norm(&self, x: &mut Array2<f32>, g: &Slice, b: &Slice) -> Result<(), EmbedError> {
        let (g, b) = (vector(g), vector(b));
        if g.len() != x.ncols() || b.len() != x.ncols() {
            return Err(model_err("layer norm of another width"));
        }
        let dim = x.ncols() as f32;
        for mut row in x.rows_mut() {
            let mean = row.sum() / dim;
            row -= mean;
            let var = row.dot(&row) / dim;
            row *= 1.0 / (var + self.eps).sqrt();
            row *= &g;
            row += &b;
        }
        Ok(())
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

    fn encode_batch(&self, group: &[Vec<u32>]) -> Result<Array2<f32>, EmbedError> {
        let lens: Vec<usize> = group.iter().map(Vec::len).collect();
        let n_tokens: usize = lens.iter().sum();
        let mut feats = Array2::<f32>::zeros((n_tokens, DIM + 3 * CNN_DIM));
        let (table, scales, los) = (self.table.as_ref(), self.scale.f32s(), self.lo.f32s());
        for (t, &id) in group.iter().flatten().enumerate() {
            let id = id as usize;
            let chunk = id % CHUNKS;
            let (Some(&scale), Some(&lo)) = (scales.get(chunk), los.get(chunk)) else { continue };
            let row = table.get(id * DIM..(id + 1) * DIM).unwrap_or(&[]);
            for (dst, &q) in feats.slice_mut(s![t, ..DIM]).iter_mut().zip(row) {
                *dst = f32::from(q) * scale + lo;
            }
        }
        let mut x = mat_mul(feats.slice(s![.., ..DIM]), self.proj_w.view()?);
        x += &vector(&self.proj_b);
        self.layer_norm(&mut x, &self.ln_g_all, &self.ln_b_all)?;
        let windows = Self::windows(&lens);
        for (i, &(n, left)) in ORDERS.iter().enumerate() {
            let xs = x.slice(s![.., i * CNN_DIM..(i + 1) * CNN_DIM]);
            let mut h = mat_mul(Self::gather(xs, &windows, n, left).view(), self.w1[i].view()?);
            h += &vector(&self.b1[i]);
            h.mapv_inplace(|v| v.max(0.0));
            h += &xs;
            let mut c2 = mat_mul(Self::gather(h.view(), &windows, n, left).view(), self.w2[i].view()?);
            c2 += &vector(&self.b2[i]);
            c2.mapv_inplace(|v| v.max(0.0));
            c2 += &h;
            feats.slice_mut(s![.., DIM + i * CNN_DIM..DIM + (i + 1) * CNN_DIM]).assign(&c2);
        }
        self.layer_norm(&mut feats, &self.ln_g, &self.ln_b)?;
        // Sum then project: the token sum commutes with the linear output projection.
        let mut sums = Array2::<f32>::zeros((group.len(), feats.ncols()));
        let mut start = 0;
        for (s_idx, &len) in lens.iter().enumerate() {
            sums.row_mut(s_idx).assign(&feats.slice(s![start..start + len, ..]).sum_axis(Axis(0)));
            start += len;
        }
        let mut mean = mat_mul(sums.view(), self.cnn_w.view()?);
        let cnn_b = vector(&self.cnn_b);
        for (s_idx, &len) in lens.iter().enumerate() {
            let mut row = mean.row_mut(s_idx);
            row.scaled_add(len as f32, &cnn_b);
            row *= 1.0 / (len as f32).sqrt();
        }
        let relu = |a: Array2<f32>| a.mapv(|v| v.max(0.0));
        let [d0, d1, d2, d3] = [self.d[0].view()?, self.d[1].view()?, self.d[2].view()?, self.d[3].view()?];
        let y0 = relu(mat_mul(mean.view(), d0));
        let y1 = relu(mat_mul(mean.view(), self.p1.view()?) + mat_mul(y0.view(), d1));
        let y2 = relu(mat_mul(y1.view(), d2));
        let mut z = (mat_mul(y1.view(), self.p3.view()?) + mat_mul(y2.view(), d3)).mapv(f32::tanh);
        for mut row in z.rows_mut() {
            let norm = row.dot(&row).max(self.eps).sqrt();
            row /= norm;
        }
        Ok(z)
    }
}

/// Below this many rows (a query, a few sentences' pooled vectors), [`mat_mul`] streams the
/// weights once instead of packing them for a blocked product.
const SKINNY_ROWS: usize = 32;

/// `a · b`. A blocked product (ndarray's) copies `b` into its own layout on every call, which
/// for a few rows of `a` costs as much as the product: a query of 11 tokens spent a quarter of
/// its 3.7 ms packing weights. With few rows, each row of `b` is read once and added into every
/// output row it scales (skipped where `a` is zero, as after a ReLU).
fn mat_mul(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
    let (Some(b_rows), true) = (b.as_slice(), a.nrows() < SKINNY_ROWS) else { return a.dot(&b) };
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
                out.extend(self.encode_batch(&group)?.rows().into_iter().map(|r| r.to_vec()));
                group.clear();
                tokens = 0;
            }
            tokens += ids.len();
            group.push(ids);
        }
        if !group.is_empty() {
            out.extend(self.encode_batch(&group)?.rows().into_iter().map(|r| r.to_vec()));
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
            let got = mat_mul(a.view(), b.view());
            let want = a.dot(&b);
            prop_assert_eq!(got.dim(), want.dim());
            for (g, w) in got.iter().zip(&want) {
                prop_assert!((g - w).abs() <= 1e-4, "{g} vs {w}");
            }
        }
    }
}
