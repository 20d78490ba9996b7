//! Inserting's steps ([`crate::insert::InsertTx`]) as SQL on one SQLite transaction.

use super::*;
use crate::sessions::MessageWords;
use crate::store::{sessions, supersession};

/// One insert: [`crate::insert::insert`] over [`SqliteTx`].
pub(crate) fn insert_in(tx: &Transaction<'_>, item: &Insert<'_>) -> Result<Inserted> {
    crate::insert::insert(&mut SqliteTx(tx), item)
}

/// Inserting's steps as SQL on one SQLite transaction.
impl InsertTx for SqliteTx<'_> {
    fn existing(&mut self, agent: &str, hash: &str) -> Result<Option<i64>> {
        let mut stmt = self.0.prepare_cached("SELECT id FROM records WHERE agent_id = ?1 AND content_hash = ?2")?;
        Ok(stmt.query_row(params![agent, hash], |row| row.get::<_, i64>(0)).optional()?)
    }

    fn add_record(&mut self, r: &NewRecord, hash: &str, now: i64, embedded: bool) -> Result<Option<i64>> {
        let tx = self.0;
        let mut stmt = tx.prepare_cached(
            "INSERT INTO records (agent_id, wing, room, kind, text, content_hash, source_summary_ids,
                                  source_session_ids, source_message_ids, created_at, event_time, valid_from, weight,
                                  pinned, subject, predicate, embed_status, project)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
             ON CONFLICT (agent_id, content_hash) DO NOTHING",
        )?;
        let added = stmt.execute(params![
            r.agent_id,
            r.wing,
            r.room,
            r.kind.as_str(),
            r.text,
            hash,
            json(&r.source_summary_ids),
            json(&r.source_session_ids),
            json(&r.source_message_ids),
            now,
            r.event_time,
            r.weight,
            r.pinned,
            r.subject,
            r.predicate,
            if embedded { "embedded" } else { "pending" },
            r.project,
        ])?;
        if added == 0 {
            return Ok(None);
        }
        let id = tx.last_insert_rowid();
        tx.prepare_cached("INSERT INTO records_fts (rowid, body) VALUES (?1, ?2)")?
            .execute(params![id, fts_document(&r.text)])?;
        Ok(Some(id))
    }

    fn add_vector(&mut self, id: i64, _agent: &str, model: &str, v: &[f32]) -> Result<()> {
        self.0
            .prepare_cached("INSERT INTO vectors (record_id, model, dim, data) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![id, model, v.len() as i64, vector_to_blob(v)])?;
        Ok(())
    }

    fn supersede_records(&mut self, id: i64, agent: &str, subject: &str, predicate: &str, at: i64) -> Result<()> {
        self.0
            .prepare_cached(supersession::RECORDS_OF_STATEMENT)?
            .execute(params![id, at, agent, subject, predicate])?;
        Ok(())
    }

    fn supersede_record(&mut self, old: i64, id: i64, agent: &str, at: i64) -> Result<bool> {
        Ok(self.0.prepare_cached(supersession::RECORD)?.execute(params![old, id, agent, at])? > 0)
    }

    fn add_triple(
        &mut self,
        agent: &str,
        t: &NewTriple,
        valid_from: Option<i64>,
        source: i64,
        now: i64,
    ) -> Result<i64> {
        self.0
            .prepare_cached(
                "INSERT INTO triples (agent_id, subject, predicate, object, valid_from, source_record, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![agent, t.subject, t.predicate, t.object, valid_from, source, now])?;
        Ok(self.0.last_insert_rowid())
    }

    fn supersede_triples(&mut self, id: i64, agent: &str, t: &NewTriple, at: i64) -> Result<()> {
        self.0.prepare_cached(supersession::TRIPLES)?.execute(params![
            id,
            at,
            agent,
            t.subject,
            t.predicate,
            t.object
        ])?;
        Ok(())
    }

    fn add_message_words(&mut self, agent: &str, words: &MessageWords) -> Result<()> {
        add_message_words(self.0, agent, words)
    }
}

/// [`InsertTx::add_message_words`] on SQLite: the session (made on its first message), the
/// message claimed, then its length and terms added.
pub(super) fn add_message_words(tx: &Transaction<'_>, agent: &str, words: &MessageWords) -> Result<()> {
    let session: i64 = tx
        .prepare_cached(sessions::UPSERT_SESSION)?
        .query_row(params![agent, words.session, words.at, words.project], |r| r.get(0))?;
    if tx.prepare_cached(sessions::CLAIM_MESSAGE)?.execute(params![session, words.message])? == 0 {
        return Ok(());
    }
    tx.prepare_cached(sessions::ADD_LENGTH)?.execute(params![session, words.length()])?;
    let mut add = tx.prepare_cached(sessions::ADD_TERM)?;
    for (term, n) in &words.counts {
        add.execute(params![agent, term, session, n])?;
    }
    Ok(())
}
