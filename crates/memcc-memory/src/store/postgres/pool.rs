//! The PostgreSQL store's connections: a few, each (re)opened on demand, TLS as the URL's
//! `sslmode` says; an operation whose connection fails runs again, whole, on a new one.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls, Transaction};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{MemoryError, Result};

/// Connections kept open: the retrieval layers run side by side.
pub(super) const CONNECTIONS: usize = 4;
/// Tries of one operation when its connection fails.
const ATTEMPTS: u32 = 5;
/// After the server could not be reached, calls fail at once for this long (doubling while it
/// stays away, up to [`BREAKER_MAX`]); then one call tries it again.
const BREAKER_FIRST: Duration = Duration::from_secs(1);
const BREAKER_MAX: Duration = Duration::from_secs(60);
/// How long a connection's handshake may take when the URL sets no `connect_timeout` (which
/// then bounds the whole handshake, not only the TCP connect: a server that accepts and never
/// answers must not hang a turn).
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The server-side limits every connection sets unless the URL's `options` set their own: a
/// statement (`statement_timeout`) and a wait for a lock another session holds (`lock_timeout`).
/// A call that hits one fails with `memory_unavailable` and counts for the breaker.
const STATEMENT_TIMEOUT: &str = "30s";
const LOCK_TIMEOUT: &str = "5s";
/// How many candidates pgvector's HNSW search keeps: at 100 its nearest ten held 0.95 of an
/// exact search's at 10k records (`memcc bench backends`), at 200 0.99, for no measurable
/// time in a retrieve.
const HNSW_EF_SEARCH: u32 = 200;

/// The circuit breaker in front of the server: a PostgreSQL that is down must not stall every
/// turn for the five tries of every memory call (8.5 s each); while it is open, calls answer
/// `memory_unavailable` at once and the context side goes on, summaries waiting in its outbox.
#[derive(Debug, Default)]
pub(super) struct Breaker {
    /// Calls fail at once until then.
    open_until: Option<Instant>,
    /// How long it opens next time.
    wait: Duration,
    /// Why it opened.
    error: String,
}

/// A few connections, each (re)opened on demand.
pub(super) struct Pool {
    pub(super) config: postgres::Config,
    /// TLS unless the URL says `sslmode=disable`.
    pub(super) tls: Option<MakeRustlsConnect>,
    pub(super) slots: Vec<Mutex<Option<Client>>>,
    pub(super) breaker: Mutex<Breaker>,
    /// What the store is, for messages: "the PostgreSQL memory store (host:port/db)".
    pub(super) place: String,
}

/// The TLS connector: the server's certificate must chain to a public (Mozilla) root or to a CA
/// of `ca_file`, and name the host.
pub(super) fn tls_connector(ca_file: Option<&std::path::Path>) -> Result<MakeRustlsConnect> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = ca_file {
        let bad =
            |e: &dyn std::fmt::Display| MemoryError::Config(format!("memory.postgresCaFile {}: {e}", path.display()));
        let mut added = 0;
        for cert in rustls_pki_types::CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
            roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            added += 1;
        }
        if added == 0 {
            return Err(bad(&"no certificate in the file"));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| MemoryError::Config(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Whether `e` is one of the limits every connection sets ([`STATEMENT_TIMEOUT`],
/// [`LOCK_TIMEOUT`]): the server is too slow or busy to answer now. Not tried again at once (it
/// would wait as long again), but counted by the breaker.
pub(super) fn timed_out(e: &postgres::Error) -> bool {
    e.code().is_some_and(|c| matches!(c.code(), "57014" | "55P03"))
}

/// Whether `e` means the connection (not the statement) failed, or the server asks to try again.
pub(super) fn transient(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let c = code.code();
            // connection exceptions, operator intervention (a terminated backend, shutdown),
            // serialization failures and deadlocks
            c.starts_with("08") || c.starts_with("57P") || c == "40001" || c == "40P01"
        }
        None => std::error::Error::source(e).is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some()),
    }
}

/// A connection with MemCC's session settings.
fn open_connection(
    config: &postgres::Config,
    tls: Option<MakeRustlsConnect>,
) -> std::result::Result<Client, postgres::Error> {
    let mut client = match tls {
        Some(tls) => config.connect(tls)?,
        None => config.connect(NoTls)?,
    };
    // Filtered vector queries keep scanning the HNSW graph until they have their k rows.
    let mut settings = format!("SET hnsw.ef_search = {HNSW_EF_SEARCH}; SET hnsw.iterative_scan = relaxed_order;");
    let options = config.get_options().unwrap_or_default();
    for (name, value) in [("statement_timeout", STATEMENT_TIMEOUT), ("lock_timeout", LOCK_TIMEOUT)] {
        if !options.contains(name) {
            settings.push_str(&format!(" SET {name} = '{value}';"));
        }
    }
    client.batch_execute(&settings)?;
    Ok(client)
}

