//! Forgetting's steps ([`crate::forget::ForgetTx`]) as SQL on one SQLite transaction.

use super::*;
use crate::sessions::MessageWords;
use crate::store::{sessions, supersession};

impl ForgetTx for SqliteTx<'_> {
    fn session_windows(&mut self, agent: &str, session_id: &str) -> Result<Vec<MemoryRecord>> {
        let mut stmt = self.0.prepare_cached(&format!(
            "{RECORD_SELECT} WHERE agent_id = ?1 AND kind = 'verbatim' AND forgotten_at IS NULL
               AND EXISTS (SELECT 1 FROM json_each(records.source_session_ids) s WHERE s.key = 0 AND s.value = ?2)
             ORDER BY id"
        ))?;
        let rows = stmt.query_map(params![agent, session_id], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn clear_session(&mut self, agent: &str, session_id: &str) -> Result<()> {
        let key: Option<i64> = self
            .0
            .prepare_cached(sessions::SESSION_KEY)?
            .query_row(params![agent, session_id], |r| r.get(0))
            .optional()?;
        if let Some(key) = key {
            for sql in sessions::CLEAR_SESSION {
                self.0.prepare_cached(sql)?.execute([key])?;
            }
        }
        Ok(())
    }

    fn drop_empty_session(&mut self, agent: &str, session_id: &str) -> Result<()> {
        let key: Option<i64> = self
            .0
            .prepare_cached(sessions::SESSION_KEY)?
            .query_row(params![agent, session_id], |r| r.get(0))
            .optional()?;
        if let Some(key) = key {
            self.0.prepare_cached(sessions::DROP_EMPTY_SESSION)?.execute([key])?;
        }
        Ok(())
    }

    fn add_message_words(&mut self, agent: &str, words: &MessageWords) -> Result<()> {
        super::insert::add_message_words(self.0, agent, words)
    }

    fn target(&mut self, agent: &str, id: i64) -> Result<Option<MemoryRecord>> {
        let mut stmt = self.0.prepare_cached(&format!("{RECORD_SELECT} WHERE id = ?1 AND agent_id = ?2"))?;
        Ok(stmt.query_row(params![id, agent], record_from_row).optional()?)
    }

    fn sharing(&mut self, agent: &str, except: i64, messages: &[i64]) -> Result<Vec<MemoryRecord>> {
        let mut stmt = self.0.prepare_cached(&format!(
            "{RECORD_SELECT} WHERE agent_id = ?1 AND id <> ?2 AND forgotten_at IS NULL
               AND EXISTS (SELECT 1 FROM json_each(records.source_message_ids) m
                           WHERE m.value IN (SELECT value FROM json_each(?3)))"
        ))?;
        let rows = stmt.query_map(params![agent, except, json(&messages)], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn condensing(&mut self, agent: &str, summary_id: &str) -> Result<Vec<MemoryRecord>> {
        let mut stmt = self.0.prepare_cached(&format!(
            "{RECORD_SELECT} WHERE agent_id = ?1 AND kind = 'summary' AND forgotten_at IS NULL
               AND EXISTS (SELECT 1 FROM json_each(records.source_summary_ids) s WHERE s.key > 0 AND s.value = ?2)"
        ))?;
        let rows = stmt.query_map(params![agent, summary_id], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn hash_taken(&mut self, agent: &str, hash: &str, except: i64) -> Result<bool> {
        let n: i64 = self.0.query_row(
            "SELECT COUNT(*) FROM records WHERE agent_id = ?1 AND content_hash = ?2 AND id <> ?3",
            params![agent, hash, except],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    fn rewrite(&mut self, id: i64, text: &str, ids: &[i64], dropped: &str) -> Result<()> {
        let tx = self.0;
        tx.execute(
            "UPDATE records SET text = ?2, content_hash = ?3, source_message_ids = ?4, embed_status = 'pending'
             WHERE id = ?1",
            params![id, text, content_hash(text), json(&ids)],
        )?;
        tx.execute("DELETE FROM records_fts WHERE rowid = ?1", [id])?;
        tx.execute("INSERT INTO records_fts (rowid, body) VALUES (?1, ?2)", params![id, fts_document(text)])?;
        tx.execute("DELETE FROM vectors WHERE record_id = ?1", [id])?;
        delete_triples(tx, "source_record = ?1 AND instr(lower(?2), lower(object)) > 0", params![id, dropped])
    }

    fn remove(&mut self, id: i64, how: Forget) -> Result<()> {
        let tx = self.0;
        match how {
            Forget::Soft => {
                tx.execute(
                    "UPDATE records SET forgotten_at = COALESCE(forgotten_at, ?2) WHERE id = ?1",
                    params![id, now_ms()],
                )?;
                tx.execute(supersession::UNDO_RECORDS, [id])?;
                tx.execute(supersession::UNDO_TRIPLES, [id])?;
            }
            Forget::Purge => {
                delete_triples(tx, "source_record = ?1", params![id])?;
                tx.execute("DELETE FROM vectors WHERE record_id = ?1", [id])?;
                tx.execute("DELETE FROM records_fts WHERE rowid = ?1", [id])?;
                tx.execute(supersession::UNDO_RECORDS, [id])?;
                tx.execute("DELETE FROM records WHERE id = ?1", [id])?;
            }
        }
        Ok(())
    }

    fn session_records(&mut self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id FROM records WHERE agent_id = ?1
               AND EXISTS (SELECT 1 FROM json_each(records.source_session_ids) s WHERE s.value = ?2)
               AND (?3 IS NULL OR json_array_length(records.source_summary_ids) = 0
                    OR EXISTS (SELECT 1 FROM json_each(records.source_summary_ids) x
                               WHERE x.value IN (SELECT value FROM json_each(?3))))",
        )?;
        let summaries = summaries
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| crate::error::MemoryError::Internal(format!("summary ids as JSON: {e}")))?;
        let rows = stmt.query_map(params![agent, session_id, summaries], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn tombstone(&mut self, agent: &str, sessions: &[String], said: &[String]) -> Result<()> {
        let mut stmt = self.0.prepare_cached(
            "INSERT INTO tombstones (agent_id, session_id, said, forgotten_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT DO NOTHING",
        )?;
        let now = memcc_core::time::now_ms();
        let everywhere = [String::new()];
        for session in if sessions.is_empty() { &everywhere[..] } else { sessions } {
            for s in said {
                stmt.execute(params![agent, session, s, now])?;
            }
        }
        Ok(())
    }
}

/// Delete the triples `condition` selects ([`crate::store::delete_triples_sql`]).
fn delete_triples(tx: &Transaction<'_>, condition: &str, params: &[&dyn rusqlite::ToSql]) -> Result<()> {
    for sql in crate::store::delete_triples_sql(condition) {
        tx.execute(&sql, params)?;
    }
    Ok(())
}

impl Forgetting for SqliteStore {
    fn forget(&self, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
        self.write(|tx| crate::forget::forget(&mut SqliteTx(tx), agent, id, how))
    }

    fn purge_session(&self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>> {
        self.write(|tx| crate::forget::purge_session(&mut SqliteTx(tx), agent, session_id, summaries))
    }
}
