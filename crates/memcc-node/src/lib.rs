//! The Node.js face of MemCC. Every method converts JSON in, calls the `memcc` crate on the libuv
//! thread pool (never on the JS thread), and converts JSON out; errors and panics become
//! rejected promises, never a crashed host.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::AsyncTask;
use napi::bindgen_prelude::Object;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;

use memcc::core::{ChatModel, ChatRequest, LENT_MODEL_PAUSE, LlmError, Pausing};

use memcc::context::{AgentMessage, SessionRef};
use memcc::context::{ExpandRequest, GrepRequest};
use memcc::tools::SearchArgs;
use memcc::{Memcc, MemccConfig};

type Work = Box<dyn FnOnce() -> std::result::Result<serde_json::Value, String> + Send>;

/// What a panic caught at the boundary becomes in JavaScript: coded like every failure
/// (`[internal]`), so the plugin branches on it as on any other.
const PANICKED: &str = "memcc: [internal] internal error (panic); nothing was lost";

/// One call, run off the JS thread.
pub struct Job(Option<Work>);

impl Task for Job {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<String> {
        let work = self.0.take().ok_or_else(|| Error::new(Status::GenericFailure, "memcc: job ran twice"))?;
        match catch_unwind(AssertUnwindSafe(work)) {
            Ok(Ok(value)) => Ok(value.to_string()),
            Ok(Err(message)) => Err(Error::new(Status::GenericFailure, format!("memcc: {message}"))),
            Err(_) => Err(Error::new(Status::GenericFailure, PANICKED)),
        }
    }

    fn resolve(&mut self, _env: Env, output: String) -> Result<String> {
        Ok(output)
    }
}

fn job(work: impl FnOnce() -> std::result::Result<serde_json::Value, String> + Send + 'static) -> AsyncTask<Job> {
    AsyncTask::new(Job(Some(Box::new(work))))
}

type Resolver = Box<dyn FnOnce(Env) -> Result<String> + Send>;

/// Run `work` on a thread of its own and settle the returned promise from there. For calls that
/// may wait on the host's model: on the libuv pool they would occupy the threads the host needs
/// to answer (its model call does file and network work there), and both sides would wait.
fn on_own_thread<'e>(
    env: &'e Env,
    name: &str,
    work: impl FnOnce() -> std::result::Result<serde_json::Value, String> + Send + 'static,
) -> Result<Object<'e>> {
    let (deferred, promise) = env.create_deferred::<String, Resolver>()?;
    std::thread::Builder::new()
        .name(format!("memcc-{name}"))
        .spawn(move || match catch_unwind(AssertUnwindSafe(work)) {
            Ok(Ok(value)) => {
                let text = value.to_string();
                deferred.resolve(Box::new(move |_| Ok(text)))
            }
            Ok(Err(message)) => deferred.reject(Error::new(Status::GenericFailure, format!("memcc: {message}"))),
            Err(_) => deferred.reject(Error::new(Status::GenericFailure, PANICKED)),
        })
        .map_err(|e| Error::new(Status::GenericFailure, format!("memcc: cannot start a thread: {e}")))?;
    Ok(promise)
}

/// A failure as the plugin sees it: `[code] message`, the code one of
/// [`memcc::core::ErrorCode`]'s, so the plugin branches on the code and never on the text.
fn coded(code: memcc::core::ErrorCode, message: impl std::fmt::Display) -> String {
    format!("[{}] {message}", code.as_str())
}