impl Pool {
    fn slot(&self) -> MutexGuard<'_, Option<Client>> {
        for s in &self.slots {
            if let Ok(guard) = s.try_lock() {
                return guard;
            }
        }
        self.slots[0].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection, its handshake bounded by the connect timeout: the driver bounds only
    /// the TCP connect, so a server that accepts and never answers would hang it for good. The
    /// handshake runs on a thread of its own, given up on (left to finish or fail by itself) at
    /// the deadline; the breaker then keeps further calls from starting more.
    fn connect(&self) -> Result<Client> {
        let deadline = self.config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT);
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let (done, waiting) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("memcc-pg-connect".into())
            .spawn(move || {
                let _ = done.send(open_connection(&config, tls));
            })
            .map_err(|e| MemoryError::Unavailable(format!("starting a connection: {e}")))?;
        match waiting.recv_timeout(deadline) {
            Ok(client) => Ok(client?),
            Err(_) => Err(MemoryError::Unavailable(format!(
                "no answer within {} s, the connect_timeout",
                deadline.as_secs_f64()
            ))),
        }
    }

    /// Run `op` on a connection; when the connection fails, run it again on a new one.
    pub(super) fn run<T>(&self, op: impl FnMut(&mut Client) -> Result<T>) -> Result<T> {
        self.run_tries(ATTEMPTS, op)
    }

    pub(super) fn run_tries<T>(&self, tries: u32, op: impl FnMut(&mut Client) -> Result<T>) -> Result<T> {
        // While the server is known to be away, fail at once; once the wait is over, one call
        // (one try, no back-off) finds out whether it is back.
        let tries = {
            let breaker = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
            match breaker.open_until {
                Some(until) if Instant::now() < until => {
                    return Err(MemoryError::Unavailable(format!(
                        "{} is unreachable ({}); memory is unavailable, trying again in {} s",
                        self.place,
                        breaker.error,
                        until.saturating_duration_since(Instant::now()).as_secs() + 1
                    )));
                }
                Some(_) => 1,
                None => tries,
            }
        };
        let outcome = self.run_inner(tries, op);
        let mut breaker = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        let error = match &outcome {
            Err(MemoryError::Postgres(e)) if transient(e) || timed_out(e) => crate::error::pg_message(e),
            Err(MemoryError::Unavailable(message)) => message.clone(),
            _ => {
                *breaker = Breaker::default();
                return outcome;
            }
        };
        breaker.wait = if breaker.open_until.is_some() { (breaker.wait * 2).min(BREAKER_MAX) } else { BREAKER_FIRST };
        breaker.open_until = Some(Instant::now() + breaker.wait);
        breaker.error = error;
        tracing::warn!(error = %breaker.error, wait = ?breaker.wait, "PostgreSQL unreachable or too slow; memory calls fail at once for now");
        Err(MemoryError::Unavailable(format!(
            "{} is unreachable ({}); memory is unavailable",
            self.place, breaker.error
        )))
    }

    fn run_inner<T>(&self, tries: u32, mut op: impl FnMut(&mut Client) -> Result<T>) -> Result<T> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut slot = self.slot();
            let mut unreachable = false;
            let outcome = match slot.as_mut().filter(|c| !c.is_closed()) {
                Some(client) => op(client),
                None => match self.connect() {
                    Ok(client) => op(slot.insert(client)),
                    Err(e) => {
                        unreachable = true;
                        Err(e)
                    }
                },
            };
            match outcome {
                // A dropped connection is worth another on a new one; a server that takes no new
                // connection is away, and waiting here would only hold the caller up.
                Err(MemoryError::Postgres(e)) if transient(&e) && attempt < tries && !unreachable => {
                    let error = crate::error::pg_message(&e);
                    tracing::warn!(error, attempt, "PostgreSQL connection failed; retrying on a new one");
                    *slot = None;
                    drop(slot);
                    std::thread::sleep(Duration::from_millis(100 << (2 * (attempt - 1)).min(10)));
                }
                other => return other,
            }
        }
    }

    /// Run `op` in one transaction (retried whole, see [`Pool::run`]).
    pub(super) fn write<T>(&self, op: impl FnMut(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        self.write_tries(ATTEMPTS, op)
    }

    pub(super) fn write_tries<T>(
        &self,
        tries: u32,
        mut op: impl FnMut(&mut Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        self.run_tries(tries, |client| {
            let mut tx = client.transaction()?;
            let out = op(&mut tx)?;
            tx.commit()?;
            Ok(out)
        })
    }
}
