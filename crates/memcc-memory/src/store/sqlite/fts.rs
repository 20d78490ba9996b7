//! Full text on SQLite: FTS5's BM25 over the whole index, then the best matches checked against
//! the search's scope a batch at a time.

use super::*;

/// Every full-text match of the safe `MATCH` expression, with its BM25 (higher = better), in
/// no order. Ranking in the full-text index alone and checking the scope of only the best
/// afterwards ([`first_in_scope`]) is what keeps a search on a large store fast: a join to
/// `records` per match cost ~2 µs each, 8–12 ms for a query matching 4,000 of 100k records.
pub(super) fn ranked_matches(conn: &Connection, match_expr: &str) -> Result<Vec<(i64, f64)>> {
    let mut stmt =
        conn.prepare_cached("SELECT rowid, -bm25(records_fts) FROM records_fts WHERE records_fts MATCH ?1")?;
    let rows = stmt.query_map([match_expr], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Whether `agents` read every record in the store and none is forgotten (one agent's store,
/// the usual case): then any match is in their scope. Both ends of the agent index and the
/// forgotten records' index: three seeks.
pub(super) fn reads_every_record(conn: &Connection, agents: &[String]) -> Result<bool> {
    let (first, last, forgotten): (Option<String>, Option<String>, bool) = conn
        .prepare_cached(
            "SELECT (SELECT agent_id FROM records ORDER BY agent_id LIMIT 1),
                    (SELECT agent_id FROM records ORDER BY agent_id DESC LIMIT 1),
                    EXISTS (SELECT 1 FROM records WHERE forgotten_at IS NOT NULL)",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(!forgotten && first == last && first.is_some_and(|a| agents.contains(&a)))
}

/// Which records a search may return: current records of `agents`, in `wing` and dated
/// `during` when given.
pub(super) struct Scope<'a> {
    pub(super) agents: &'a [String],
    pub(super) wing: Option<&'a str>,
    pub(super) during: Option<Period>,
}

/// The first `limit` of `ranked` (best first) that are in `scope`, checked a batch at a time:
/// usually the first batch holds them all.
pub(super) fn first_in_scope(
    conn: &Connection,
    ranked: &[(i64, f64)],
    scope: &Scope<'_>,
    limit: usize,
) -> Result<Vec<(i64, f64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM records
          WHERE id IN (SELECT value FROM json_each(?1))
            AND agent_id IN (SELECT value FROM json_each(?2))
            AND forgotten_at IS NULL
            AND (?3 IS NULL OR wing = ?3)
            AND (?4 IS NULL OR COALESCE(event_time, created_at) >= ?4)
            AND (?5 IS NULL OR COALESCE(event_time, created_at) < ?5)",
    )?;
    let agents_json = json(&scope.agents);
    let (from, until) = (scope.during.map(|p| p.start), scope.during.map(|p| p.end));
    // A wing with no more records than there are matches is read whole from its index first
    // (intersecting from the smaller side): a wing that holds none of the matches would
    // otherwise be checked match by match. A larger wing costs this read of as many ids.
    let mut in_wing = None;
    if let Some(wing) = scope.wing {
        let ids: Vec<i64> = conn
            .prepare_cached(
                "SELECT id FROM records WHERE agent_id IN (SELECT value FROM json_each(?1)) AND wing = ?2 LIMIT ?3",
            )?
            .query_map(params![agents_json, wing, ranked.len() as i64 + 1], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        if ids.len() <= ranked.len() {
            let ids: HashSet<i64> = ids.into_iter().collect();
            in_wing = Some(ranked.iter().filter(|(id, _)| ids.contains(id)).copied().collect::<Vec<_>>());
        }
    }
    let mut rest = in_wing.as_deref().unwrap_or(ranked);
    let mut found = Vec::with_capacity(limit.min(rest.len()));
    // A batch a few times the shortfall, growing when the scope keeps few of them.
    let mut batch = (2 * limit).max(64);
    while found.len() < limit && !rest.is_empty() {
        let (head, tail) = rest.split_at(batch.min(rest.len()));
        rest = tail;
        let ids: Vec<i64> = head.iter().map(|(id, _)| *id).collect();
        let kept: HashSet<i64> = stmt
            .query_map(params![json(&ids), agents_json, scope.wing, from, until], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        found.extend(head.iter().filter(|(id, _)| kept.contains(id)).take(limit - found.len()));
        batch *= 4;
    }
    Ok(found)
}

/// The `n` best-scored hits, best first; ties in the order FTS reads them (by id), as its own
/// `ORDER BY bm25 LIMIT n` leaves them.
pub(super) fn best(mut hits: Vec<(i64, f64)>, n: usize) -> Vec<(i64, f64)> {
    let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if n < hits.len() {
        hits.select_nth_unstable_by(n, order);
        hits.truncate(n);
    }
    hits.sort_unstable_by(order);
    hits
}