/// For `map_err` on any MemCC error.
fn fail<E: Into<memcc::MemccError>>(e: E) -> String {
    let e = e.into();
    coded(e.code(), e)
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> std::result::Result<T, String> {
    serde_json::from_str(json)
        .map_err(|e| coded(memcc::core::ErrorCode::InvalidInput, format!("invalid {what} JSON: {e}")))
}

fn to_json<T: serde::Serialize>(value: T) -> std::result::Result<serde_json::Value, String> {
    serde_json::to_value(value).map_err(|e| coded(memcc::core::ErrorCode::Storage, e))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Session {
    session_id: String,
    session_key: Option<String>,
    agent_id: Option<String>,
    /// The project the host holds the session in (its workspace), when it says.
    #[serde(default)]
    project: Option<String>,
}

impl From<Session> for SessionRef {
    fn from(s: Session) -> Self {
        SessionRef {
            session_id: s.session_id,
            session_key: s.session_key,
            agent_id: s.agent_id,
            project: s.project,
            source: Some(memcc::context::SessionSource::Openclaw),
        }
    }
}

fn messages(json: &str) -> std::result::Result<Vec<AgentMessage>, String> {
    let values: Vec<serde_json::Value> = parse("messages", json)?;
    Ok(values.into_iter().map(AgentMessage::from_value).collect())
}

/// `(callJson) => void` with `{callId, request}`: the JS side runs the host's model and answers
/// through `resolveHostCall`. One string argument (a tuple arrives in JS as a single array).
/// Weak, so a pending call never keeps the process alive.
type HostFn = ThreadsafeFunction<String, (), String, Status, false, true>;
type Pending = Arc<Mutex<HashMap<u32, SyncSender<HostAnswer>>>>;

/// What the JS side answered to one `hostComplete` call.
enum HostAnswer {
    Text(String),
    /// The model failed (or threw): it is paused.
    Failed(String),
    /// The session has no model to lend: nothing failed, nothing is paused.
    Absent(String),
}

/// The host's chat model (OpenClaw's `runtimeContext.llm`), reached from a worker thread.
struct HostModel {
    /// Hands `{callId, sessionId, agentId, request}` to the JS side (`hostComplete`).
    call: Box<dyn Fn(String) -> Status + Send + Sync>,
    pending: Pending,
    next: AtomicU32,
}

/// How long a summary may wait for the host's model before the extractive fallback is used.
const HOST_TIMEOUT: Duration = Duration::from_secs(30);

thread_local! {
    /// The session whose compaction this thread runs: the host lends the model of *that*
    /// session's agent, never another's.
    static HOST_SESSION: std::cell::RefCell<Option<(String, Option<String>)>> = const { std::cell::RefCell::new(None) };
}

/// Run `work` with `session` as the one the host's model is asked on behalf of.
fn for_session<T>(session: &SessionRef, work: impl FnOnce() -> T) -> T {
    HOST_SESSION.with(|s| *s.borrow_mut() = Some((session.session_id.clone(), session.agent_id.clone())));
    let out = work();
    HOST_SESSION.with(|s| *s.borrow_mut() = None);
    out
}

impl ChatModel for HostModel {
    fn complete(&self, request: &ChatRequest) -> std::result::Result<String, LlmError> {
        let Some((session_id, agent_id)) = HOST_SESSION.with(|s| s.borrow().clone()) else {
            return Err(LlmError::Absent("no session to ask the host model for".into()));
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = sync_channel(1);
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
        let json = serde_json::json!({"callId": id, "sessionId": session_id, "agentId": agent_id, "request": request})
            .to_string();
        let status = (self.call)(json);
        let answer = if status == Status::Ok {
            rx.recv_timeout(HOST_TIMEOUT)
                .unwrap_or_else(|_| HostAnswer::Failed("the host model did not answer in time".into()))
        } else {
            HostAnswer::Failed(format!("cannot reach the host model: {status}"))
        };
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        match answer {
            HostAnswer::Text(text) => Ok(text),
            HostAnswer::Failed(why) => Err(LlmError::Host(why)),
            HostAnswer::Absent(why) => Err(LlmError::Absent(why)),
        }
    }

    fn label(&self) -> String {
        "host".into()
    }
}

/// The addon's version (the workspace version it was built from): the plugin refuses an addon
/// whose version differs from its own package's.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The tools the plugin offers the host's model, as JSON (`memcc::tools::host_tools`): name,
/// title, description and the arguments' schema, the same the MCP server serves.
#[napi]
pub fn tool_catalogue() -> String {
    serde_json::to_string(&memcc::tools::host_tools()).unwrap_or_else(|_| "[]".into())
}

#[napi]
pub struct MemccNative {
    inner: Arc<Memcc>,
    pending: Pending,
}

#[napi]
impl MemccNative {
    /// Open MemCC with a `MemccConfig` as JSON (runs migrations; loads the local model).
    /// `hostComplete`, when given, lends the host's model for summaries (used when no
    /// `compactionModel` is configured).
    #[napi(constructor)]
    pub fn new(config_json: String, host_complete: Option<HostFn>) -> Result<Self> {
        let pending: Pending = Arc::default();
        let host: Option<Arc<dyn ChatModel>> = host_complete.map(|call| {
            let call = Box::new(move |json| call.call(json, ThreadsafeFunctionCallMode::NonBlocking));
            // After the model fails or stalls, summaries skip it (the extractive fallback) a while.
            let model = HostModel { call, pending: pending.clone(), next: AtomicU32::new(1) };
            Arc::new(Pausing::new(model, LENT_MODEL_PAUSE)) as Arc<dyn ChatModel>
        });
        let open = move || -> std::result::Result<Memcc, String> {
            let config = MemccConfig::from_json(&config_json)
                .map_err(|e| coded(memcc::core::ErrorCode::InvalidInput, format!("invalid config JSON: {e}")))?;
            Memcc::open_background(config, host).map_err(fail)
        };
        match catch_unwind(AssertUnwindSafe(open)) {
            Ok(Ok(m)) => {
                let inner = Arc::new(m);
                // Summaries an earlier process committed but could not hand to memory (it waits
                // for memory to open, on a thread of its own).
                let leftovers = inner.clone();
                let _ = std::thread::Builder::new().name("memcc-handoff".into()).spawn(move || {
                    let _ = catch_unwind(AssertUnwindSafe(|| leftovers.deliver_waiting()));
                });
                Ok(MemccNative { inner, pending })
            }
            Ok(Err(e)) => Err(Error::new(Status::InvalidArg, format!("memcc: {e}"))),
            Err(_) => Err(Error::new(Status::GenericFailure, "memcc: [internal] internal error (panic) while opening")),
        }
    }

    /// The answer to a `hostComplete(callJson)` call: the model's text when `ok`, else why it
    /// failed — or, with `absent`, why there was no model to ask (which pauses nothing).
    #[napi]
    pub fn resolve_host_call(&self, call_id: u32, ok: bool, text: String, absent: Option<bool>) {
        if let Some(tx) = self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&call_id) {
            let _ = tx.try_send(match (ok, absent.unwrap_or(false)) {
                (true, _) => HostAnswer::Text(text),
                (false, true) => HostAnswer::Absent(text),
                (false, false) => HostAnswer::Failed(text),
            });
        }
    }

    /// Warnings from opening (e.g. the local model is missing).
    /// What the model is told about long-term memory (for the host's memory prompt builder).
    #[napi]
    pub fn memory_prompt(&self) -> String {
        memcc::MEMORY_PROMPT.to_string()
    }

    #[napi]
    pub fn warnings(&self) -> Vec<String> {
        self.inner.warnings()
    }

    #[napi]
    pub fn ingest_batch(&self, session_json: String, messages_json: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let s: Session = parse("session", &session_json)?;
            to_json(m.context.ingest_batch(&s.into(), &messages(&messages_json)?).map_err(fail)?)
        })
    }

    /// `{status: "committed" | "duplicate"}`.
    #[napi]
    pub fn commit_turn(&self, session_json: String, advancement_key: String, messages_json: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let s: Session = parse("session", &session_json)?;
            let done = m.context.commit_turn(&s.into(), &advancement_key, &messages(&messages_json)?).map_err(fail)?;
            Ok(serde_json::json!({"status": if done.is_some() { "committed" } else { "duplicate" }, "outcome": done}))
        })
    }

    #[napi]
    pub fn assemble(&self, session_json: String, budget: Option<f64>, as_of: Option<f64>) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let s: Session = parse("session", &session_json)?;
            to_json(m.assemble(&SessionRef::from(s), m.budget(budget), as_of.map(|t| t as i64)).map_err(fail)?)
        })
    }

    /// Assemble mid-turn: the session may be new; `pendingJson` is the turn in progress.
    #[napi]
    pub fn assemble_for(
        &self,
        session_json: String,
        budget: Option<f64>,
        as_of: Option<f64>,
        pending_json: String,
    ) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let s: Session = parse("session", &session_json)?;
            let pending = messages(&pending_json)?;
            to_json(m.assemble_for(&s.into(), m.budget(budget), as_of.map(|t| t as i64), &pending).map_err(fail)?)
        })
    }

    /// On a thread of its own: summaries may wait on the host's model (see `on_own_thread`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn compact<'e>(
        &self,
        env: &'e Env,
        session_json: String,
        budget: Option<f64>,
        force: bool,
    ) -> Result<Object<'e>> {
        let m = self.inner.clone();
        on_own_thread(env, "compact", move || {
            let s = SessionRef::from(parse::<Session>("session", &session_json)?);
            let budget = m.budget(budget);
            to_json(for_session(&s, || m.compact(&s, budget, force)).map_err(fail)?)
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn flush<'e>(&self, env: &'e Env, session_json: String, budget: Option<f64>) -> Result<Object<'e>> {
        let m = self.inner.clone();
        on_own_thread(env, "flush", move || {
            let s = SessionRef::from(parse::<Session>("session", &session_json)?);
            let budget = m.budget(budget);
            to_json(for_session(&s, || m.flush(&s, budget)).map_err(fail)?)
        })
    }

    /// `lcm_grep` with a `GrepRequest` as JSON.
    #[napi]
    pub fn grep(&self, request_json: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let req: GrepRequest = parse("grep request", &request_json)?;
            to_json(m.context.grep(&req).map_err(fail)?)
        })
    }

    /// `lcm_describe` of a summary of `agentId`'s (the engine's agent when null).
    #[napi]
    pub fn describe(&self, agent_id: Option<String>, summary_id: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || to_json(m.context.describe(agent_id.as_deref(), &summary_id).map_err(fail)?))
    }

    /// `lcm_expand_query` with an `ExpandRequest` as JSON.
    #[napi]
    pub fn expand(&self, request_json: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let req: ExpandRequest = parse("expand request", &request_json)?;
            to_json(m.context.expand(&req).map_err(fail)?)
        })
    }

    /// `memory_search` as `agentId` with the tool's arguments as JSON (`memcc::tools::SearchArgs`:
    /// its defaults and limits are the catalogue's).
    #[napi]
    pub fn memory_search(&self, agent_id: String, args_json: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let args: SearchArgs = parse("memory_search arguments", &args_json)?;
            to_json(m.memory_search(&agent_id, &args, None).map_err(fail)?)
        })
    }

    #[napi]
    pub fn memory_get(&self, agent_id: String, id: String) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || to_json(m.memory().map_err(fail)?.memory_get(&agent_id, &id).map_err(fail)?))
    }

    #[napi]
    pub fn stats(&self, session_json: Option<String>) -> AsyncTask<Job> {
        let m = self.inner.clone();
        job(move || {
            let session = match session_json {
                Some(j) => Some(SessionRef::from(parse::<Session>("session", &j)?)),
                None => None,
            };
            let context = m.context.stats(session).map_err(fail)?;
            let memory = match m.memory_enabled() {
                true => Some(m.memory().map_err(fail)?.stats().map_err(fail)?),
                false => None,
            };
            Ok(serde_json::json!({"context": to_json(context)?, "memory": to_json(memory)?}))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host model whose JS side answers each call with `answer(n)` (n counts the calls it saw).
    fn host(answer: impl Fn(u32) -> HostAnswer + Send + Sync + 'static) -> (Pausing<HostModel>, Arc<AtomicU32>) {
        let pending: Pending = Arc::default();
        let seen = Arc::new(AtomicU32::new(0));
        let (p, s) = (pending.clone(), seen.clone());
        let call = Box::new(move |json: String| {
            let n = s.fetch_add(1, Ordering::SeqCst) + 1;
            let id = serde_json::from_str::<serde_json::Value>(&json).unwrap()["callId"].as_u64().unwrap() as u32;
            let tx = p.lock().unwrap().remove(&id).unwrap();
            tx.try_send(answer(n)).unwrap();
            Status::Ok
        });
        (Pausing::new(HostModel { call, pending, next: AtomicU32::new(1) }, LENT_MODEL_PAUSE), seen)
    }

    fn ask(model: &Pausing<HostModel>) -> std::result::Result<String, LlmError> {
        let session = SessionRef { session_id: "s".into(), ..Default::default() };
        for_session(&session, || model.complete(&ChatRequest::simple("sys", "user", 10)))
    }

    #[test]
    fn a_panic_reaches_javascript_as_an_internal_error() {
        let mut panicking = Job(Some(Box::new(|| panic!("boom"))));
        let err = panicking.compute().unwrap_err();
        assert!(err.reason.starts_with("memcc: [internal] "), "{}", err.reason);
        let mut failing = Job(Some(Box::new(|| Err(coded(memcc::core::ErrorCode::NotFound, "memory mem_9")))));
        assert_eq!(failing.compute().unwrap_err().reason, "memcc: [not_found] memory mem_9");
    }

    #[test]
    fn a_failed_host_model_is_not_asked_again_during_its_pause() {
        let (model, seen) = host(|_| HostAnswer::Failed("provider down".into()));
        assert!(ask(&model).unwrap_err().to_string().contains("provider down"));
        let second = ask(&model).unwrap_err().to_string();
        assert!(second.contains("paused"), "{second}");
        assert_eq!(seen.load(Ordering::SeqCst), 1, "the paused model was not asked");
    }

    #[test]
    fn no_model_to_lend_pauses_nothing_and_a_success_is_returned() {
        let (model, seen) = host(|n| match n {
            1 => HostAnswer::Absent("no host model for this session".into()),
            _ => HostAnswer::Text("a summary".into()),
        });
        assert!(matches!(ask(&model), Err(LlmError::Absent(_))), "no model is no failure");
        assert_eq!(ask(&model).unwrap(), "a summary");
        assert_eq!(seen.load(Ordering::SeqCst), 2);
    }
}
