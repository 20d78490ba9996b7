//! Inserting's steps ([`crate::insert::InsertTx`]) as SQL on one PostgreSQL transaction.

use super::*;
use crate::sessions::MessageWords;
use crate::store::{sessions, supersession};

/// The statements every insert runs, prepared once per transaction (a statement given as text is
/// prepared on each call: a second round trip).
struct InsertStatements {
    record: postgres::Statement,
    vector: postgres::Statement,
}

const INSERT_RECORD: &str = "INSERT INTO records (agent_id, wing, room, kind, text, content_hash, source_summary_ids,
        source_session_ids, source_message_ids, created_at, event_time, valid_from, weight, pinned, subject, predicate,
        embed_status, fts, project)
     VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8::text::jsonb, $9::text::jsonb, $10, $11, $11, $12, $13,
             $14, $15, $16, to_tsvector($17::text::regconfig, $18), $19)
     ON CONFLICT (agent_id, content_hash) DO NOTHING RETURNING id";

/// Inserting's steps as SQL on one PostgreSQL transaction.
struct PgInsert<'a, 'b> {
    tx: &'a mut Transaction<'b>,
    statements: InsertStatements,
}

pub(super) fn insert_all(tx: &mut Transaction<'_>, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
    let statements = InsertStatements {
        record: tx.prepare(INSERT_RECORD)?,
        vector: tx
            .prepare("INSERT INTO vectors (record_id, model, dim, embedding, agent_id) VALUES ($1, $2, $3, $4, $5)")?,
    };
    let mut steps = PgInsert { tx, statements };
    items.iter().map(|item| crate::insert::insert(&mut steps, item)).collect()
}

impl InsertTx for PgInsert<'_, '_> {
    fn existing(&mut self, agent: &str, hash: &str) -> Result<Option<i64>> {
        let row =
            self.tx.query_opt("SELECT id FROM records WHERE agent_id = $1 AND content_hash = $2", &[&agent, &hash])?;
        Ok(row.map(|r| r.try_get(0)).transpose()?)
    }

    fn add_record(&mut self, r: &NewRecord, hash: &str, now: i64, embedded: bool) -> Result<Option<i64>> {
        let status = if embedded { "embedded" } else { "pending" };
        let row = self.tx.query_opt(
            &self.statements.record,
            &[
                &r.agent_id,
                &r.wing,
                &r.room,
                &r.kind.as_str(),
                &r.text,
                &hash,
                &json(&r.source_summary_ids),
                &json(&r.source_session_ids),
                &json(&r.source_message_ids),
                &now,
                &r.event_time,
                &r.weight,
                &r.pinned,
                &r.subject,
                &r.predicate,
                &status,
                &TS_CONFIG,
                &fts_document(&r.text),
                &r.project,
            ],
        )?;
        Ok(row.map(|r| r.try_get(0)).transpose()?)
    }

    fn add_vector(&mut self, id: i64, agent: &str, model: &str, v: &[f32]) -> Result<()> {
        self.tx
            .execute(&self.statements.vector, &[&id, &model, &(v.len() as i32), &Vector::from(v.to_vec()), &agent])?;
        Ok(())
    }

    fn supersede_records(&mut self, id: i64, agent: &str, subject: &str, predicate: &str, at: i64) -> Result<()> {
        self.tx.execute(
            &supersession::postgres(supersession::RECORDS_OF_STATEMENT),
            &[&id, &at, &agent, &subject, &predicate],
        )?;
        Ok(())
    }

    fn supersede_record(&mut self, old: i64, id: i64, agent: &str, at: i64) -> Result<bool> {
        Ok(self.tx.execute(&supersession::postgres(supersession::RECORD), &[&old, &id, &agent, &at])? > 0)
    }

    fn add_triple(
        &mut self,
        agent: &str,
        t: &NewTriple,
        valid_from: Option<i64>,
        source: i64,
        now: i64,
    ) -> Result<i64> {
        Ok(self
            .tx
            .query_one(
                "INSERT INTO triples (agent_id, subject, predicate, object, valid_from, source_record, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                &[&agent, &t.subject, &t.predicate, &t.object, &valid_from, &source, &now],
            )?
            .try_get(0)?)
    }

    fn supersede_triples(&mut self, id: i64, agent: &str, t: &NewTriple, at: i64) -> Result<()> {
        self.tx.execute(
            &supersession::postgres(supersession::TRIPLES),
            &[&id, &at, &agent, &t.subject, &t.predicate, &t.object],
        )?;
        Ok(())
    }

    fn add_message_words(&mut self, agent: &str, words: &MessageWords) -> Result<()> {
        add_message_words(self.tx, agent, words)
    }
}

/// [`InsertTx::add_message_words`] on PostgreSQL: the session (made on its first message), the
/// message claimed, then its length and all its terms in one statement.
pub(super) fn add_message_words(tx: &mut Transaction<'_>, agent: &str, words: &MessageWords) -> Result<()> {
    let session: i64 = tx
        .query_one(
            &supersession::postgres(sessions::UPSERT_SESSION),
            &[&agent, &words.session, &words.at, &words.project],
        )?
        .try_get(0)?;
    if tx.execute(&supersession::postgres(sessions::CLAIM_MESSAGE), &[&session, &words.message])? == 0 {
        return Ok(());
    }
    tx.execute(&supersession::postgres(sessions::ADD_LENGTH), &[&session, &i64::from(words.length())])?;
    let (terms, counts): (Vec<&str>, Vec<i64>) = words.counts.iter().map(|(t, n)| (t.as_str(), i64::from(*n))).unzip();
    tx.execute(
        "INSERT INTO session_terms (agent_id, term, session, tf)
         SELECT $1, t, $3, n FROM unnest($2::text[], $4::bigint[]) AS u(t, n)
         ON CONFLICT (agent_id, term, session) DO UPDATE SET tf = session_terms.tf + excluded.tf",
        &[&agent, &terms, &session, &counts],
    )?;
    Ok(())
}
