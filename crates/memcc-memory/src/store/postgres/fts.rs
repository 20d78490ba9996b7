//! Full text on PostgreSQL: a record's BM25 score computed in SQL, as SQLite's FTS5 ranks, and
//! the query terms as `tsquery` text.

use super::*;

/// BM25's yardstick for a record's length: the mean length in words of the newest records (a
/// sample is enough to say what a long record is; the whole table would be a scan per search).
/// A scalar subquery, evaluated once per search; as a joined row it changed the plan (~1.6×).
macro_rules! mean_words {
    () => {
        "(SELECT GREATEST(COALESCE(avg(fts_words), 1), 1)::float8
            FROM (SELECT fts_words FROM records ORDER BY id DESC LIMIT 500) AS newest)"
    };
}

/// BM25's `k1` (how fast a term's repeats stop adding) and `b` (how much a record's length
/// counts): SQLite FTS5's fixed values, so that both backends rank a search alike. Not in
/// [`crate::tuning::Tuning`]: FTS5 cannot change them, and a setting one backend ignores
/// would make the two disagree.
macro_rules! bm25_k1 {
    () => {
        "1.2"
    };
}
macro_rules! bm25_b {
    () => {
        "0.75"
    };
}

/// `K` of BM25 for record `r`: `k1 · (1 − b + b · length / mean length)`.
macro_rules! bm25_k {
    () => {
        concat!(bm25_k1!(), " * (1 - ", bm25_b!(), " + ", bm25_b!(), " * r.fts_words::float8 / ", mean_words!(), ")")
    };
}

/// A record's full-text score: BM25 (`k1` and `b` above), as SQLite's FTS5 ranks, summed over
/// the query's terms (`$1` the text search configuration, `$2` / `$3` the terms and their IDFs).
/// Plain `ts_rank` normalises length by its logarithm, which let long records — summaries —
/// rise by holding many words (LoCoMo dev, full pipeline: turn R_all@10 0.729 on PostgreSQL
/// against SQLite's 0.758; 0.755 with this).
///
/// A term's count in the record is read back from `ts_rank` without normalisation, which for
/// one term is `u / 16.45` with `u = Σ_{j ≤ tf} 1/j²` (0 when absent): `(π²/6 − 1)·u/(π²/6 − u)`
/// is the count exactly at 1 and within 3 % above (`ts_rank_cd` counts exactly but costs four
/// times as much). Written so that the rank is computed once per record and term:
/// `tf·(k1 + 1)/(tf + K) = (k1 + 1) − (k1 + 1)·K/(tf + K)`.
const SCORE: &str = concat!(
    "SUM(w.idf * ((",
    bm25_k1!(),
    " + 1) - (",
    bm25_k1!(),
    " + 1) * (",
    bm25_k!(),
    ") / (0.644934 * (1.644934 / GREATEST(1.644934 - 16.44934 * ts_rank(r.fts, to_tsquery($1::text::regconfig, w.q), 0)::float8, 0.001) - 1.0) + ",
    bm25_k!(),
    ")))::float8 AS score"
);

/// The full-text matches (`$4`, any term) among the current records of the agents `$5`, in wing
/// `$6` when it is not null, one row per record and term.
const MATCHING: &str = "FROM records r, unnest($2::text[], $3::float8[]) AS w(q, idf)
     WHERE r.fts @@ to_tsquery($1::text::regconfig, $4) AND r.agent_id = ANY($5)
       AND r.forgotten_at IS NULL AND ($6::text IS NULL OR r.wing = $6)";

