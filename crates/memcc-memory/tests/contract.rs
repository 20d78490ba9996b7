//! The memory store's contract, one suite on every backend: `contract/cases.rs` is compiled once
//! per backend below, each case opening the runtime on that backend — a SQLite file in a temp
//! dir, or a database of its own on the PostgreSQL server `$MEMCC_TEST_PG_URL` names (SKIP
//! without one; a failure under `CI=true`, where `scripts/test.sh` starts one).

use memcc_memory::{MemoryConfig, StoreBackend};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// `config` pointed at `backend`'s store for `dir` (the same store whenever `dir` is the same).
pub fn configure(backend: Backend, dir: &tempfile::TempDir, config: MemoryConfig) -> Option<MemoryConfig> {
    match backend {
        Backend::Sqlite => Some(config),
        Backend::Postgres => {
            let url = memcc_testkit::postgres_database(&dir.path().to_string_lossy())?;
            Some(MemoryConfig { backend: StoreBackend::Postgres, postgres_url: Some(url), ..config })
        }
    }
}

mod sqlite {
    const BACKEND: super::Backend = super::Backend::Sqlite;
    include!("contract/cases.rs");
}

mod postgres {
    const BACKEND: super::Backend = super::Backend::Postgres;
    include!("contract/cases.rs");
}
