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

impl Vectors for PgStore {
    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<()> {
        let v = Vector::from(vector.to_vec());
        self.pool.write(|tx| {
            tx.execute(
                "INSERT INTO vectors (record_id, model, dim, embedding, agent_id)
                 SELECT $1, $2, $3, $4, agent_id FROM records WHERE id = $1
                 ON CONFLICT (record_id, model) DO UPDATE SET dim = EXCLUDED.dim, embedding = EXCLUDED.embedding",
                &[&id, &model, &(vector.len() as i32), &v],
            )?;
            tx.execute("UPDATE records SET embed_status = 'embedded', embed_error = NULL WHERE id = $1", &[&id])?;
            Ok(())
        })
    }

    fn mark_embed_error(&self, ids: &[i64], error: &str) -> Result<()> {
        self.pool.run(|c| {
            c.execute("UPDATE records SET embed_error = $2 WHERE id = ANY($1)", &[&ids, &error])?;
            Ok(())
        })
    }

    fn pending(&self, limit: usize) -> Result<Vec<(i64, String)>> {
        let limit = limit.min(i64::MAX as usize) as i64;
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT id, text FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL
                 ORDER BY id LIMIT $1",
                &[&limit],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }

    fn pending_count(&self) -> Result<usize> {
        self.pool.run(|c| {
            let n =
                count(c, "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL", &[])?;
            Ok(n as usize)
        })
    }

    fn use_model(&self, model: &str, dim: usize) -> Result<usize> {
        let index = hnsw_index_sql(model, dim);
        self.pool.write(|tx| {
            // Processes sharing the database change statuses one at a time.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext('memcc.use_model'))", &[])?;
            let last: Option<String> =
                tx.query_opt("SELECT value FROM meta WHERE key = 'model'", &[])?.map(|r| r.try_get(0)).transpose()?;
            let others = tx.query_opt("SELECT 1 FROM vectors WHERE model <> $1 LIMIT 1", &[&model])?.is_some();
            if last.as_deref() != Some(model) && (last.is_some() || others) {
                tx.execute(
                    "UPDATE records SET embed_status = CASE WHEN EXISTS
                       (SELECT 1 FROM vectors v WHERE v.record_id = records.id AND v.model = $1)
                       THEN 'embedded' ELSE 'pending' END",
                    &[&model],
                )?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('model', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&model],
            )?;
            tx.batch_execute(&index)?;
            let n = count(
                tx,
                "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL",
                &[],
            )?;
            Ok(n as usize)
        })
    }

    fn vector_models(&self) -> Result<Vec<(String, i64)>> {
        self.pool.run(|c| pairs(c.query("SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model", &[])?))
    }

    fn for_each_vector_after(&self, model: &str, after: i64, visit: VectorVisitor<'_>) -> Result<()> {
        let mut last = after;
        loop {
            let rows = self.pool.run(|c| {
                Ok(c.query(
                    "SELECT v.record_id, r.agent_id, v.embedding FROM vectors v JOIN records r ON r.id = v.record_id
                     WHERE v.model = $1 AND r.forgotten_at IS NULL AND v.record_id > $2 ORDER BY v.record_id LIMIT $3",
                    &[&model, &last, &PAGE],
                )?)
            })?;
            for row in &rows {
                let id: i64 = row.try_get(0)?;
                let agent: String = row.try_get(1)?;
                let v: Vector = row.try_get(2)?;
                visit(id, &agent, v.to_vec());
                last = id;
            }
            if (rows.len() as i64) < PAGE {
                return Ok(());
            }
        }
    }

    fn last_vector_id(&self) -> Result<i64> {
        self.pool.run(|c| count(c, "SELECT COALESCE(MAX(record_id), 0) FROM vectors", &[]))
    }

    fn vector_count(&self, model: &str) -> Result<usize> {
        self.pool.run(|c| {
            let n = count(
                c,
                "SELECT COUNT(*) FROM vectors v JOIN records r ON r.id = v.record_id
                 WHERE v.model = $1 AND r.forgotten_at IS NULL",
                &[&model],
            )?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    fn vectors(&self, ids: &[i64], model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT record_id, embedding FROM vectors WHERE model = $2 AND record_id = ANY($1)",
                &[&ids, &model],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get::<_, Vector>(1)?.to_vec()))).collect()
        })
    }

    fn native_index(&self, model: &str, dim: usize) -> Result<Option<Arc<dyn VectorStore>>> {
        Ok(Some(Arc::new(PgVectors { pool: self.pool.clone(), model: model.to_string(), dim })))
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
