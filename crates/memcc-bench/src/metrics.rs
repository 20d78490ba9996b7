//! Retrieval metrics over ranked lists of units (sessions or turns).
//!
//! recall_all@k: every gold unit is in the top k (LongMemEval's official retrieval metric);
//! recall_any@k: at least one is; NDCG@k with binary relevance.

use std::collections::HashSet;
use std::hash::Hash;

pub fn recall_all<T: Eq + Hash>(ranked: &[T], gold: &HashSet<T>, k: usize) -> f64 {
    if gold.is_empty() {
        return 0.0;
    }
    let top: HashSet<&T> = ranked.iter().take(k).collect();
    if gold.iter().all(|g| top.contains(g)) { 1.0 } else { 0.0 }
}

pub fn recall_any<T: Eq + Hash>(ranked: &[T], gold: &HashSet<T>, k: usize) -> f64 {
    if ranked.iter().take(k).any(|r| gold.contains(r)) { 1.0 } else { 0.0 }
}

pub fn ndcg<T: Eq + Hash>(ranked: &[T], gold: &HashSet<T>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, r)| gold.contains(r))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..gold.len().min(k)).map(|i| 1.0 / (i as f64 + 2.0).log2()).sum();
    if ideal == 0.0 { 0.0 } else { dcg / ideal }
}

/// Distinct items in first-seen order.
pub fn dedup_in_order<T: Eq + Hash + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = HashSet::new();
    items.into_iter().filter(|x| seen.insert(x.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[u32]) -> HashSet<u32> {
        v.iter().copied().collect()
    }

    #[test]
    fn recall_all_versus_any() {
        let ranked = [5, 1, 9, 2];
        assert_eq!(recall_all(&ranked, &set(&[1, 2]), 2), 0.0);
        assert_eq!(recall_any(&ranked, &set(&[1, 2]), 2), 1.0);
        assert_eq!(recall_all(&ranked, &set(&[1, 2]), 4), 1.0);
        assert_eq!(recall_any(&ranked, &set(&[7]), 4), 0.0);
        assert_eq!(recall_all(&ranked, &set(&[]), 4), 0.0, "no gold: never counted as found");
    }

    #[test]
    fn ndcg_by_hand() {
        // gold {1, 2}; ranked [5, 1, 9, 2]: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
        let want = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg(&[5, 1, 9, 2], &set(&[1, 2]), 4) - want).abs() < 1e-12);
        assert_eq!(ndcg(&[1, 2], &set(&[1, 2]), 2), 1.0);
        assert_eq!(ndcg(&[3, 4], &set(&[1]), 2), 0.0);
        // Only the top k counts.
        assert_eq!(ndcg(&[3, 1], &set(&[1]), 1), 0.0);
    }

    #[test]
    fn dedup_keeps_first_occurrence() {
        assert_eq!(dedup_in_order([3, 1, 3, 2, 1]), vec![3, 1, 2]);
    }
}
