//! `memcc daemon`: MemCC kept warm for the hooks of Claude Code and Codex. A hook runs on every
//! prompt, and a cold `memcc` spends most of a second loading the embedding model and the vector
//! index; this process keeps them loaded and answers hooks over a Unix socket (one JSON line in,
//! one out), and drains the queue of transcripts the hooks leave (import and flush, outside any
//! host's time limit). It ends after `hooks.idleSecs` without a request, with nothing due.
//!
//! One daemon per data directory and settings: the socket's name carries a fingerprint of both
//! (and of this binary's version), so a hook never talks to a process started with other settings.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use crate::globals::Globals;
use memcc::Memcc;
use memcc::hooks::{HookEvent, HookInput};

#[derive(Args)]
pub struct DaemonArgs {
    /// Drain the queue of transcripts, then end (no socket, no waiting): what a hook starts when
    /// `hooks.warm` is off.
    #[arg(long)]
    drain_only: bool,
    /// End the daemon of these settings, if one runs.
    #[arg(long, conflicts_with = "drain_only")]
    stop: bool,
}

/// The most a request line may hold (a hook's JSON carries the prompt).
const MAX_REQUEST: u64 = 16 << 20;
/// How often the worker looks for due transcripts without being told.
const WORKER_TICK: Duration = Duration::from_secs(30);
/// How long a client that connected may stay silent before its thread is given back: a hook
/// writes its request at once, so this is only a hung or hostile client.
const SILENT_CLIENT: Duration = Duration::from_secs(30);

/// What a hook asks the warm process.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub agent: String,
    pub event: HookEvent,
    pub input: serde_json::Value,
}

/// What it answers: the host's JSON to print (none: print nothing), or why it could not.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Response {
    pub output: Option<serde_json::Value>,
    pub error: Option<String>,
}

/// Where the daemon of these settings listens: `<data dir>/run/daemon-<fingerprint>.sock`, or,
/// when that path is too long for a socket (about 100 bytes), a private directory under the
/// system's temporary one.
pub fn socket_path(cli: &Globals) -> Result<PathBuf> {
    let mut settings = cli.settings()?;
    let dir = std::path::absolute(settings.data_dir())?;
    // The same settings however they were given: the data dir by flag or by environment (the
    // daemon is started with `--home`), the model where it is found; the agent is each
    // request's own.
    settings.model_dir = Some(settings.model_dir());
    settings.data_dir = Some(dir.clone());
    settings.context.agent_id = String::new();
    let key = format!("{}\n{}\n{}", env!("CARGO_PKG_VERSION"), dir.display(), serde_json::to_string(&settings)?);
    let print = fingerprint(&key);
    let in_data = dir.join("run").join(format!("daemon-{print}.sock"));
    if in_data.as_os_str().len() < 100 {
        return Ok(in_data);
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    Ok(std::env::temp_dir().join(format!("memcc-{uid}")).join(format!("daemon-{print}.sock")))
}

/// Whether the daemon's socket at `socket` is one only this user could have put there, as
/// OpenSSH checks its control sockets: its directory is this user's and no one else may write
/// in it, and the socket (when there is one) is this user's. A long data-dir path puts the
/// socket in the shared temporary directory, where another local user could make
/// `memcc-<uid>/` first and answer every hook; what is not ours is not connected to.
pub fn socket_is_ours(socket: &Path) -> std::result::Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = socket.parent().ok_or_else(|| format!("{} has no directory", socket.display()))?;
    let d = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !d.is_dir() || d.uid() != uid || d.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not this user's alone (owner {}, mode {:o}): the warm process is not used",
            dir.display(),
            d.uid(),
            d.mode() & 0o7777
        ));
    }
    match std::fs::symlink_metadata(socket) {
        Ok(m) if m.uid() != uid => Err(format!("{} belongs to user {}: not connected to", socket.display(), m.uid())),
        _ => Ok(()),
    }
}

