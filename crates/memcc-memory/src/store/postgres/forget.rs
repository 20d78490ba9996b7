//! Forgetting's steps ([`crate::forget::ForgetTx`]) as SQL on one PostgreSQL transaction.

use super::*;
use crate::sessions::MessageWords;
use crate::store::{sessions, supersession};

/// Forgetting's steps as SQL on one PostgreSQL transaction.
pub(super) struct PgTx<'a, 'b>(pub(super) &'a mut Transaction<'b>);

impl ForgetTx for PgTx<'_, '_> {
    fn session_windows(&mut self, agent: &str, session_id: &str) -> Result<Vec<MemoryRecord>> {
        records(self.0.query(
            &format!(
                "{RECORD_SELECT} WHERE agent_id = $1 AND kind = 'verbatim' AND forgotten_at IS NULL
                   AND records.source_session_ids->>0 = $2
                 ORDER BY id"
            ),
            &[&agent, &session_id],
        )?)
    }

    fn clear_session(&mut self, agent: &str, session_id: &str) -> Result<()> {
        let key = self.0.query_opt(&supersession::postgres(sessions::SESSION_KEY), &[&agent, &session_id])?;
        if let Some(row) = key {
            let key: i64 = row.try_get(0)?;
            for sql in sessions::CLEAR_SESSION {
                self.0.execute(&supersession::postgres(sql), &[&key])?;
            }
        }
        Ok(())
    }

    fn drop_empty_session(&mut self, agent: &str, session_id: &str) -> Result<()> {
        let key = self.0.query_opt(&supersession::postgres(sessions::SESSION_KEY), &[&agent, &session_id])?;
        if let Some(row) = key {
            let key: i64 = row.try_get(0)?;
            self.0.execute(&supersession::postgres(sessions::DROP_EMPTY_SESSION), &[&key])?;
        }
        Ok(())
    }

    fn add_message_words(&mut self, agent: &str, words: &MessageWords) -> Result<()> {
        super::insert::add_message_words(self.0, agent, words)
    }

    fn target(&mut self, agent: &str, id: i64) -> Result<Option<MemoryRecord>> {
        self.0
            .query_opt(&format!("{RECORD_SELECT} WHERE id = $1 AND agent_id = $2"), &[&id, &agent])?
            .as_ref()
            .map(record_from_row)
            .transpose()
    }

    fn sharing(&mut self, agent: &str, except: i64, messages: &[i64]) -> Result<Vec<MemoryRecord>> {
        records(self.0.query(
            &format!(
                "{RECORD_SELECT} WHERE agent_id = $1 AND id <> $2 AND forgotten_at IS NULL
                   AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(records.source_message_ids) m
                               WHERE m::bigint = ANY($3))"
            ),
            &[&agent, &except, &messages],
        )?)
    }

    fn condensing(&mut self, agent: &str, summary_id: &str) -> Result<Vec<MemoryRecord>> {
        // Past the first element: the summaries a condensed summary condenses.
        records(self.0.query(
            &format!(
                "{RECORD_SELECT} WHERE agent_id = $1 AND kind = 'summary' AND forgotten_at IS NULL
                   AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(records.source_summary_ids)
                               WITH ORDINALITY s(value, n) WHERE s.n > 1 AND s.value = $2)"
            ),
            &[&agent, &summary_id],
        )?)
    }

    fn hash_taken(&mut self, agent: &str, hash: &str, except: i64) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM records WHERE agent_id = $1 AND content_hash = $2 AND id <> $3",
                &[&agent, &hash, &except],
            )?
            .is_some())
    }

    fn rewrite(&mut self, id: i64, text: &str, ids: &[i64], dropped: &str) -> Result<()> {
        let tx = &mut *self.0;
        tx.execute(
            "UPDATE records SET text = $2, content_hash = $3, source_message_ids = $4::text::jsonb,
                    embed_status = 'pending', fts = to_tsvector($5::text::regconfig, $6)
             WHERE id = $1",
            &[&id, &text, &content_hash(text), &json(&ids), &TS_CONFIG, &fts_document(text)],
        )?;
        tx.execute("DELETE FROM vectors WHERE record_id = $1", &[&id])?;
        delete_triples(tx, "source_record = $1 AND strpos(lower($2::text), lower(object)) > 0", &[&id, &dropped])
    }

    fn remove(&mut self, id: i64, how: Forget) -> Result<()> {
        let tx = &mut *self.0;
        match how {
            Forget::Soft => {
                tx.execute(
                    "UPDATE records SET forgotten_at = COALESCE(forgotten_at, $2) WHERE id = $1",
                    &[&id, &now_ms()],
                )?;
                tx.execute(&supersession::postgres(supersession::UNDO_RECORDS), &[&id])?;
                tx.execute(&supersession::postgres(supersession::UNDO_TRIPLES), &[&id])?;
            }
            Forget::Purge => {
                delete_triples(tx, "source_record = $1", &[&id])?;
                tx.execute("DELETE FROM vectors WHERE record_id = $1", &[&id])?;
                tx.execute(&supersession::postgres(supersession::UNDO_RECORDS), &[&id])?;
                tx.execute("DELETE FROM records WHERE id = $1", &[&id])?;
            }
        }
        Ok(())
    }

    fn session_records(&mut self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>> {
        let rows = self.0.query(
            "SELECT id FROM records WHERE agent_id = $1 AND source_session_ids ? $2
               AND ($3::text[] IS NULL OR jsonb_array_length(source_summary_ids) = 0
                    OR source_summary_ids ?| $3::text[])
             ORDER BY id",
            &[&agent, &session_id, &summaries],
        )?;
        rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
    }

    fn tombstone(&mut self, agent: &str, sessions: &[String], said: &[String]) -> Result<()> {
        let now = memcc_core::time::now_ms();
        let everywhere = [String::new()];
        let sessions = if sessions.is_empty() { &everywhere[..] } else { sessions };
        // One statement for the lot: a forget may name hundreds of sentences.
        self.0.execute(
            "INSERT INTO tombstones (agent_id, session_id, said, forgotten_at)
             SELECT $1, s, w, $4 FROM unnest($2::text[]) AS s, unnest($3::text[]) AS w
             ON CONFLICT DO NOTHING",
            &[&agent, &sessions, &said, &now],
        )?;
        Ok(())
    }
}

/// Delete the triples `condition` selects ([`crate::store::delete_triples_sql`]).
fn delete_triples(tx: &mut Transaction<'_>, condition: &str, params: &[&(dyn ToSql + Sync)]) -> Result<()> {
    for sql in crate::store::delete_triples_sql(condition) {
        tx.execute(&sql, params)?;
    }
    Ok(())
}

impl Forgetting for PgStore {
    fn forget(&self, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
        self.pool.write(|tx| crate::forget::forget(&mut PgTx(tx), agent, id, how))
    }

    fn purge_session(&self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>> {
        self.pool.write(|tx| crate::forget::purge_session(&mut PgTx(tx), agent, session_id, summaries))
    }
}
