//! How MemCC opens its SQLite files and migrates their schemas, in one place for both stores.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot create data directory {path}: {source}")]
    DataDir { path: String, source: std::io::Error },
    #[error("database schema v{found} is newer than this MemCC supports (v{supported}); upgrade MemCC")]
    NewerSchema { found: i64, supported: i64 },
}

/// Open (creating directories and the file as needed) a database for writing: WAL, so a crashed
/// process never leaves a half-applied transaction and readers never block the writer.
pub fn open_writer(path: &Path) -> Result<Connection, SqliteError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|source| SqliteError::DataDir { path: dir.display().to_string(), source })?;
    }
    let conn = Connection::open(path)?;
    configure(&conn)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// Per-connection settings every MemCC connection uses.
pub fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "foreign_keys", "ON")
}

/// Apply `migrations[user_version..]`, one transaction each; a newer file is refused untouched.
pub fn migrate(conn: &mut Connection, migrations: &[&str]) -> Result<(), SqliteError> {
    let supported = migrations.len() as i64;
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > supported {
        return Err(SqliteError::NewerSchema { found: current, supported });
    }
    for (i, sql) in migrations.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
