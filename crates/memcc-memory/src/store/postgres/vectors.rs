//! Vectors on PostgreSQL: pgvector values, searched where they are by an HNSW index per model.

use super::*;

/// A SQL string literal (for the model name in a partial index and the queries it serves).
pub(super) fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The HNSW index of `model`'s vectors: partial (one model, one dimension) on the cast that makes
/// the dimension fixed, as pgvector's index needs.
pub(super) fn hnsw_index_sql(model: &str, dim: usize) -> String {
    let name = hex::encode(Sha256::digest(format!("{model}\0{dim}").as_bytes()));
    format!(
        "CREATE INDEX IF NOT EXISTS vectors_hnsw_{} ON vectors USING hnsw ((embedding::vector({dim})) vector_cosine_ops)
         WHERE model = {}",
        &name[..16],
        literal(model)
    )
}

/// pgvector as the runtime's [`VectorStore`]: searched in the database, so what another process
/// stored is found at once. Records and their vectors are written by the store in their
/// transactions; `upsert` and `remove` have nothing left to do.
pub(super) struct PgVectors {
    pub(super) pool: Arc<Pool>,
    pub(super) model: String,
    pub(super) dim: usize,
}

impl VectorStore for PgVectors {
    fn dim(&self) -> usize {
        self.dim
    }

    fn upsert(&self, _id: i64, _owner: &str, _vector: &[f32]) {}

    fn upsert_many(&self, _rows: &[VectorRow<'_>]) {}

    fn remove(&self, _id: i64) {}

    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> Result<Vec<VectorHit>> {
        if query.len() != self.dim || k == 0 {
            return Ok(Vec::new());
        }
        let d = self.dim;
        // One table, ordered by the partial index's own expression under its predicate: the
        // form the planner serves from the HNSW index whatever its statistics say (a join
        // here let it choose an exact scan of every vector on a freshly filled table). The
        // agent filter runs inside the index scan (iterative, so k rows still come back);
        // soft-forgotten records, rare, are dropped after, from a few extra candidates.
        let sql = format!(
            "SELECT c.record_id, c.score FROM (
               SELECT v.record_id, (1 - (v.embedding::vector({d}) <=> $1::vector({d})))::float4 AS score
               FROM vectors v WHERE v.model = {} AND v.agent_id = ANY($2)
               ORDER BY v.embedding::vector({d}) <=> $1::vector({d}) LIMIT $3) c
             JOIN records r ON r.id = c.record_id WHERE r.forgotten_at IS NULL
             ORDER BY c.score DESC LIMIT $4",
            literal(&self.model)
        );
        let q = Vector::from(query.to_vec());
        let (k, candidates) = (k as i64, k as i64 + 8);
        self.pool.run(|c| {
            let rows = c.query(&sql, &[&q, &owners, &candidates, &k])?;
            rows.iter().map(|r| Ok(VectorHit { id: r.try_get(0)?, score: r.try_get(1)? })).collect::<Result<Vec<_>>>()
        })
    }

    fn len(&self) -> usize {
        let n = self.pool.run(|c| count(c, "SELECT COUNT(*) FROM vectors WHERE model = $1", &[&self.model]));
        n.ok().and_then(|n| usize::try_from(n).ok()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_double_quotes() {
        assert_eq!(literal("it's"), "'it''s'");
    }
}
