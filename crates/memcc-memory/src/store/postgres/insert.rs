//! Inserting's steps ([`crate::insert::InsertTx`]) as SQL on one PostgreSQL transaction.

use super::*;
use crate::sessions::MessageWords;
use crate::store::{sessions, supersession};
use std::collections::BTreeMap;

/// The statements every insert runs, prepared once per transaction (a statement given as text is
/// prepared on each call: a second round trip).
struct InsertStatements {
    record: postgres::Statement,
}

const INSERT_RECORD: &str = "INSERT INTO records (agent_id, wing, room, kind, text, content_hash, source_summary_ids,
        source_session_ids, source_message_ids, created_at, event_time, valid_from, weight, pinned, subject, predicate,
        embed_status, fts, project)
     VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8::text::jsonb, $9::text::jsonb, $10, $11, $11, $12, $13,
             $14, $15, $16, to_tsvector($17::text::regconfig, $18), $19)
     ON CONFLICT (agent_id, content_hash) DO NOTHING RETURNING id";

/// Inserting's steps as SQL on one PostgreSQL transaction. A record's row is written at once
/// (what follows needs its id); its vector and its session words, which nothing later in the
/// transaction reads, wait and go in a few set-based statements at the end: a round trip per
/// kind of row per batch instead of five or six per record.
struct PgInsert<'a, 'b> {
    tx: &'a mut Transaction<'b>,
    statements: InsertStatements,
    vectors: PendingVectors,
    words: Vec<(String, MessageWords)>,
}

/// Vectors waiting for the end of the batch, column by column as `unnest` takes them.
#[derive(Default)]
struct PendingVectors {
    ids: Vec<i64>,
    models: Vec<String>,
    dims: Vec<i32>,
    vectors: Vec<Vector>,
    agents: Vec<String>,
}

pub(super) fn insert_all(tx: &mut Transaction<'_>, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
    let statements = InsertStatements { record: tx.prepare(INSERT_RECORD)? };
    let mut steps = PgInsert { tx, statements, vectors: PendingVectors::default(), words: Vec::new() };
    let inserted = items.iter().map(|item| crate::insert::insert(&mut steps, item)).collect::<Result<Vec<_>>>()?;
    let PgInsert { tx, vectors, words, .. } = steps;
    add_vectors(tx, &vectors)?;
    add_words(tx, &words)?;
    Ok(inserted)
}

fn add_vectors(tx: &mut Transaction<'_>, v: &PendingVectors) -> Result<()> {
    if v.ids.is_empty() {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO vectors (record_id, model, dim, embedding, agent_id)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::int4[], $4::vector[], $5::text[])",
        &[&v.ids, &v.models, &v.dims, &v.vectors, &v.agents],
    )?;
    Ok(())
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
        let pending = &mut self.vectors;
        pending.ids.push(id);
        pending.models.push(model.to_owned());
        pending.dims.push(i32::try_from(v.len()).map_err(|_| MemoryError::Input("a vector too long to store".into()))?);
        pending.vectors.push(Vector::from(v.to_vec()));
        pending.agents.push(agent.to_owned());
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
        self.words.push((agent.to_owned(), words.clone()));
        Ok(())
    }
}

/// A session as the messages of one batch make and widen it ([`sessions::UPSERT_SESSION`] per
/// message, folded).
struct SessionSpan<'a> {
    agent: &'a str,
    session: &'a str,
    first: Option<i64>,
    last: Option<i64>,
    project: Option<&'a str>,
}