fn fingerprint(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    // The same binary computes it on both sides (the version is part of the key).
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// The data dir's worker lock (`run/worker.lock`), if no other process holds it: whoever holds
/// it is the only one importing transcripts, so the claims of any other are a dead worker's.
fn worker_lock(run_dir: &Path) -> Result<Option<std::fs::File>> {
    let lock = std::fs::File::create(run_dir.join("worker.lock"))?;
    Ok(try_lock(&lock).then_some(lock))
}

/// Take `file`'s exclusive lock without waiting; whether it was free. The OS lets go of it when
/// the process ends, however it ends.
fn try_lock(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on an open descriptor we own; it does not touch memory.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// [`try_lock`], trying again for up to `patience`.
fn lock_within(file: &std::fs::File, patience: Duration) -> bool {
    let deadline = std::time::Instant::now() + patience;
    loop {
        if try_lock(file) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A directory only this user may enter, for the socket and its lock.
pub(crate) fn private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // The data dir above it too, when this makes it.
    memcc::core::private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("making {} private", dir.display()))
}

pub fn run(cli: &Globals, args: &DaemonArgs) -> Result<()> {
    if args.drain_only {
        return drain_alone(cli);
    }
    let socket = socket_path(cli)?;
    if args.stop {
        return stop(&socket);
    }
    let dir = socket.parent().context("the socket path has no directory")?;
    private_dir(dir)?;
    socket_is_ours(&socket).map_err(anyhow::Error::msg)?;
    // One daemon per socket, decided before anything loads: the lock is held for the process's
    // life (the OS lets go at exit).
    let mut lock =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(socket.with_extension("lock"))?;
    // A hook starts a daemon when it finds none answering; the one it found silent may be one
    // that is being killed and still holds the lock for a moment. Wait that moment out rather than
    // leave the queue with no daemon until the next hook.
    if !lock_within(&lock, Duration::from_secs(3)) {
        tracing::info!("another daemon serves {}", socket.display());
        return Ok(());
    }
    // Who holds it, for `--stop`.
    lock.set_len(0)?;
    writeln!(lock, "{}", std::process::id())?;
    // Memory loads on a thread of its own: the socket answers at once, and a request that needs
    // memory waits for it there, not in a hook that found no socket.
    let memcc = Arc::new(Memcc::open_background(cli.settings()?, None).context("opening MemCC")?);
    // A socket file left by a daemon that died: nobody holds the lock, so nobody listens.
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).with_context(|| format!("listening on {}", socket.display()))?;
    eprintln!("memcc: daemon listening on {}", socket.display());
    let last_request = Arc::new(AtomicI64::new(memcc::core::now_ms()));
    let wake = Arc::new((Mutex::new(true), Condvar::new()));
    spawn_worker(memcc.clone(), wake.clone(), cli.settings()?.data_dir().join("run"));
    spawn_idle_watch(memcc.clone(), last_request.clone(), socket.clone(), cli.settings()?.hooks.idle_secs);
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        last_request.store(memcc::core::now_ms(), Ordering::Relaxed);
        let (memcc, wake) = (memcc.clone(), wake.clone());
        std::thread::spawn(move || {
            if let Err(e) = serve(&memcc, stream, &wake) {
                tracing::warn!(error = %e, "a hook's request failed");
            }
        });
    }
    drop(lock);
    Ok(())
}

/// `--stop`: end the daemon that holds the socket's lock (its pid is in the lock file).
fn stop(socket: &Path) -> Result<()> {
    // The lock names the process to end: only one this user wrote.
    if socket.parent().is_some_and(Path::exists) {
        socket_is_ours(socket).map_err(anyhow::Error::msg)?;
    }
    let lock_path = socket.with_extension("lock");
    let Ok(lock) = std::fs::File::open(&lock_path) else {
        println!("no daemon runs for these settings");
        return Ok(());
    };
    // A free lock: whoever wrote the pid is gone.
    if try_lock(&lock) {
        println!("no daemon runs for these settings");
        return Ok(());
    }
    let pid: i32 = std::fs::read_to_string(&lock_path)?.trim().parse().context("the lock file names no process")?;
    // SAFETY: kill sends a signal; the pid is the lock holder's, read just now.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        bail!("could not end process {pid}: {}", std::io::Error::last_os_error());
    }
    let _ = std::fs::remove_file(socket);
    println!("ended the daemon (process {pid})");
    Ok(())
}

/// `--drain-only`: one worker at a time per data dir drains, then the process ends.
fn drain_alone(cli: &Globals) -> Result<()> {
    let dir = cli.settings()?.data_dir().join("run");
    private_dir(&dir)?;
    // Another worker runs; it takes what is due, this job included.
    let Some(_worker) = worker_lock(&dir)? else { return Ok(()) };
    let memcc = Memcc::open_context_first(cli.settings()?).context("opening MemCC")?;
    // The only worker: what others claimed, they left when they died.
    memcc.context.store().release_claims(&|_| true)?;
    memcc.deliver_waiting();
    let report = memcc.drain_transcripts()?;
    tracing::info!(?report, "drained the transcript queue");
    Ok(())
}

/// Answer one request on `stream`: a hook's event (queuing wakes the worker).
fn serve(memcc: &Memcc, stream: UnixStream, wake: &(Mutex<bool>, Condvar)) -> Result<()> {
    // A hook writes its request at once; a client that connects and says nothing does not hold
    // a thread for ever.
    stream.set_read_timeout(Some(SILENT_CLIENT))?;
    let mut line = String::new();
    BufReader::new((&stream).take(MAX_REQUEST)).read_line(&mut line)?;
    let response = match serde_json::from_str::<Request>(&line) {
        Ok(req) => {
            let input: HookInput = serde_json::from_value(req.input).unwrap_or_default();
            match memcc.answer_hook(&req.agent, req.event, &input) {
                Ok(answer) => {
                    if answer.queued {
                        let (due, cv) = wake;
                        *due.lock().unwrap_or_else(|p| p.into_inner()) = true;
                        cv.notify_one();
                    }
                    Response { output: answer.host_output(), error: None }
                }
                Err(e) => Response { output: None, error: Some(e.to_string()) },
            }
        }
        Err(e) => Response { output: None, error: Some(format!("bad request: {e}")) },
    };
    let mut out = &stream;
    writeln!(out, "{}", serde_json::to_string(&response)?)?;
    Ok(())
}

