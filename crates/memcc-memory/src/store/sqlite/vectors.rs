//! The records' vectors: queued, stored, read back, the model in use. (SQLite store)

use super::*;

impl Vectors for SqliteStore {
    /// Attach a vector to a pending record (queue processing).
    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO vectors (record_id, model, dim, data) VALUES (?1, ?2, ?3, ?4)",
                params![id, model, vector.len() as i64, vector_to_blob(vector)],
            )?;
            tx.execute("UPDATE records SET embed_status = 'embedded', embed_error = NULL WHERE id = ?1", [id])?;
            Ok(())
        })
    }

    fn mark_embed_error(&self, ids: &[i64], error: &str) -> Result<()> {
        let conn = self.writer();
        let mut stmt = conn.prepare_cached("UPDATE records SET embed_error = ?2 WHERE id = ?1")?;
        for id in ids {
            stmt.execute(params![id, error])?;
        }
        Ok(())
    }

    /// Records waiting for an embedding: (id, text).
    fn pending(&self, limit: usize) -> Result<Vec<(i64, String)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, text FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL ORDER BY id LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn pending_count(&self) -> Result<usize> {
        let conn = self.reader();
        let n: i64 = conn.query_row(
            "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL",
            [],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Make embedding statuses follow `model`: a record is embedded when it has a vector of
    /// `model`, pending otherwise. Vectors of other models are kept (switching back finds them).
    /// Only does work when the model changed since the last open; returns how many records wait.
    fn use_model(&self, model: &str, _dim: usize) -> Result<usize> {
        const PENDING: &str = "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL";
        // The common case, the model of last time, is a read: nothing to change, and a store
        // opened for reading only is served.
        {
            let conn = self.reader();
            let last: Option<String> =
                conn.query_row("SELECT value FROM meta WHERE key = 'model'", [], |r| r.get(0)).optional()?;
            if last.as_deref() == Some(model) {
                return Ok(conn.query_row(PENDING, [], |r| r.get::<_, i64>(0))? as usize);
            }
        }
        self.write(|tx| {
            let last: Option<String> =
                tx.query_row("SELECT value FROM meta WHERE key = 'model'", [], |r| r.get(0)).optional()?;
            let others: i64 =
                tx.query_row("SELECT COUNT(*) FROM (SELECT 1 FROM vectors WHERE model <> ?1 LIMIT 1)", [model], |r| {
                    r.get(0)
                })?;
            if last.as_deref() != Some(model) && (last.is_some() || others > 0) {
                tx.execute(
                    "UPDATE records SET embed_status = CASE WHEN EXISTS
                       (SELECT 1 FROM vectors v WHERE v.record_id = records.id AND v.model = ?1)
                       THEN 'embedded' ELSE 'pending' END",
                    [model],
                )?;
            }
            tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('model', ?1)", [model])?;
            let pending: i64 = tx.query_row(PENDING, [], |r| r.get(0))?;
            Ok(pending as usize)
        })
    }

    /// Models with vectors in this store, and how many each.
    fn vector_models(&self) -> Result<Vec<(String, i64)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare("SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Like [`Vectors::for_each_vector`], for records with an id above `after` only.
    fn for_each_vector_after(&self, model: &str, after: i64, visit: VectorVisitor<'_>) -> Result<()> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT v.record_id, r.agent_id, v.data FROM vectors v JOIN records r ON r.id = v.record_id
             WHERE v.model = ?1 AND r.forgotten_at IS NULL AND v.record_id > ?2 ORDER BY v.record_id",
        )?;
        let mut rows = stmt.query(params![model, after])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let agent: String = row.get(1)?;
            let blob: Vec<u8> = row.get(2)?;
            visit(id, &agent, blob_to_vector(&blob));
        }
        Ok(())
    }

    /// The highest record id that has a vector (any model): how far the index must have read.
    fn last_vector_id(&self) -> Result<i64> {
        Ok(self.reader().query_row("SELECT COALESCE(MAX(record_id), 0) FROM vectors", [], |r| r.get(0))?)
    }

    /// How many vectors `for_each_vector` visits for `model`.
    fn vector_count(&self, model: &str) -> Result<usize> {
        let n: i64 = self.reader().query_row(
            "SELECT COUNT(*) FROM vectors v JOIN records r ON r.id = v.record_id
             WHERE v.model = ?1 AND r.forgotten_at IS NULL",
            [model],
            |r| r.get(0),
        )?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Exact vectors of `ids` (those that have one of `model`), in one query.
    fn vectors(&self, ids: &[i64], model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        let conn = self.reader();
        let ids_json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(
            "SELECT record_id, data FROM vectors WHERE model = ?2 AND record_id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows =
            stmt.query_map(params![ids_json, model], |r| Ok((r.get(0)?, blob_to_vector(&r.get::<_, Vec<u8>>(1)?))))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }
    fn native_index(&self, _model: &str, _dim: usize) -> Result<Option<Arc<dyn VectorStore>>> {
        Ok(None)
    }
}
