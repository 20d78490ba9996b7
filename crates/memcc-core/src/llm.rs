//! Chat models: the [`ChatModel`] trait and an OpenAI-compatible `/chat/completions` client.
//!
//! Both halves use a chat model only for optional work (summaries, reranking, triple
//! extraction), and always have a deterministic fallback, so every error here is recoverable.
//! Hosts plug their own model in by implementing [`ChatModel`] (the OpenClaw plugin passes the
//! host's `runtimeContext.llm` this way).

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

impl ChatRequest {
    /// A request of one system prompt and one user message.
    pub fn simple(system: &str, user: &str, max_tokens: u32) -> Self {
        ChatRequest {
            system: Some(system.to_string()),
            messages: vec![ChatMessage { role: "user".into(), content: user.to_string() }],
            max_tokens: Some(max_tokens),
            temperature: Some(0.0),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("chat endpoint {url} unreachable or timed out: {detail}")]
    Transport { url: String, detail: String },
    #[error("chat endpoint {url} answered HTTP {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("chat endpoint {url} returned an unusable response: {detail}")]
    BadResponse { url: String, detail: String },
    #[error("host model failed: {0}")]
    Host(String),
    /// No model was there to ask (the host lends none for this session, the client offers no
    /// sampling, the model is paused after failing): nothing failed, and callers fall back quietly.
    #[error("no model to ask: {0}")]
    Absent(String),
    #[error("invalid chat model configuration: {0}")]
    Config(String),
}

/// Anything that can complete a chat: a remote API, the host's model, a test double.
pub trait ChatModel: Send + Sync {
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError>;
    /// Short label for logs and provenance (e.g. `openai:gpt-4o-mini`).
    fn label(&self) -> String;
}

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// Upper bound on one whole request, body included.
    pub timeout: Duration,
    /// Retries after the first attempt, for transport errors, 429 and 5xx.
    pub max_retries: u32,
    /// First backoff; doubles on each retry.
    pub backoff: Duration,
    /// After a call failed for good, how long the endpoint is left alone (doubling with each
    /// such failure, at most 20 times as long; see [`Breaker`]).
    pub cooldown: Duration,
}

impl OpenAiConfig {
    pub fn new(base_url: &str, model: &str) -> Self {
        OpenAiConfig {
            base_url: base_url.to_string(),
            api_key: std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty()),
            model: model.to_string(),
            timeout: Duration::from_secs(60),
            max_retries: 2,
            backoff: Duration::from_millis(500),
            cooldown: Duration::from_secs(30),
        }
    }

    /// `base_url` joined with an endpoint path such as `chat/completions`.
    pub fn endpoint(&self, path: &str) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with(path) { base.to_string() } else { format!("{base}/{path}") }
    }
}

/// Stops calling an endpoint that keeps failing: after a call that failed for good (its
/// retries spent on transport errors, 429 or 5xx), calls fail at once for a cool-down
/// (`OpenAiConfig::cooldown`, 30 s by default) that doubles with each such failure up to 20
/// times as long, and ends with the first success. A dead endpoint then costs one timeout per
/// cool-down, not one (times the retries) per call.
#[derive(Debug, Default)]
pub struct Breaker {
    open_until_ms: std::sync::atomic::AtomicI64,
    failures: std::sync::atomic::AtomicU32,
}

impl Breaker {
    /// Milliseconds left before the endpoint is tried again (0: call it).
    pub fn cooling_ms(&self) -> i64 {
        (self.open_until_ms.load(std::sync::atomic::Ordering::Acquire) - crate::time::now_ms()).max(0)
    }

    /// A call failed for good: stop calling for `cooldown`, doubled for each failure in a row.
    pub fn failed(&self, cooldown: Duration) {
        use std::sync::atomic::Ordering;
        let first = cooldown.as_millis().min(i64::MAX as u128 / 64) as i64;
        let n = self.failures.fetch_add(1, Ordering::AcqRel).min(5);
        let wait = (first << n).min(first.saturating_mul(20));
        self.open_until_ms.store(crate::time::now_ms() + wait, Ordering::Release);
    }

    /// A call succeeded: call freely again.
    pub fn succeeded(&self) {
        use std::sync::atomic::Ordering;
        self.failures.store(0, Ordering::Release);
        self.open_until_ms.store(0, Ordering::Release);
    }
}

