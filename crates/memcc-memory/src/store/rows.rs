//! What a stored record's and triple's columns mean, written once for both backends: each
//! backend selects the columns in the order below (its `RECORD_SELECT` / `TRIPLE_SELECT`) and
//! reads them through [`Columns`].

use crate::record::{MemoryRecord, RecordKind, Triple};

/// `SELECT` of the record columns [`record_from`] reads, in its order, `FROM records`. `$ids`
/// follows each id-list column: "" where they are JSON text (SQLite), "::text" where they are
/// `jsonb` (PostgreSQL).
macro_rules! record_select {
    ($ids:literal) => {
        concat!(
            "SELECT id, agent_id, wing, room, kind, text, source_summary_ids",
            $ids,
            ", source_session_ids",
            $ids,
            ", source_message_ids",
            $ids,
            ", created_at, event_time, valid_from, valid_until, superseded_by, weight, pinned, forgotten_at, subject, \
             predicate, embed_status, project FROM records"
        )
    };
}
pub(crate) use record_select;

/// A record that still holds — not forgotten, not replaced by a later statement, not ended — as
/// SQL over `records` (unaliased), the same on both backends. (A forgotten record is left out of
/// every read; a superseded one is still found by search, marked, and only this says "current".)
pub(crate) const CURRENT_RECORD: &str = "forgotten_at IS NULL AND superseded_by IS NULL AND valid_until IS NULL";

/// A triple whose record was not forgotten, as SQL over `triples` (unaliased), the same on both
/// backends: forgetting a record hides what was read from it on every read of triples.
pub(crate) const TRIPLE_NOT_FORGOTTEN: &str =
    "NOT EXISTS (SELECT 1 FROM records r WHERE r.id = triples.source_record AND r.forgotten_at IS NOT NULL)";

/// `SELECT` of the triple columns [`triple_from`] reads, in its order, `FROM triples`.
pub(crate) const TRIPLE_SELECT: &str = "SELECT id, agent_id, subject, predicate, object, valid_from, valid_until, superseded_by, source_record FROM triples";

/// One result row's columns by position, as a backend's driver returns them.
pub(crate) trait Columns {
    type Error;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn real(&self, i: usize) -> Result<f64, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
}

/// A record from the columns `id, agent_id, wing, room, kind, text, source_summary_ids,
/// source_session_ids, source_message_ids, created_at, event_time, valid_from, valid_until,
/// superseded_by, weight, pinned, forgotten_at, subject, predicate, embed_status, project` (id
/// lists as JSON text).
///
/// A row is read rather than refused when a kind is unknown (a newer MemCC's; read as a fact)
/// or an id list does not parse (read as empty): refusing it would fail every search that meets
/// the row, and what it holds — its text — is still read.
pub(crate) fn record_from<C: Columns>(c: &C) -> Result<MemoryRecord, C::Error> {
    Ok(MemoryRecord {
        id: c.int(0)?,
        agent_id: c.text(1)?,
        wing: c.text(2)?,
        room: c.text(3)?,
        kind: RecordKind::parse(&c.text(4)?).unwrap_or(RecordKind::Fact),
        text: c.text(5)?,
        source_summary_ids: serde_json::from_str(&c.text(6)?).unwrap_or_default(),
        source_session_ids: serde_json::from_str(&c.text(7)?).unwrap_or_default(),
        source_message_ids: serde_json::from_str(&c.text(8)?).unwrap_or_default(),
        created_at: c.int(9)?,
        event_time: c.opt_int(10)?,
        valid_from: c.opt_int(11)?,
        valid_until: c.opt_int(12)?,
        superseded_by: c.opt_int(13)?,
        weight: c.real(14)?,
        pinned: c.flag(15)?,
        forgotten: c.opt_int(16)?.is_some(),
        subject: c.opt_text(17)?,
        predicate: c.opt_text(18)?,
        embedded: c.text(19)? == "embedded",
        project: c.opt_text(20)?,
    })
}

/// A triple from the columns `id, agent_id, subject, predicate, object, valid_from,
/// valid_until, superseded_by, source_record`.
pub(crate) fn triple_from<C: Columns>(c: &C) -> Result<Triple, C::Error> {
    Ok(Triple {
        id: c.int(0)?,
        agent_id: c.text(1)?,
        subject: c.text(2)?,
        predicate: c.text(3)?,
        object: c.text(4)?,
        valid_from: c.opt_int(5)?,
        valid_until: c.opt_int(6)?,
        superseded_by: c.opt_int(7)?,
        source_record: c.opt_int(8)?,
    })
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn opt_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.get(i)
    }
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn real(&self, i: usize) -> rusqlite::Result<f64> {
        self.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.get(i)
    }
}

#[cfg(feature = "postgres")]
impl Columns for postgres::Row {
    type Error = postgres::Error;
    fn int(&self, i: usize) -> Result<i64, postgres::Error> {
        self.try_get(i)
    }
    fn opt_int(&self, i: usize) -> Result<Option<i64>, postgres::Error> {
        self.try_get(i)
    }
    fn text(&self, i: usize) -> Result<String, postgres::Error> {
        self.try_get(i)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>, postgres::Error> {
        self.try_get(i)
    }
    fn real(&self, i: usize) -> Result<f64, postgres::Error> {
        self.try_get(i)
    }
    fn flag(&self, i: usize) -> Result<bool, postgres::Error> {
        self.try_get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(kind: &str, messages: &str) -> MemoryRecord {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.query_row(
            "SELECT 7, 'main', 'w', 'r', ?1, 'text', '[\"s1\"]', '[]', ?2, 100, NULL, 50, NULL, NULL, 0.5, 1, NULL, \
             'Lina', 'lives_in', 'embedded', '/home/ada/shop'",
            [kind, messages],
            |row| record_from(row),
        )
        .unwrap()
    }

    #[test]
    fn a_row_reads_into_the_record_its_columns_name() {
        let r = read("preference", "[3, 4]");
        assert_eq!((r.id, r.agent_id.as_str(), r.kind, r.text.as_str()), (7, "main", RecordKind::Preference, "text"));
        assert_eq!((r.source_summary_ids, r.source_message_ids), (vec!["s1".to_string()], vec![3, 4]));
        assert_eq!((r.created_at, r.event_time, r.valid_from), (100, None, Some(50)));
        assert!(r.pinned && !r.forgotten && r.embedded && r.weight == 0.5);
        assert_eq!((r.subject.as_deref(), r.predicate.as_deref()), (Some("Lina"), Some("lives_in")));
        assert_eq!(r.project.as_deref(), Some("/home/ada/shop"));
    }

    #[test]
    fn an_unknown_kind_or_a_broken_id_list_is_read_not_refused() {
        let r = read("thread", "not json");
        assert_eq!((r.kind, r.source_message_ids, r.text.as_str()), (RecordKind::Fact, vec![], "text"));
    }
}
