//! `memcc bench hook`: what a Claude Code or Codex user waits for on every prompt. The
//! `UserPromptSubmit` hook is timed as its host runs it — the `memcc` binary started with the
//! event's JSON on stdin, until it exits — at growing store sizes, answered by the warm process
//! (`memcc daemon`) and, beside it in the same run, by a cold process that loads the model and the
//! vector index itself (`hooks.warm: false`), and the bare start of the binary (`memcc
//! --version`) as the floor no hook goes under. Beside them, twenty `SessionStart` hooks started
//! together with no warm process running, as a morning's terminals or a script opening sessions
//! start them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::BenchError;
use crate::speed::{WORDS, bench_records, word};
use memcc::lab::memory::store::{Insert, Records, SqliteStore};

/// Latency over the samples, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spread {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub max_ms: f64,
}

impl Spread {
    fn of(mut d: Vec<Duration>) -> Spread {
        d.sort();
        let ms = |x: Duration| x.as_secs_f64() * 1000.0;
        let at = |p: f64| d.get(((d.len() as f64 * p) as usize).min(d.len().saturating_sub(1))).map_or(0.0, |x| ms(*x));
        Spread { p50_ms: at(0.5), p95_ms: at(0.95), max_ms: d.last().map_or(0.0, |x| ms(*x)) }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRow {
    pub records: usize,
    /// Answered by the warm process.
    pub warm: Spread,
    /// Answered by a process of its own (the model and the index loaded each time).
    pub cold: Spread,
    /// Prompts the warm process added anything to (the rest cleared no relevance floor).
    pub warm_answered: usize,
    /// The warm process's peak resident memory once it has answered every prompt (Linux).
    pub warm_peak_rss_mib: Option<f64>,
    /// [`STARTS_AT_ONCE`] `SessionStart` hooks started together with no warm process running (a
    /// morning's terminals, a script opening sessions): each one's time.
    pub starts_at_once: Spread,
}

/// How many sessions start together in the concurrency row.
pub const STARTS_AT_ONCE: usize = 20;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookReport {
    pub machine: crate::Machine,
    pub samples: usize,
    /// `memcc --version`: starting the binary at all.
    pub bare_start: Spread,
    pub rows: Vec<HookRow>,
}

/// Time the prompt hook at each of `sizes` (records), `samples` prompts each, with the binary at
/// `exe` and the local model in `model_dir`.
pub fn run(
    exe: &Path,
    model_dir: &Path,
    sizes: &[usize],
    samples: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<HookReport, BenchError> {
    let model = memcc::lab::memory::embed::usem3::MODEL_ID;
    let dim = memcc::lab::memory::embed::usem3::DIM;
    let prompts: Vec<String> = (0..samples)
        .map(|i| format!("what did we decide about the {} and the {}?", word(i * 7919), WORDS[(i * 7) % WORDS.len()]))
        .collect();
    progress("bare start");
    let bare_start = Spread::of(
        (0..samples)
            .map(|_| {
                let t = Instant::now();
                Command::new(exe).arg("--version").stdout(Stdio::null()).status()?;
                Ok(t.elapsed())
            })
            .collect::<Result<_, std::io::Error>>()?,
    );
    let mut rows = Vec::new();
    for &n in sizes {
        progress(&format!("{n} records"));
        let dir = tempfile::tempdir()?;
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data)?;
        {
            let store = SqliteStore::open(&data.join("memory.db"))?;
            let (recs, vecs) = bench_records(n, dim);
            for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
                let inserts: Vec<Insert<'_>> = chunk
                    .iter()
                    .map(|&i| Insert { record: &recs[i], vector: Some((model, vecs[i].as_slice())), triples: &[] })
                    .collect();
                store.insert_many(&inserts)?;
            }
            // The inserts counted the session index; marking it built keeps the first cold open
            // from counting it again.
            use memcc::lab::memory::sessions::{SESSION_INDEX_VERSION, stored_message_words};
            use memcc::lab::memory::store::Sessions;
            store.reindex_sessions(&stored_message_words, SESSION_INDEX_VERSION)?;
        }
        // Every prompt answered (the synthetic records are no prompt's real match, so the relevance
        // gate would answer none): what is timed is the whole of recall, rendering included.
        let warm_config = dir.path().join("warm.json");
        std::fs::write(
            &warm_config,
            r#"{"hooks": {"idleSecs": 600}, "memory": {"tuning": {"relevantMeaning": 0, "relevantMeaningRise": 0}}}"#,
        )?;
        let cold_config = dir.path().join("cold.json");
        std::fs::write(
            &cold_config,
            r#"{"hooks": {"warm": false}, "memory": {"tuning": {"relevantMeaning": 0, "relevantMeaningRise": 0}}}"#,
        )?;
        let memcc = |config: &Path| {
            let mut c = Command::new(exe);
            c.env("MEMCC_MODEL_DIR", model_dir).arg("--home").arg(&data).arg("--config").arg(config);
            c
        };
        // The warm process, loaded before the clock starts: the first hook of a day pays the cold
        // price once, every later prompt this one.
        let mut daemon = memcc(&warm_config)
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let ready = Instant::now();
        let mut warm_answered = 0;
        // A hook started as its host starts it: the event's JSON on stdin, stdout kept when asked.
        let hook = |config: &Path, payload: serde_json::Value, stdout: Stdio| -> std::io::Result<std::process::Child> {
            let event = payload["hook_event_name"].as_str().unwrap_or_default().to_string();
            let mut child = memcc(config)
                .args(["hook", &event])
                .stdin(Stdio::piped())
                .stdout(stdout)
                .stderr(Stdio::null())
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                writeln!(stdin, "{payload}")?;
            }
            Ok(child)
        };
        let ask = |config: &Path, prompt: &str| -> Result<(Duration, bool), BenchError> {
            let payload = serde_json::json!({"session_id": "bench", "cwd": dir.path(), "hook_event_name": "UserPromptSubmit",
                                             "prompt": prompt});
            let t = Instant::now();
            let out = hook(config, payload, Stdio::piped())?.wait_with_output()?;
            Ok((t.elapsed(), !out.stdout.is_empty()))
        };
        // Until the daemon answers (its socket is up and memory loaded).
        while ready.elapsed() < Duration::from_secs(120) {
            let (_, said) = ask(&warm_config, &prompts[0])?;
            if said || socket_up(&data) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        ask(&warm_config, &prompts[0])?;
        let mut warm = Vec::new();
        for p in &prompts {
            let (d, said) = ask(&warm_config, p)?;
            warm.push(d);
            warm_answered += usize::from(said);
        }
        let warm_peak_rss_mib = crate::peak_rss_mib_of(&daemon.id().to_string());
        let _ = memcc(&warm_config).args(["daemon", "--stop"]).stdout(Stdio::null()).status();
        let _ = daemon.wait();
        // Twenty sessions start at once, no warm process running: each hook finds none, one of
        // them starts it, and each answers itself or is answered by it.
        let started: Vec<(Instant, std::process::Child)> = (0..STARTS_AT_ONCE)
            .map(|i| {
                let payload = serde_json::json!({"session_id": format!("start-{i}"), "cwd": dir.path(),
                                                 "hook_event_name": "SessionStart", "source": "startup"});
                let t = Instant::now();
                Ok((t, hook(&warm_config, payload, Stdio::null())?))
            })
            .collect::<Result<_, std::io::Error>>()?;
        let mut starts = Vec::new();
        for (t, mut child) in started {
            child.wait()?;
            starts.push(t.elapsed());
        }
        // The warm process they started (it may have come up after the last of them ended).
        std::thread::sleep(Duration::from_millis(500));
        let _ = memcc(&warm_config).args(["daemon", "--stop"]).stdout(Stdio::null()).status();
        let mut cold = Vec::new();
        for p in prompts.iter().take(samples.clamp(1, 10)) {
            cold.push(ask(&cold_config, p)?.0);
        }
        rows.push(HookRow {
            records: n,
            warm: Spread::of(warm),
            cold: Spread::of(cold),
            warm_answered,
            warm_peak_rss_mib,
            starts_at_once: Spread::of(starts),
        });
    }
    Ok(HookReport { machine: crate::machine(), samples, bare_start, rows })
}

/// Whether a daemon's socket is in `data`'s run directory.
fn socket_up(data: &Path) -> bool {
    let run: PathBuf = data.join("run");
    std::fs::read_dir(run).is_ok_and(|d| {
        d.filter_map(Result::ok).any(|e| {
            e.file_name().to_string_lossy().ends_with(".sock")
                && std::os::unix::net::UnixStream::connect(e.path()).is_ok()
        })
    })
}

/// The report as Markdown.
pub fn markdown(r: &HookReport) -> String {
    let mut s = format!(
        "Prompt hook latency (`memcc hook UserPromptSubmit`, the binary started with the event's JSON on stdin, \
         until it exits) — {} prompts per size; {} cores, {}. `memcc --version` alone: p50 {:.1} ms, p95 {:.1} ms.\n\n\
         | records | warm p50 ms | warm p95 ms | warm max ms | cold p50 ms | cold p95 ms | warm / cold (p50) | prompts answered \
         | {STARTS_AT_ONCE} session starts at once, p50 / max ms | warm process peak RSS MiB |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        r.samples, r.machine.cores, r.machine.cpu, r.bare_start.p50_ms, r.bare_start.p95_ms
    );
    for row in &r.rows {
        s.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.0} | {:.0} | {:.2} | {} | {:.0} / {:.0} | {} |\n",
            row.records,
            row.warm.p50_ms,
            row.warm.p95_ms,
            row.warm.max_ms,
            row.cold.p50_ms,
            row.cold.p95_ms,
            row.warm.p50_ms / row.cold.p50_ms.max(0.001),
            row.warm_answered,
            row.starts_at_once.p50_ms,
            row.starts_at_once.max_ms,
            row.warm_peak_rss_mib.map_or("–".to_string(), |m| format!("{m:.0}"))
        ));
    }
    s
}