impl PgStore {
    /// [`Records::fts`] (`beside` none) and [`Records::fts_also_during`] (`beside` the
    /// period) in one: every match is scored once, and the best of the period are ranked among
    /// themselves beside the best overall.
    pub(super) fn full_text(&self, q: &FullText<'_>, beside: Option<Period>) -> Result<Vec<(i64, f64)>> {
        let FullText { terms, agents, wing, during, limit, frequencies } = *q;
        let parts = rendered_terms(terms, term_tsquery);
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        let any = parts.join(" | ");
        let limit = limit as i64;
        let (from, until) = (during.map(|p| p.start), during.map(|p| p.end));
        self.pool.run(|c| {
            // BM25's shape, which `ts_rank` alone lacks: each term's match weighs by how rare the
            // term is among the agents' records (its IDF), so "Lisbon" outweighs "trip". Document
            // frequencies are counted up to DF_CAP (beyond it a term is common all the same), here
            // unless the caller counted them already.
            let n = count(c, MAX_RECORD_ID, &[])?.max(1) as f64;
            let counted: HashMap<String, usize> = match frequencies {
                Some(f) => terms.iter().map(term_tsquery).zip(f.iter().copied()).collect(),
                None => HashMap::new(),
            };
            let missing: Vec<String> = parts.iter().filter(|p| !counted.contains_key(*p)).cloned().collect();
            let mut df: HashMap<String, usize> = if missing.is_empty() {
                HashMap::new()
            } else {
                missing.iter().cloned().zip(document_frequencies(c, &missing, agents, DF_CAP)?).collect()
            };
            df.extend(counted);
            let idf: Vec<f64> = parts
                .iter()
                .map(|p| {
                    let df = df.get(p).copied().unwrap_or(0).min(DF_CAP as usize) as f64;
                    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
                })
                .collect();
            let rows = match beside {
                None => c.query(
                    &format!(
                        "SELECT r.id, {SCORE} {MATCHING}
                           AND ($8::int8 IS NULL OR COALESCE(r.event_time, r.created_at) >= $8)
                           AND ($9::int8 IS NULL OR COALESCE(r.event_time, r.created_at) < $9)
                         GROUP BY r.id ORDER BY score DESC, r.id DESC LIMIT $7"
                    ),
                    &[&TS_CONFIG, &parts, &idf, &any, &agents, &wing, &limit, &from, &until],
                )?,
                Some(period) => c.query(
                    &format!(
                        "SELECT id, score FROM (
                           SELECT id, score, within,
                                  row_number() OVER (ORDER BY score DESC, id DESC) AS overall,
                                  row_number() OVER (PARTITION BY within ORDER BY score DESC, id DESC) AS among_its_own
                           FROM (SELECT r.id, {SCORE},
                                        bool_and(COALESCE(r.event_time, r.created_at) >= $8
                                                 AND COALESCE(r.event_time, r.created_at) < $9) AS within
                                 {MATCHING} GROUP BY r.id) AS scored) AS ranked
                         WHERE overall <= $7 OR (within AND among_its_own <= $7)
                         ORDER BY score DESC, id DESC"
                    ),
                    &[&TS_CONFIG, &parts, &idf, &any, &agents, &wing, &limit, &period.start, &period.end],
                )?,
            };
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }
}

/// A `to_tsquery` text matching `term`, as [`memcc_core::text::term_expr`] does for FTS5: a word
/// as itself (stemmed by the configuration), a CJK run as the phrase of its bigrams, a single
/// CJK character as a prefix. Words hold only letters and digits, so a quote or an operator in
/// user text can never reach the query syntax.
pub(super) fn term_tsquery(term: &Term) -> String {
    match term {
        Term::Word(w) => format!("'{w}'"),
        Term::Cjk(chars) if chars.len() == 1 => format!("'{}':*", chars[0]),
        Term::Cjk(chars) => {
            let bigrams: Vec<String> =
                chars.windows(2).map(|p| format!("'{}'", p.iter().collect::<String>())).collect();
            format!("({})", bigrams.join(" <-> "))
        }
    }
}

/// Each tsquery's matching current records of `agents`, counted up to `limit`, in one round trip.
pub(super) fn document_frequencies(
    c: &mut Client,
    parts: &[String],
    agents: &[String],
    limit: i64,
) -> Result<Vec<usize>> {
    let rows = c.query(
        "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM records
                   WHERE fts @@ to_tsquery($1::text::regconfig, q) AND agent_id = ANY($2)
                     AND forgotten_at IS NULL LIMIT $3) x)
         FROM unnest($4::text[]) WITH ORDINALITY AS t(q, i) ORDER BY i",
        &[&TS_CONFIG, &agents, &limit, &parts],
    )?;
    rows.iter().map(|r| Ok(r.try_get::<_, i64>(0)?.max(0) as usize)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsquery_quotes_every_term_and_keeps_cjk_as_bigram_phrases() {
        let terms = memcc_core::text::terms("marathon \"x' OR 1 北京大学 京 marathon");
        assert_eq!(
            rendered_terms(&terms, term_tsquery).join(" | "),
            "'marathon' | 'x' | 'or' | '1' | ('北京' <-> '京大' <-> '大学') | '京':*"
        );
    }
}
