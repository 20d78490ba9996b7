//! The statements that mark what a new statement replaced, and that undo it when the new one
//! is forgotten or purged — written once for both backends, in SQLite's `?N` parameters
//! ([`postgres`] numbers them PostgreSQL's way). Which insert supersedes what is decided above
//! the backends (`ingest`); these only record it.

/// Records of the agent stating the same subject and predicate, not newer than the new one:
/// `?1` the new record, `?2` when, `?3` the agent, `?4` the subject, `?5` the predicate.
pub(crate) const RECORDS_OF_STATEMENT: &str = "UPDATE records SET superseded_by = ?1, valid_until = ?2
     WHERE agent_id = ?3 AND lower(subject) = lower(?4) AND predicate = ?5 AND id <> ?1
       AND superseded_by IS NULL AND COALESCE(event_time, 0) <= ?2";

/// One record replaced by another (an edit): `?1` the old, `?2` the new, `?3` the agent, `?4` when.
/// Only a record that holds (or that the new one's statement replaced in the same transaction).
pub(crate) const RECORD: &str = "UPDATE records SET superseded_by = ?2, valid_until = ?4
     WHERE id = ?1 AND agent_id = ?3 AND id <> ?2 AND forgotten_at IS NULL
       AND (superseded_by IS NULL OR superseded_by = ?2)";

/// The agent's current triples with the new one's subject and predicate and another object:
/// `?1` the new triple, `?2` when, `?3` the agent, `?4` subject, `?5` predicate, `?6` object.
pub(crate) const TRIPLES: &str = "UPDATE triples SET superseded_by = ?1, valid_until = ?2
     WHERE agent_id = ?3 AND lower(subject) = lower(?4) AND predicate = ?5 AND lower(object) <> lower(?6)
       AND id <> ?1 AND superseded_by IS NULL";

/// What record `?1` replaced holds again (it is forgotten or purged): a forgotten "I live in
/// Lisbon now" leaves Boston current, not superseded by something nobody may read.
pub(crate) const UNDO_RECORDS: &str =
    "UPDATE records SET superseded_by = NULL, valid_until = NULL WHERE superseded_by = ?1";

/// What the triples of record `?1` replaced holds again.
pub(crate) const UNDO_TRIPLES: &str = "UPDATE triples SET superseded_by = NULL, valid_until = NULL
      WHERE superseded_by IN (SELECT id FROM triples WHERE source_record = ?1)";

/// `sql` with PostgreSQL's `$N` for SQLite's `?N`.
pub(crate) fn postgres(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_numbers_the_same_parameters() {
        assert_eq!(
            postgres(UNDO_RECORDS),
            "UPDATE records SET superseded_by = NULL, valid_until = NULL WHERE superseded_by = $1"
        );
        assert_eq!(postgres("a = '?' AND b = ?12"), "a = '?' AND b = $12");
        for sql in [RECORDS_OF_STATEMENT, RECORD, TRIPLES, UNDO_RECORDS, UNDO_TRIPLES] {
            assert!(!postgres(sql).contains('?'), "{sql}");
        }
    }
}
