//! How MemCC opens its SQLite files and migrates their schemas, in one place for both stores.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, MAIN_DB, OpenFlags, OptionalExtension, params};

use crate::text::{FTS_DOCUMENT_VERSION, fts_document};

#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    #[error("{}", describe(.0))]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot create data directory {path}: {source}")]
    DataDir { path: String, source: std::io::Error },
    #[error("database schema v{found} is newer than this MemCC supports (v{supported}); upgrade MemCC")]
    NewerSchema { found: i64, supported: i64 },
    #[error("schema migration to v{version} refused, nothing changed: {reason}")]
    Migration { version: i64, reason: String },
}

/// Open (creating directories and the file as needed) a database for writing: WAL, so a crashed
/// process never leaves a half-applied transaction and readers never block the writer. A file
/// this user may not write (another user's data, a mounted backup) opens for reading instead
/// ([`open_reader`]): reads work, and a write fails with the error [`describe`] words.
pub fn open_writer(path: &Path) -> Result<Connection, SqliteError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        private_dir(dir).map_err(|source| SqliteError::DataDir { path: dir.display().to_string(), source })?;
    }
    // A new file is this user's alone (SQLite gives its -wal and -shm the file's mode): it holds
    // every conversation and memory.
    if !path.exists() {
        private_file(path).map_err(|source| SqliteError::DataDir { path: path.display().to_string(), source })?;
    }
    let conn = Connection::open(path)?;
    if conn.is_readonly(MAIN_DB)? {
        drop(conn);
        return open_reader(path);
    }
    configure(&conn)?;
    retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// Create `dir` (and its parents) as a directory only this user may enter (`0700` on Unix; the
/// parents MemCC did not ask for get the same).
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Create an empty file only this user may read or write (`0600` on Unix), unless it exists.
fn private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// What a user should hear of `dir`'s permissions: other users may read it (a data directory
/// made before MemCC made them private, or by hand), and how to close it; `None` when only its
/// owner may.
pub fn wider_than_private(dir: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).ok()?.permissions().mode() & 0o777;
        (mode & 0o077 != 0).then(|| {
            format!(
                "{} is open to other users of this machine (mode {mode:o}), who can read every conversation and \
                 memory in it: `chmod 700 {}` closes it",
                dir.display(),
                dir.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Open an existing database for reading only. A WAL file read where its `-shm` index cannot
/// be made (a directory this user may not write) opens as immutable: SQLite then reads the
/// file as it lies, which is what a backup or another user's idle data is.
pub fn open_reader(path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)?;
    configure(&conn)?;
    // Opening reads nothing yet: the schema read is where a missing index shows.
    let probe = |c: &Connection| c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0));
    if probe(&conn).is_ok() {
        return Ok(conn);
    }
    drop(conn);
    let conn = Connection::open_with_flags(format!("{}?immutable=1", file_uri(path)), flags)?;
    configure(&conn)?;
    probe(&conn)?;
    Ok(conn)
}

/// `path` as an SQLite `file:` URI (the characters a URI gives meaning to, escaped).
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", c as u32)),
            c => uri.push(c),
        }
    }
    uri
}

/// Whether `conn` was opened for reading only (its file is not writable by this user).
pub fn is_read_only(conn: &Connection) -> bool {
    conn.is_readonly(MAIN_DB).unwrap_or(false)
}

/// An SQLite error as a user should read it: a write refused because the data was opened for
/// reading says so, rather than SQLite's "attempt to write a readonly database".
pub fn describe(e: &rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ReadOnly) => format!(
            "the data directory is read-only for this user, so MemCC opened it for reading and refuses \
             to write ({e}); run as the files' owner to change it"
        ),
        _ => format!("sqlite: {e}"),
    }
}

/// Retry `f` while SQLite answers "busy" without waiting: processes creating one new file at
/// once can meet in a lock upgrade (still in rollback-journal mode, before WAL is on) where
/// SQLite refuses rather than deadlocks, and no busy timeout applies.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let mut attempt = 0u64;
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    && attempt < 100 =>
            {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(10 + 10 * (attempt % 10)));
            }
            other => return other,
        }
    }
}

/// Per-connection settings every MemCC connection uses.
pub fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "foreign_keys", "ON")
}

/// Apply `migrations[user_version..]`, one transaction each; a newer file is refused untouched.
/// Each step reads the version inside its own IMMEDIATE transaction, so processes opening a new
/// file at once apply every migration exactly once (the others wait, then find it done).
///
/// Foreign keys are off while the steps run and checked before each commits, as SQLite's way to
/// change a table's constraints asks: a step may rebuild a table others refer to (create the new
/// one, copy, drop the old, rename), which a check row by row would refuse halfway.
pub fn migrate(conn: &mut Connection, migrations: &[&str]) -> Result<(), SqliteError> {
    let supported = migrations.len() as i64;
    // The common case, a file already current, is a read: no write lock, and a file opened for
    // reading only is served.
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current == supported {
        return Ok(());
    }
    // (The pragma is a no-op inside a transaction, so it is set before any begins.)
    let enforced: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    let applied = apply(conn, migrations);
    if enforced {
        conn.pragma_update(None, "foreign_keys", "ON")?;
    }
    applied
}