/// POST `body` as JSON to `url`, retrying transport errors, 429 and 5xx with exponential
/// backoff. Returns the response body of the first 2xx answer. `breaker` skips the call while
/// the endpoint is cooling down after failing for good.
pub fn post_json_with_retry(
    agent: &ureq::Agent,
    config: &OpenAiConfig,
    breaker: &Breaker,
    url: &str,
    body: &serde_json::Value,
) -> Result<String, LlmError> {
    let cooling = breaker.cooling_ms();
    if cooling > 0 {
        return Err(LlmError::Transport {
            url: url.to_string(),
            detail: format!("not called: it failed recently; trying again in {} s", (cooling + 999) / 1000),
        });
    }
    let payload = body.to_string();
    let mut attempt = 0u32;
    loop {
        let result = send_once(agent, config, url, &payload);
        let retryable = match &result {
            Ok(_) => false,
            Err(LlmError::Transport { .. }) => true,
            Err(LlmError::Status { status, .. }) => *status == 429 || *status >= 500,
            Err(_) => false,
        };
        if result.is_ok() {
            breaker.succeeded();
        }
        if retryable && attempt >= config.max_retries {
            breaker.failed(config.cooldown);
        }
        if !retryable || attempt >= config.max_retries {
            return result;
        }
        let wait = config.backoff.saturating_mul(2u32.saturating_pow(attempt));
        tracing::warn!(url, attempt, ?wait, error = %result.as_ref().err().map(|e| e.to_string()).unwrap_or_default(), "retrying chat endpoint");
        std::thread::sleep(wait);
        attempt += 1;
    }
}

fn send_once(agent: &ureq::Agent, config: &OpenAiConfig, url: &str, payload: &str) -> Result<String, LlmError> {
    let mut request = agent.post(url).header("Content-Type", "application/json");
    if let Some(key) = &config.api_key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let transport = |e: ureq::Error| LlmError::Transport { url: url.to_string(), detail: e.to_string() };
    let mut response = request.send(payload).map_err(transport)?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().map_err(transport)?;
    if !(200..300).contains(&status) {
        let body: String = text.chars().take(500).collect();
        return Err(LlmError::Status { url: url.to_string(), status, body });
    }
    Ok(text)
}

/// Build a ureq agent whose every request is bounded by `timeout`.
pub fn http_agent(timeout: Duration) -> ureq::Agent {
    http_agent_with(ureq::Agent::config_builder().timeout_global(Some(timeout)))
}

/// An agent for a long download from a server that may hang: the whole may take `total`, but
/// finding the server, connecting and each read each get `step` — a server that accepts and
/// never answers is given up on in seconds, not at the end of the whole budget.
pub fn download_agent(total: Duration, step: Duration) -> ureq::Agent {
    http_agent_with(
        ureq::Agent::config_builder()
            .timeout_global(Some(total))
            .timeout_resolve(Some(step))
            .timeout_connect(Some(step))
            .timeout_per_read(Some(step)),
    )
}

fn http_agent_with(config: ureq::config::ConfigBuilder<ureq::typestate::AgentScope>) -> ureq::Agent {
    let mut config = config.http_status_as_error(false);
    if let Some(roots) = system_roots() {
        config = config.tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build());
    }
    config.build().into()
}

/// The system's certificate authorities (`$SSL_CERT_FILE`, else the bundle where Linux
/// distributions, Alpine and macOS keep it), read once: an endpoint, proxy or package mirror
/// this machine trusts is trusted here too, as curl and pip trust it. Mozilla's roots, built
/// in, when there is no bundle.
fn system_roots() -> Option<ureq::tls::RootCerts> {
    static ROOTS: std::sync::OnceLock<Option<ureq::tls::RootCerts>> = std::sync::OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let named = std::env::var_os("SSL_CERT_FILE").filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
            let known = [
                "/etc/ssl/certs/ca-certificates.crt",
                "/etc/pki/tls/certs/ca-bundle.crt",
                "/etc/ssl/ca-bundle.pem",
                "/etc/ssl/cert.pem",
            ];
            let bundle = named
                .into_iter()
                .chain(known.iter().map(std::path::PathBuf::from))
                .find_map(|p| std::fs::read(p).ok())?;
            let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&bundle)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c.to_owned()),
                    _ => None,
                })
                .collect();
            (!certs.is_empty()).then(|| ureq::tls::RootCerts::new_with_certs(&certs))
        })
        .clone()
}

/// The first pause of a model a host or a client lends ([`Pausing`]), after it fails.
pub const LENT_MODEL_PAUSE: Duration = Duration::from_secs(120);