impl<'a> SessionSpan<'a> {
    fn widen(&mut self, w: &'a MessageWords) {
        self.first = match (self.first, w.at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = match (self.last, w.at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.project = self.project.or(w.project.as_deref());
    }
}

/// [`InsertTx::add_message_words`] on PostgreSQL, for one message.
pub(super) fn add_message_words(tx: &mut Transaction<'_>, agent: &str, words: &MessageWords) -> Result<()> {
    add_words(tx, &[(agent.to_owned(), words.clone())])
}

/// Many messages' words counted in the session index in four statements, as the same messages
/// one by one would count them: each session made on its first message and widened to span
/// them all, each message counted once (the first time it is seen, here or before), then the
/// lengths and terms of the messages claimed.
pub(super) fn add_words(tx: &mut Transaction<'_>, words: &[(String, MessageWords)]) -> Result<()> {
    if words.is_empty() {
        return Ok(());
    }
    // Each session once, with the span and first project of its messages here.
    let mut sessions: Vec<SessionSpan<'_>> = Vec::new();
    let mut place: HashMap<(&str, &str), usize> = HashMap::new();
    for (agent, w) in words {
        match place.get(&(agent.as_str(), w.session.as_str())) {
            Some(&i) => sessions[i].widen(w),
            None => {
                place.insert((agent, &w.session), sessions.len());
                sessions.push(SessionSpan {
                    agent,
                    session: &w.session,
                    first: w.at,
                    last: w.at,
                    project: w.project.as_deref(),
                });
            }
        }
    }
    // A fixed order, so concurrent writers lock the same rows in the same order.
    let mut order: Vec<&SessionSpan<'_>> = sessions.iter().collect();
    order.sort_unstable_by(|a, b| (a.agent, a.session).cmp(&(b.agent, b.session)));
    let agents: Vec<&str> = order.iter().map(|s| s.agent).collect();
    let names: Vec<&str> = order.iter().map(|s| s.session).collect();
    let firsts: Vec<Option<i64>> = order.iter().map(|s| s.first).collect();
    let lasts: Vec<Option<i64>> = order.iter().map(|s| s.last).collect();
    let projects: Vec<Option<&str>> = order.iter().map(|s| s.project).collect();
    // Each session's key, by its place among `sessions` (no name copied per message).
    let mut keys: Vec<Option<i64>> = vec![None; sessions.len()];
    for row in tx.query(sessions::UPSERT_SESSIONS_PG, &[&agents, &names, &firsts, &lasts, &projects])? {
        let (agent, session): (&str, &str) = (row.try_get(1)?, row.try_get(2)?);
        if let Some(&i) = place.get(&(agent, session)) {
            keys[i] = Some(row.try_get(0)?);
        }
    }
    // Each (session, message) once, as first seen here.
    let mut seen: HashMap<(i64, i64), usize> = HashMap::new();
    for (i, (agent, w)) in words.iter().enumerate() {
        let key = place
            .get(&(agent.as_str(), w.session.as_str()))
            .and_then(|&s| keys[s])
            .ok_or_else(|| MemoryError::Input(format!("session {} of {agent} was not stored; retry", w.session)))?;
        seen.entry((key, w.message)).or_insert(i);
    }
    let mut claims: Vec<(i64, i64)> = seen.keys().copied().collect();
    claims.sort_unstable();
    let (claim_sessions, claim_messages): (Vec<i64>, Vec<i64>) = claims.into_iter().unzip();
    let claimed = tx.query(
        "INSERT INTO session_messages (session, message) SELECT * FROM unnest($1::bigint[], $2::bigint[])
         ON CONFLICT DO NOTHING RETURNING session, message",
        &[&claim_sessions, &claim_messages],
    )?;
    // Ordered maps: the rows go in key order, so concurrent writers lock them in the same order.
    let mut grown: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    let mut terms: BTreeMap<(&str, &str, i64), i64> = BTreeMap::new();
    for row in claimed {
        let at: (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        let Some(&i) = seen.get(&at) else { continue };
        let (agent, w) = &words[i];
        let g = grown.entry(at.0).or_default();
        g.0 += i64::from(w.length());
        g.1 += 1;
        for (term, n) in &w.counts {
            *terms.entry((agent, term, at.0)).or_default() += i64::from(*n);
        }
    }
    if grown.is_empty() {
        return Ok(());
    }
    let (ids, growth): (Vec<i64>, Vec<(i64, i64)>) = grown.into_iter().unzip();
    let (lengths, messages): (Vec<i64>, Vec<i64>) = growth.into_iter().unzip();
    tx.execute(
        "UPDATE sessions s SET length = s.length + u.n, messages = s.messages + u.m
         FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(id, n, m) WHERE s.id = u.id",
        &[&ids, &lengths, &messages],
    )?;
    let term_agents: Vec<&str> = terms.keys().map(|k| k.0).collect();
    let term_words: Vec<&str> = terms.keys().map(|k| k.1).collect();
    let term_sessions: Vec<i64> = terms.keys().map(|k| k.2).collect();
    let tfs: Vec<i64> = terms.into_values().collect();
    tx.execute(
        "INSERT INTO session_terms (agent_id, term, session, tf)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
         ON CONFLICT (agent_id, term, session) DO UPDATE SET tf = session_terms.tf + excluded.tf",
        &[&term_agents, &term_words, &term_sessions, &tfs],
    )?;
    Ok(())
}
