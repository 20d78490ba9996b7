//! BM25 over whole sessions, with weighted query terms (an expanded query weighs each of its
//! terms), and the relevance model that expands a query from its first pass's best sessions
//! (RM3). The variant is Lucene's (`idf = ln(1 + (N − df + ½)/(df + ½))`, no `k1 + 1` factor),
//! as the experiment the ranker follows used.

use std::collections::HashMap;

/// Term-frequency saturation and length normalisation: the usual values; tuning them moved
/// nothing on RealMem dev (±0.005, `../shared/research/ranking`).
pub(crate) const K1: f64 = 1.5;
const B: f64 = 0.75;

/// A weighted query: each term with its weight.
pub type QueryTerms = Vec<(String, f64)>;

/// The sessions a query is ranked over: their lengths, and which terms each says how often.
pub struct Collection {
    /// Each session's length in terms.
    pub lengths: Vec<f64>,
    pub mean_length: f64,
    /// Term → (session index, count), for the terms fetched so far: every session that says
    /// it, or for a term fetched among a pool, the pool's alone (and its count in `pooled_df`).
    pub postings: HashMap<String, Vec<(usize, u32)>>,
    /// How many sessions say each term whose postings are a pool's alone.
    pub pooled_df: HashMap<String, usize>,
}

impl Collection {
    pub fn new(lengths: Vec<f64>) -> Self {
        let mean_length = if lengths.is_empty() { 1.0 } else { lengths.iter().sum::<f64>() / lengths.len() as f64 };
        Collection { lengths, mean_length: mean_length.max(1e-9), postings: HashMap::new(), pooled_df: HashMap::new() }
    }

    /// How many sessions say `term` (of those fetched; 0 for one not fetched).
    pub fn df(&self, term: &str) -> usize {
        self.pooled_df.get(term).copied().unwrap_or_else(|| self.postings.get(term).map_or(0, Vec::len))
    }

    /// The terms of `query` not fetched yet.
    pub fn missing(&self, query: &[(String, f64)]) -> Vec<String> {
        query.iter().map(|(t, _)| t.clone()).filter(|t| !self.postings.contains_key(t)).collect()
    }

    /// How much `tf` occurrences count in session `s` (before idf and the query's weight).
    fn saturation(&self, s: usize, tf: u32) -> f64 {
        let tf = f64::from(tf);
        tf / (tf + K1 * (1.0 - B + B * self.lengths[s] / self.mean_length))
    }

