//! [`VectorStore`] over a LanceDB table (`--features lancedb`, off by default).
//!
//! One table `vectors` with columns `id` (Int64), `owner` (Utf8) and `vector`
//! (FixedSizeList<Float32, dim>), searched by cosine distance with the owner filter applied
//! before the search (no index: LanceDB scans every vector, so results are exact).
//! LanceDB is async; this type owns a small tokio runtime and blocks on it, because the trait is
//! called from plain threads. The trait has no error channel (the in-memory default cannot
//! fail), so a failed LanceDB operation is logged and the call degrades: a write is skipped, a
//! search returns nothing. Unlike the default, this store is not atomic with `memory.db`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Float32Type;
use arrow_array::{Array, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase};
use lancedb::{DistanceType, Table};

use super::{VectorHit, VectorRow, VectorStore};

const TABLE: &str = "vectors";

#[derive(Debug, thiserror::Error)]
pub enum LanceError {
    #[error("LanceDB: {0}")]
    Lance(#[from] lancedb::Error),
    #[error("cannot start the LanceDB runtime: {0}")]
    Runtime(#[from] std::io::Error),
    #[error("the LanceDB table at {path} holds {found}-dimensional vectors, not {want}")]
    Dimension { path: String, found: i32, want: usize },
}

pub struct LanceVectorStore {
    dim: usize,
    schema: SchemaRef,
    table: Table,
    runtime: tokio::runtime::Runtime,
}

impl LanceVectorStore {
    /// Open (or create) the store in directory `dir` for `dim`-dimensional vectors.
    pub fn open(dir: &Path, dim: usize) -> Result<Self, LanceError> {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("owner", DataType::Utf8, false),
            Field::new(
                "vector",
                DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), dim as i32),
                false,
            ),
        ]));
        let uri = dir.to_string_lossy().into_owned();
        let table = runtime.block_on(async {
            let db = lancedb::connect(&uri).execute().await?;
            match db.open_table(TABLE).execute().await {
                Ok(table) => Ok(table),
                Err(lancedb::Error::TableNotFound { .. }) => {
                    db.create_empty_table(TABLE, schema.clone()).execute().await
                }
                Err(e) => Err(e),
            }
        })?;
        let found = runtime.block_on(table.schema())?;
        let stored_dim = match found.field_with_name("vector").map(|f| f.data_type().clone()) {
            Ok(DataType::FixedSizeList(_, n)) => n,
            _ => -1,
        };
        if stored_dim != dim as i32 {
            return Err(LanceError::Dimension { path: uri, found: stored_dim, want: dim });
        }
        Ok(LanceVectorStore { dim, schema, table, runtime })
    }

    fn batch(&self, rows: &[VectorRow<'_>]) -> Result<RecordBatch, arrow_schema::ArrowError> {
        let ids = Int64Array::from_iter_values(rows.iter().map(|r| r.0));
        let owners = StringArray::from_iter_values(rows.iter().map(|r| r.1));
        let vectors = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.iter().map(|r| Some(r.2.iter().copied().map(Some).collect::<Vec<_>>())),
            self.dim as i32,
        );
        RecordBatch::try_new(self.schema.clone(), vec![Arc::new(ids), Arc::new(owners), Arc::new(vectors)])
    }

    /// Insert or replace many vectors in one LanceDB commit.
    fn merge(&self, rows: &[VectorRow<'_>]) -> Result<(), String> {
        let batch = self.batch(rows).map_err(|e| e.to_string())?;
        let reader = RecordBatchIterator::new(vec![Ok(batch)], self.schema.clone());
        self.runtime.block_on(async {
            let mut merge = self.table.merge_insert(&["id"]);
            merge.when_matched_update_all(None).when_not_matched_insert_all();
            merge.execute(Box::new(reader)).await.map(|_| ()).map_err(|e| e.to_string())
        })
    }

    fn query(&self, query: &[f32], k: usize, owners: &[String]) -> Result<Vec<VectorHit>, lancedb::Error> {
        let filter = format!("owner IN ({})", owners.iter().map(|o| sql_string(o)).collect::<Vec<_>>().join(", "));
        self.runtime.block_on(async {
            let batches: Vec<RecordBatch> = self
                .table
                .query()
                .nearest_to(query)?
                .distance_type(DistanceType::Cosine)
                .only_if(filter)
                .limit(k)
                .execute()
                .await?
                .try_collect()
                .await?;
            let mut hits = Vec::new();
            for batch in &batches {
                let ids = batch.column_by_name("id").and_then(|c| c.as_any().downcast_ref::<Int64Array>());
                let distances =
                    batch.column_by_name("_distance").and_then(|c| c.as_any().downcast_ref::<Float32Array>());
                let (Some(ids), Some(distances)) = (ids, distances) else { continue };
                for i in 0..batch.num_rows() {
                    // Cosine distance is 1 − similarity.
                    hits.push(VectorHit { id: ids.value(i), score: 1.0 - distances.value(i) });
                }
            }
            hits.sort_by(|a, b| b.score.total_cmp(&a.score));
            hits.truncate(k);
            Ok(hits)
        })
    }
}

/// A SQL string literal: single quotes doubled, so an owner id can never end the literal.
fn sql_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl VectorStore for LanceVectorStore {
    fn dim(&self) -> usize {
        self.dim
    }

    fn upsert(&self, id: i64, owner: &str, vector: &[f32]) {
        self.upsert_many(&[(id, owner, vector)]);
    }

    fn upsert_many(&self, rows: &[VectorRow<'_>]) {
        // LanceDB refuses a merge whose source holds one key twice: the last write wins.
        let mut last: HashMap<i64, usize> = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            if r.2.len() == self.dim {
                last.insert(r.0, i);
            } else {
                tracing::warn!(id = r.0, got = r.2.len(), want = self.dim, "vector of the wrong dimension not indexed");
            }
        }
        let rows: Vec<VectorRow<'_>> =
            rows.iter().enumerate().filter(|(i, r)| last.get(&r.0) == Some(i)).map(|(_, r)| *r).collect();
        if rows.is_empty() {
            return;
        }
        if let Err(e) = self.merge(&rows) {
            tracing::warn!(error = %e, rows = rows.len(), "LanceDB upsert failed; those vectors are not indexed");
        }
    }

    fn remove(&self, id: i64) {
        if let Err(e) = self.runtime.block_on(self.table.delete(&format!("id = {id}"))) {
            tracing::warn!(id, error = %e, "LanceDB delete failed");
        }
    }

    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> crate::error::Result<Vec<VectorHit>> {
        if owners.is_empty() || query.len() != self.dim || k == 0 {
            return Ok(Vec::new());
        }
        self.query(query, k, owners)
            .map_err(|e| crate::error::MemoryError::Io(std::io::Error::other(format!("LanceDB search: {e}"))))
    }

    fn len(&self) -> usize {
        self.runtime.block_on(self.table.count_rows(None)).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "LanceDB count failed");
            0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::sql_string;

    #[test]
    fn owner_literals_cannot_escape() {
        assert_eq!(sql_string("a'); DROP TABLE x; --"), "'a''); DROP TABLE x; --'");
    }
}
