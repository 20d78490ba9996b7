//! Embedders: text → L2-normalised vectors, behind one trait.
//!
//! - [`usem3::Usem3`]: the local default (USE multilingual v3, 512-d), its files fetched at
//!   set-up ([`install`]).
//! - [`OpenAiEmbedder`]: an OpenAI-compatible `/embeddings` endpoint.
//! - [`HashingEmbedder`]: character n-gram hashing; needs no files. For tests, and the loud
//!   fallback when no model is installed.

pub mod install;
pub mod prepared;
pub mod sentencepiece;
pub mod usem3;

use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use memcc_core::llm::{Breaker, LlmError, OpenAiConfig, http_agent, post_json_with_retry};

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model unavailable: {0}")]
    Model(String),
    #[error("embedding endpoint: {0}")]
    Remote(#[from] LlmError),
    #[error("embedding endpoint returned {got} vectors of dimension {dim}; expected {want_n} of {want_dim}")]
    Shape { got: usize, dim: usize, want_n: usize, want_dim: usize },
}

pub trait Embedder: Send + Sync {
    /// Identifies the vector space; vectors of different ids are never compared.
    fn model_id(&self) -> String;
    fn dim(&self) -> usize;
    /// One normalised vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Character 3- and 4-gram hashing (plus whole lowercase words) into `dim` buckets.
#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    pub dim: usize,
}

impl Default for HashingEmbedder {
    fn default() -> Self {
        HashingEmbedder { dim: 256 }
    }
}

impl HashingEmbedder {
    fn bucket(&self, feature: &str) -> (usize, f32) {
        let h = Sha256::digest(feature.as_bytes());
        let n = u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
        ((n % self.dim as u64) as usize, if h[8] & 1 == 0 { 1.0 } else { -1.0 })
    }
}

impl Embedder for HashingEmbedder {
    fn model_id(&self) -> String {
        format!("hashing-{}", self.dim)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                let lower = t.to_lowercase();
                for word in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                    let (i, s) = self.bucket(word);
                    v[i] += 2.0 * s;
                    let chars: Vec<char> = format!(" {word} ").chars().collect();
                    for n in [3usize, 4] {
                        for g in chars.windows(n) {
                            let (i, s) = self.bucket(&g.iter().collect::<String>());
                            v[i] += s;
                        }
                    }
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}

/// An OpenAI-compatible `/embeddings` client: batched, retried, dimension-checked.
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    agent: ureq::Agent,
    breaker: Breaker,
    dim: usize,
    batch: usize,
}

#[derive(Deserialize)]
struct EmbeddingResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    /// `dim` is what the model returns (1536 for text-embedding-3-small).
    pub fn new(config: OpenAiConfig, dim: usize) -> Self {
        let agent = http_agent(config.timeout.max(Duration::from_secs(1)));
        OpenAiEmbedder { config, agent, breaker: Breaker::default(), dim, batch: 64 }
    }
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = self.config.endpoint("embeddings");
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch) {
            let body = serde_json::json!({"model": self.config.model, "input": chunk});
            let text = post_json_with_retry(&self.agent, &self.config, &self.breaker, &url, &body)?;
            let parsed: EmbeddingResponse = serde_json::from_str(&text).map_err(|e| LlmError::BadResponse {
                url: url.clone(),
                detail: format!("not an embeddings response: {e}"),
            })?;
            let mut items = parsed.data;
            items.sort_by_key(|i| i.index.unwrap_or(usize::MAX));
            let dim = items.first().map_or(0, |i| i.embedding.len());
            if items.len() != chunk.len() || items.iter().any(|i| i.embedding.len() != self.dim) {
                return Err(EmbedError::Shape { got: items.len(), dim, want_n: chunk.len(), want_dim: self.dim });
            }
            for mut item in items {
                normalize(&mut item.embedding);
                out.push(item.embedding);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashing_is_deterministic_normalised_and_lexical() {
        let e = HashingEmbedder::default();
        let v = e.embed(&["peanut allergy", "peanut allergy", "quantum physics lecture"]).unwrap();
        assert_eq!(v[0], v[1]);
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        let near = e.embed(&["allergic to peanuts"]).unwrap();
        assert!(dot(&v[0], &near[0]) > dot(&v[2], &near[0]));
    }
}