/// The worker: summaries waiting for memory, then the transcript queue, each time it is woken
/// (a hook queued one) or every [`WORKER_TICK`] (a failed one falls due).
fn spawn_worker(memcc: Arc<Memcc>, wake: Arc<(Mutex<bool>, Condvar)>, run_dir: PathBuf) {
    std::thread::spawn(move || {
        let mut worker = None;
        loop {
            // One worker per data dir (another daemon's settings may share it): until this one
            // is it, it only serves hooks.
            if worker.is_none() {
                worker = worker_lock(&run_dir).unwrap_or_default();
                if worker.is_some() {
                    // The only worker: a worker killed mid-import left its claims, now this one's.
                    match memcc.context.store().release_claims(&|_| true) {
                        Ok(0) => {}
                        Ok(n) => tracing::info!(n, "took over transcripts a worker that died had claimed"),
                        Err(e) => tracing::warn!(error = %e, "claims a dead worker left stay until they expire"),
                    }
                    memcc.deliver_waiting();
                }
            }
            {
                let (due, cv) = &*wake;
                let mut due = due.lock().unwrap_or_else(|p| p.into_inner());
                if !*due {
                    due = cv.wait_timeout(due, WORKER_TICK).unwrap_or_else(|p| p.into_inner()).0;
                }
                *due = false;
            }
            if worker.is_none() {
                continue;
            }
            match memcc.drain_transcripts() {
                Ok(r) if r.imported + r.failed > 0 => tracing::info!(?r, "drained the transcript queue"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "the transcript queue could not be drained"),
            }
        }
    });
}

/// End the process after `idle_secs` without a request, when nothing is due in the queue.
fn spawn_idle_watch(memcc: Arc<Memcc>, last_request: Arc<AtomicI64>, socket: PathBuf, idle_secs: u64) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_secs(5.min(idle_secs.max(1))));
            let idle_ms = memcc::core::now_ms() - last_request.load(Ordering::Relaxed);
            let busy = memcc.context.store().transcript_due().unwrap_or(false);
            if idle_ms >= (idle_secs as i64).saturating_mul(1000) && !busy {
                let _ = std::fs::remove_file(&socket);
                tracing::info!("no hook for {idle_secs} s: the daemon ends");
                std::process::exit(0);
            }
        }
    });
}

/// Ask the daemon of these settings; `None` when none answers (none runs, or it is starting).
pub fn ask(socket: &Path, request: &Request, timeout: Duration) -> Option<Response> {
    socket_is_ours(socket).ok()?;
    let stream = UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let mut out = &stream;
    writeln!(out, "{}", serde_json::to_string(request).ok()?).ok()?;
    let mut line = String::new();
    BufReader::new((&stream).take(MAX_REQUEST)).read_line(&mut line).ok()?;
    serde_json::from_str(&line).ok()
}

/// Start a daemon (or, `drain_only`, a one-off drain) in the background, detached from the hook
/// and its host: a new session, so the host's end (or its killing the hook's process group)
/// does not end it; its log in `<data dir>/run/daemon.log`.
pub fn spawn(cli: &Globals, drain_only: bool) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let dir = cli.settings()?.data_dir().join("run");
    private_dir(&dir)?;
    let log_path = dir.join("daemon.log");
    // Keep the log small: a new one when it has grown past a megabyte.
    if std::fs::metadata(&log_path).is_ok_and(|m| m.len() > 1 << 20) {
        let _ = std::fs::rename(&log_path, dir.join("daemon.log.old"));
    }
    let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path)?;
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command.args(cli.global_args()?).arg("daemon");
    if drain_only {
        command.arg("--drain-only");
    }
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(log);
    // SAFETY: setsid is async-signal-safe and only makes the child its own session's leader.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    command.spawn().context("starting the MemCC daemon")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_socket_in_a_directory_others_may_write_is_not_connected_to() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("memcc-1000");
        std::fs::create_dir(&run).unwrap();
        let socket = run.join("daemon-abc.sock");
        // Whoever listens there answers every request as if it were MemCC.
        let listener = UnixListener::bind(&socket).unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                let _ = writeln!(&stream, r#"{{"output": {{"injected": true}}, "error": null}}"#);
            }
        });
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(socket_is_ours(&socket), Ok(()));
        let request = Request { agent: "main".into(), event: HookEvent::Stop, input: serde_json::json!({}) };
        assert!(ask(&socket, &request, Duration::from_secs(5)).is_some(), "our own directory: asked");
        for mode in [0o777, 0o1777, 0o720, 0o702] {
            std::fs::set_permissions(&run, std::fs::Permissions::from_mode(mode)).unwrap();
            let why = socket_is_ours(&socket).unwrap_err();
            assert!(why.contains("not this user's alone"), "{mode:o}: {why}");
            // Not even asked: a listener there would read the prompt.
            assert!(ask(&socket, &request, Duration::from_millis(200)).is_none());
        }
        let missing = dir.path().join("nowhere").join("daemon.sock");
        assert!(socket_is_ours(&missing).is_err(), "no directory: nothing to connect to");
    }
}