fn apply(conn: &mut Connection, migrations: &[&str]) -> Result<(), SqliteError> {
    let supported = migrations.len() as i64;
    loop {
        retry_busy(|| conn.execute_batch("BEGIN IMMEDIATE"))?;
        let step = || -> Result<bool, SqliteError> {
            let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if current > supported {
                return Err(SqliteError::NewerSchema { found: current, supported });
            }
            let Some(sql) = migrations.get(current as usize) else { return Ok(true) };
            // What the step leaves dangling is its fault; what dangled before it (a file an old
            // build wrote) is not, and must not make the file unopenable.
            let before = dangling(conn)?;
            conn.execute_batch(sql)?;
            let after = dangling(conn)?;
            if after > before {
                return Err(SqliteError::Migration {
                    version: current + 1,
                    reason: format!("{} rows would refer to rows that no longer exist", after - before),
                });
            }
            conn.pragma_update(None, "user_version", current + 1)?;
            Ok(false)
        };
        match step() {
            Ok(done) => {
                conn.execute_batch("COMMIT")?;
                if done {
                    return Ok(());
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
}

/// How many rows refer to a row that does not exist (`PRAGMA foreign_key_check`).
fn dangling(conn: &Connection) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare("PRAGMA foreign_key_check")?;
    let mut rows = stmt.query([])?;
    let mut n = 0;
    while rows.next()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// A full-text table and what it indexes: `rows` selects `(rowid, text)`, each row stored as
/// [`fts_document`] of its text.
pub struct FullTextTable<'a> {
    pub table: &'a str,
    pub rows: &'a str,
}

/// Rebuild `tables` when the file's `meta.fts_document` is not [`FTS_DOCUMENT_VERSION`] (a file
/// from before the version was kept counts as older), in one IMMEDIATE transaction: a reader
/// sees the old index or the new one, and a second process opening at once finds it done.
/// Searches, and deletions from a contentless table (which name the text that was indexed),
/// rely on every entry being today's document of its row. Returns how many rows it indexed.
pub fn refresh_full_text(conn: &mut Connection, tables: &[FullTextTable<'_>]) -> Result<usize, SqliteError> {
    let current = FTS_DOCUMENT_VERSION.to_string();
    let is_current = |conn: &Connection| -> Result<bool, SqliteError> {
        let written: Option<String> =
            conn.query_row("SELECT value FROM meta WHERE key = 'fts_document'", [], |r| r.get(0)).optional()?;
        Ok(written.as_deref() == Some(current.as_str()))
    };
    // The common case, an index already current, is a read: no write lock on every open.
    if is_current(conn)? {
        return Ok(0);
    }
    if is_read_only(conn) {
        tracing::warn!("the full-text index is of an older version and the file is read-only: searches may miss words");
        return Ok(0);
    }
    retry_busy(|| conn.execute_batch("BEGIN IMMEDIATE"))?;
    let outcome = (|| -> Result<usize, SqliteError> {
        // Another process may have rebuilt it while this one waited for the lock.
        if is_current(conn)? {
            return Ok(0);
        }
        let mut indexed = 0;
        for t in tables {
            conn.execute(&format!("INSERT INTO {0} ({0}) VALUES ('delete-all')", t.table), [])?;
            let mut select = conn.prepare(t.rows)?;
            let mut insert = conn.prepare(&format!("INSERT INTO {} (rowid, body) VALUES (?1, ?2)", t.table))?;
            let mut rows = select.query([])?;
            while let Some(row) = rows.next()? {
                let (id, text): (i64, String) = (row.get(0)?, row.get(1)?);
                insert.execute(params![id, fts_document(&text)])?;
                indexed += 1;
            }
        }
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_document', ?1)", [&current])?;
        Ok(indexed)
    })();
    match outcome {
        Ok(indexed) => {
            conn.execute_batch("COMMIT")?;
            if indexed > 0 {
                tracing::info!(rows = indexed, version = FTS_DOCUMENT_VERSION, "full-text index rebuilt");
            }
            Ok(indexed)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT_AND_CHILD: &str = "CREATE TABLE parent (id INTEGER PRIMARY KEY);
         CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id));
         INSERT INTO parent VALUES (1); INSERT INTO child VALUES (10, 1);";

    fn version(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
    }

    /// A step may rebuild a table others refer to; one that leaves a reference dangling is
    /// refused whole, and the file stays at the version before it.
    #[test]
    fn a_step_that_leaves_a_reference_dangling_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open_writer(&dir.path().join("t.db")).unwrap();
        let rebuild = "CREATE TABLE parent_new (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO parent_new (id) SELECT id FROM parent;
             DROP TABLE parent; ALTER TABLE parent_new RENAME TO parent;";
        migrate(&mut conn, &[PARENT_AND_CHILD, rebuild]).unwrap();
        assert_eq!(version(&conn), 2);
        let child: i64 = conn.query_row("SELECT parent FROM child", [], |r| r.get(0)).unwrap();
        assert_eq!(child, 1, "the rebuild kept the row the child refers to");

        let loses_the_parent = "DELETE FROM parent;";
        let err = migrate(&mut conn, &[PARENT_AND_CHILD, rebuild, loses_the_parent]).unwrap_err();
        assert!(err.to_string().contains("refused, nothing changed"), "{err}");
        assert_eq!(version(&conn), 2);
        let parents: i64 = conn.query_row("SELECT COUNT(*) FROM parent", [], |r| r.get(0)).unwrap();
        assert_eq!(parents, 1, "rolled back");
        let enforced: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
        assert!(enforced, "foreign keys are on again");
    }

    /// A reference that dangled before a step (a file an old build wrote) is not the step's
    /// doing: the migration goes on.
    #[test]
    fn references_that_dangled_before_do_not_block_a_step() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open_writer(&dir.path().join("t.db")).unwrap();
        migrate(&mut conn, &[PARENT_AND_CHILD]).unwrap();
        conn.pragma_update(None, "foreign_keys", "OFF").unwrap();
        conn.execute("INSERT INTO child VALUES (11, 99)", []).unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        migrate(&mut conn, &[PARENT_AND_CHILD, "CREATE TABLE other (id INTEGER PRIMARY KEY);"]).unwrap();
        assert_eq!(version(&conn), 2);
    }
}