    pub fn idf(&self, df: usize) -> f64 {
        let n = self.lengths.len() as f64;
        (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln()
    }

    /// Each session's BM25 for `query` (terms without postings score nothing).
    pub fn score(&self, query: &[(String, f64)]) -> Vec<f64> {
        let mut scores = vec![0.0; self.lengths.len()];
        for (term, weight) in query {
            let Some(list) = self.postings.get(term) else { continue };
            let idf = self.idf(self.df(term));
            for &(s, tf) in list {
                scores[s] += weight * idf * self.saturation(s, tf);
            }
        }
        scores
    }

    /// The share of `query`'s terms each session says at all, and the same share weighed by
    /// their idf.
    pub fn coverage(&self, query: &[(String, f64)]) -> (Vec<f64>, Vec<f64>) {
        let n = self.lengths.len();
        let (mut plain, mut weighed) = (vec![0.0; n], vec![0.0; n]);
        let mut idf_total = 0.0;
        for (term, _) in query {
            let list = self.postings.get(term).map_or(&[][..], Vec::as_slice);
            let idf = self.idf(self.df(term));
            idf_total += idf;
            for &(s, _) in list {
                plain[s] += 1.0;
                weighed[s] += idf;
            }
        }
        let terms = query.len().max(1) as f64;
        for s in 0..n {
            plain[s] /= terms;
            weighed[s] /= idf_total.max(1e-9);
        }
        (plain, weighed)
    }
}

/// Terms and weights summed into one query.
pub fn merge(parts: &[&[(String, f64)]]) -> QueryTerms {
    let mut sum: HashMap<&str, f64> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for part in parts {
        for (term, w) in *part {
            let entry = sum.entry(term.as_str()).or_insert_with(|| {
                order.push(term.as_str());
                0.0
            });
            *entry += w;
        }
    }
    order.into_iter().map(|t| (t.to_string(), sum[t])).collect()
}

/// `query` scaled so its weights sum to `total`.
pub fn scaled(query: &[(String, f64)], total: f64) -> QueryTerms {
    let sum: f64 = query.iter().map(|(_, w)| w).sum();
    if sum <= 0.0 {
        return Vec::new();
    }
    query.iter().map(|(t, w)| (t.clone(), w / sum * total)).collect()
}

/// RM3: the relevance model of the sessions `top` (index, first-pass score), each weighed by its
/// share of their scores, a term's probability in a session its count over the session's length;
/// its `terms` heaviest terms, mixed with the original query: `keep` of the weight stays with
/// `original`, the rest goes to the model.
pub fn rm3(
    original: &[(String, f64)],
    top: &[(usize, f64)],
    terms_of: &HashMap<usize, Vec<(String, u32)>>,
    lengths: &[f64],
    terms: usize,
    keep: f64,
) -> QueryTerms {
    let total: f64 = top.iter().map(|(_, s)| s).sum();
    if total <= 0.0 || original.is_empty() {
        return original.to_vec();
    }
    let mut model: HashMap<&str, f64> = HashMap::new();
    for &(s, score) in top {
        let Some(counts) = terms_of.get(&s) else { continue };
        let length = lengths.get(s).copied().unwrap_or(1.0).max(1.0);
        for (term, tf) in counts {
            *model.entry(term.as_str()).or_insert(0.0) += score / total * f64::from(*tf) / length;
        }
    }
    let mut heaviest: Vec<(&str, f64)> = model.into_iter().filter(|(_, p)| *p > 0.0).collect();
    // Ties by term, so the expansion does not depend on a hash order.
    heaviest.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    heaviest.truncate(terms);
    let model: QueryTerms = heaviest.into_iter().map(|(t, p)| (t.to_string(), p)).collect();
    merge(&[&scaled(original, keep), &scaled(&model, 1.0 - keep)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collection() -> Collection {
        // Session 0 says "redis" twice in 10 terms, session 1 once in 100, session 2 never.
        let mut c = Collection::new(vec![10.0, 100.0, 40.0]);
        c.postings.insert("redis".into(), vec![(0, 2), (1, 1)]);
        c.postings.insert("port".into(), vec![(2, 3)]);
        c
    }

    #[test]
    fn a_short_session_saying_a_rare_term_more_often_ranks_first() {
        let s = collection().score(&[("redis".into(), 1.0)]);
        assert!(s[0] > s[1] && s[1] > 0.0 && s[2] == 0.0, "{s:?}");
    }

    #[test]
    fn a_term_weighs_as_its_weight_says() {
        let c = collection();
        let one = c.score(&[("redis".into(), 1.0)]);
        let two = c.score(&[("redis".into(), 2.0)]);
        assert!((two[0] - 2.0 * one[0]).abs() < 1e-12);
    }

    #[test]
    fn feedback_adds_the_best_sessions_words_and_keeps_the_query_s_share() {
        let terms_of: HashMap<usize, Vec<(String, u32)>> =
            [(0, vec![("redis".to_string(), 2), ("cache".to_string(), 8)])].into_iter().collect();
        let q = rm3(&[("redis".into(), 1.0)], &[(0, 3.0)], &terms_of, &[10.0, 100.0, 40.0], 10, 0.5);
        let w: HashMap<&str, f64> = q.iter().map(|(t, w)| (t.as_str(), *w)).collect();
        assert!((w["redis"] - (0.5 + 0.5 * 0.2)).abs() < 1e-12, "{w:?}");
        assert!((w["cache"] - 0.5 * 0.8).abs() < 1e-12, "{w:?}");
        assert!((q.iter().map(|(_, w)| w).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn no_feedback_without_a_first_pass_match() {
        let q = rm3(&[("redis".into(), 1.0)], &[(0, 0.0)], &HashMap::new(), &[10.0], 10, 0.5);
        assert_eq!(q, vec![("redis".to_string(), 1.0)]);
    }
}