/// A model lent by a host or a client, paused after it fails: while paused it is not asked (an
/// [`LlmError::Absent`] answer at once), so an outage costs one timeout per pause and not one per
/// summary. The pause starts at `pause`, doubles with each failure in a row (up to 20 times) and
/// ends with the first answer ([`Breaker`]).
pub struct Pausing<M> {
    model: M,
    pause: Duration,
    breaker: Breaker,
}

impl<M: ChatModel> Pausing<M> {
    pub fn new(model: M, pause: Duration) -> Self {
        Pausing { model, pause, breaker: Breaker::default() }
    }
}

impl<M: ChatModel> ChatModel for Pausing<M> {
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let paused = self.breaker.cooling_ms();
        if paused > 0 {
            return Err(LlmError::Absent(format!(
                "{} is paused for {} s after a recent failure",
                self.model.label(),
                (paused + 999) / 1000
            )));
        }
        match self.model.complete(request) {
            Ok(text) => {
                self.breaker.succeeded();
                Ok(text)
            }
            Err(LlmError::Absent(why)) => Err(LlmError::Absent(why)),
            Err(e) => {
                self.breaker.failed(self.pause);
                Err(e)
            }
        }
    }

    fn label(&self) -> String {
        self.model.label()
    }
}

/// An OpenAI-compatible chat-completions client.
pub struct OpenAiChat {
    config: OpenAiConfig,
    agent: ureq::Agent,
    breaker: Breaker,
}

impl OpenAiChat {
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL must start with http:// or https://, got {:?}",
                config.base_url
            )));
        }
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("model name is empty".into()));
        }
        let agent = http_agent(config.timeout);
        Ok(OpenAiChat { config, agent, breaker: Breaker::default() })
    }
}

#[derive(Deserialize)]
struct CompletionResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}

impl ChatModel for OpenAiChat {
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let url = self.config.endpoint("chat/completions");
        let mut messages = Vec::new();
        if let Some(system) = &request.system {
            messages.push(serde_json::json!({"role": "system", "content": system}));
        }
        for m in &request.messages {
            messages.push(serde_json::json!({"role": m.role, "content": m.content}));
        }
        let mut body = serde_json::json!({"model": self.config.model, "messages": messages, "stream": false});
        if let Some(max) = request.max_tokens {
            body["max_tokens"] = max.into();
        }
        if let Some(t) = request.temperature {
            body["temperature"] = t.into();
        }
        let text = post_json_with_retry(&self.agent, &self.config, &self.breaker, &url, &body)?;
        let bad = |detail: String| LlmError::BadResponse { url: url.clone(), detail };
        let parsed: CompletionResponse =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a chat completion: {e}")))?;
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| bad("no choices[0].message.content".into()))?;
        if content.trim().is_empty() {
            return Err(bad("empty content".into()));
        }
        Ok(content)
    }

    fn label(&self) -> String {
        format!("openai:{}", self.config.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A lent model that answers each call with the next of `answers`, and counts the calls.
    struct Scripted(Mutex<Vec<Result<String, LlmError>>>, std::sync::atomic::AtomicU32);

    impl ChatModel for Scripted {
        fn complete(&self, _: &ChatRequest) -> Result<String, LlmError> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.0.lock().unwrap().remove(0)
        }
        fn label(&self) -> String {
            "scripted".into()
        }
    }

    fn lent(answers: Vec<Result<String, LlmError>>) -> Pausing<Scripted> {
        Pausing::new(Scripted(Mutex::new(answers), Default::default()), Duration::from_secs(60))
    }

    fn calls(p: &Pausing<Scripted>) -> u32 {
        p.model.1.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn a_lent_model_that_fails_is_left_alone_for_its_pause() {
        let ask = ChatRequest::simple("system", "user", 10);
        let model = lent(vec![Err(LlmError::Host("down".into())), Ok("never asked".into())]);
        assert!(matches!(model.complete(&ask), Err(LlmError::Host(_))));
        assert!(matches!(model.complete(&ask), Err(LlmError::Absent(why)) if why.contains("paused")));
        assert_eq!(calls(&model), 1, "the paused model is not asked");
    }

    #[test]
    fn no_model_to_ask_pauses_nothing_and_an_answer_is_passed_on() {
        let ask = ChatRequest::simple("system", "user", 10);
        let model = lent(vec![Err(LlmError::Absent("none lent".into())), Ok("a summary".into())]);
        assert!(matches!(model.complete(&ask), Err(LlmError::Absent(_))));
        assert_eq!(model.complete(&ask).unwrap(), "a summary");
        assert_eq!(calls(&model), 2);
    }
}
