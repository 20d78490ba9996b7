//! `memcc setup claude-code|codex`: MemCC into a host's own configuration — its MCP server at
//! user scope and its hooks — merged with what is there (other servers and hooks untouched, a
//! backup before any change, nothing written when nothing changes), and taken out again with
//! `--uninstall`. `memcc setup --check` says what is installed and whether each part answers.
//!
//! Where each host reads what:
//! - Claude Code: hooks in `settings.json` of its config dir (`$CLAUDE_CONFIG_DIR`, else
//!   `~/.claude`), the user-scope MCP server in `.claude.json` (in `$CLAUDE_CONFIG_DIR`, else
//!   the home directory);
//! - Codex: hooks in `hooks.json` and the MCP server in `config.toml`, both in `$CODEX_HOME`
//!   (else `~/.codex`). Codex runs a hook only after its user trusted it (`/hooks` in Codex).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::globals::Globals;
use crate::terminal::printable;
use memcc::hooks::{ANSWER_TIMEOUT_SECS, HookEvent, QUEUE_TIMEOUT_SECS};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Host {
    ClaudeCode,
    Codex,
}

impl Host {
    fn label(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::Codex => "Codex",
        }
    }

    /// The events MemCC hooks, each with the seconds the host gives it. Claude Code gives
    /// `SessionEnd` 1.5 s unless a hook asks for more; MemCC only queues there, but asks for
    /// room anyway. Codex caps its `SessionEnd` at 3 s (a longer timeout is warned about at
    /// every start), so it is asked for no more.
    fn events(self) -> &'static [(HookEvent, u64)] {
        match self {
            Host::ClaudeCode => &[
                (HookEvent::SessionStart, ANSWER_TIMEOUT_SECS),
                (HookEvent::UserPromptSubmit, ANSWER_TIMEOUT_SECS),
                (HookEvent::Stop, QUEUE_TIMEOUT_SECS),
                (HookEvent::SessionEnd, QUEUE_TIMEOUT_SECS),
                (HookEvent::PreCompact, QUEUE_TIMEOUT_SECS),
            ],
            Host::Codex => &[
                (HookEvent::SessionStart, ANSWER_TIMEOUT_SECS),
                (HookEvent::UserPromptSubmit, ANSWER_TIMEOUT_SECS),
                (HookEvent::Stop, QUEUE_TIMEOUT_SECS),
                (HookEvent::SessionEnd, CODEX_SESSION_END_SECS),
                (HookEvent::PreCompact, QUEUE_TIMEOUT_SECS),
            ],
        }
    }
}

/// The most Codex gives a `SessionEnd` hook (it caps it there since 0.145).
const CODEX_SESSION_END_SECS: u64 = 3;

#[derive(Args)]
pub struct SetupArgs {
    /// The host to set MemCC up in (with --check: only this one).
    #[arg(value_enum, required_unless_present = "check")]
    host: Option<Host>,
    /// Print what would change, change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Take MemCC out of the host's configuration (its other servers and hooks stay).
    #[arg(long, conflicts_with = "check")]
    uninstall: bool,
    /// Say what is installed in each host and whether each part answers (exit 1 when an
    /// installed part does not).
    #[arg(long)]
    check: bool,
}

/// One configuration file MemCC changes.
struct ConfigFile {
    path: PathBuf,
    /// What it holds now (`None`: it does not exist).
    before: Option<String>,
    /// What it should hold (`None`: it should not exist — MemCC made it, and uninstalling leaves
    /// nothing of anyone else's in it).
    after: Option<String>,
    /// The backup's bytes are what `after` gives back: it goes once they are in place.
    backup_done: bool,
}

impl ConfigFile {
    fn new(path: PathBuf, before: Option<String>, after: String) -> ConfigFile {
        ConfigFile { path, before, after: Some(after), backup_done: false }
    }

    /// Uninstalling: the bytes the user had before MemCC first touched the file (its backup),
    /// when nothing but MemCC's part changed since; no file at all when MemCC made it and
    /// nothing but MemCC's empty frame is left. `same` compares two texts as the host reads them,
    /// `empty` says a text holds nothing.
    fn give_back(mut self, same: fn(&str, &str) -> bool, empty: fn(&str) -> bool) -> ConfigFile {
        let Some(after) = self.after.clone() else { return self };
        match std::fs::read_to_string(self.backup()) {
            Ok(original) if same(&original, &after) => {
                self.after = Some(original);
                self.backup_done = true;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && empty(&after) => {
                // No backup: the file was not there before MemCC wrote it.
                let linked = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink());
                if !linked {
                    self.after = None;
                }
            }
            _ => {}
        }
        self
    }

    /// Its backup, beside the file a link points to.
    fn backup(&self) -> PathBuf {
        backup_path(&std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone()))
    }
}

/// The MCP revision `--check` opens with (the one `memcc mcp`'s SDK speaks); a server answers
/// with the revision it agrees on, and only its tool list is read.
const MCP_PROTOCOL_VERSION: &str = "2025-06-18";
/// How long `--check` waits for the MCP server's tool list: a cold server opens memory and the
/// model first (a few seconds on a slow disk); past this it hangs.
const MCP_CHECK_WAIT: Duration = Duration::from_secs(30);

/// Write or remove `f` as it says.
fn apply(f: &ConfigFile) -> Result<()> {
    match &f.after {
        Some(_) => write_with_backup(f),
        None => std::fs::remove_file(&f.path).with_context(|| format!("removing {}", f.path.display())),
    }
}

/// `f` as it was before [`apply`]: its old bytes, or no file.
fn put_back(f: &ConfigFile) -> Result<()> {
    apply(&ConfigFile { path: f.path.clone(), before: None, after: f.before.clone(), backup_done: false })
}

/// The largest settings file setup reads.
const MAX_CONFIG_BYTES: u64 = 256 << 20;

/// Where the bytes of `path` before MemCC first wrote it are kept.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".memcc-backup");
    path.with_file_name(name)
}

/// Two JSON texts that hold the same values.
fn same_json(a: &str, b: &str) -> bool {
    let parse = |t: &str| serde_json::from_str::<Value>(t).ok();
    parse(a).is_some() && parse(a) == parse(b)
}

/// A JSON text that holds nothing but empty objects and arrays.
fn empty_json(text: &str) -> bool {
    fn empty(v: &Value) -> bool {
        match v {
            Value::Object(o) => o.values().all(empty),
            Value::Array(a) => a.is_empty(),
            _ => false,
        }
    }
    serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object() && empty(&v))
}

/// Two TOML texts the same but for trailing blank space (`toml_edit` keeps the rest as it was).
fn same_toml(a: &str, b: &str) -> bool {
    a.trim_end() == b.trim_end()
}

/// A TOML text with no key in it (empty tables aside).
fn empty_toml(text: &str) -> bool {
    fn empty(t: &dyn toml_edit::TableLike) -> bool {
        t.iter().all(|(_, v)| v.as_table_like().is_some_and(empty))
    }
    text.parse::<toml_edit::DocumentMut>().is_ok_and(|d| empty(d.as_table()))
}

pub fn run(cli: &Globals, args: &SetupArgs) -> Result<()> {
    if args.check {
        return check(cli, args.host);
    }
    let Some(host) = args.host else { bail!("name a host: claude-code or codex") };
    let command = MemccCommand::of(cli)?;
    let files = match host {
        Host::ClaudeCode => claude_code_files(&command, args.uninstall)?,
        Host::Codex => codex_files(&command, args.uninstall)?,
    };
    let changed: Vec<&ConfigFile> =
        files.iter().filter(|f| f.before.as_deref() != f.after.as_deref() || f.backup_done).collect();
    if changed.is_empty() {
        println!("{}: nothing to change", host.label());
        return Ok(());
    }
    if args.dry_run {
        for f in &changed {
            match &f.after {
                Some(after) => println!("would write {}:\n{after}", f.path.display()),
                None => println!("would remove {} (MemCC made it)", f.path.display()),
            }
        }
        return Ok(());
    }
    // All of them or none: a file that cannot be written (a read-only home, a broken link) puts
    // back the ones written before it, so no host is left half set up.
    let had_backup: Vec<bool> = changed.iter().map(|f| f.backup().exists()).collect();
    for (i, f) in changed.iter().enumerate() {
        if let Err(e) = apply(f) {
            for (done, had) in changed[..=i].iter().zip(&had_backup).rev() {
                // The one that failed is as it was, but for a backup it may have made.
                if !std::ptr::eq(*done, *f)
                    && let Err(undo) = put_back(done)
                {
                    eprintln!("memcc: could not put {} back: {undo:#}", done.path.display());
                }
                if !had {
                    let _ = std::fs::remove_file(done.backup());
                }
            }
            return Err(e.context(format!("nothing changed for {}", host.label())));
        }
    }
    for f in &changed {
        match f.after {
            Some(_) => println!("wrote {}", f.path.display()),
            None => println!("removed {} (MemCC made it)", f.path.display()),
        }
    }
    if !args.dry_run && !args.uninstall {
        match host {
            Host::ClaudeCode => println!("Claude Code: start a new session; `memcc setup --check` tests each part."),
            Host::Codex => println!(
                "Codex runs a new hook only after you trust it: start `codex` and review MemCC's hooks with /hooks. \
                 `memcc setup --check` tests each part."
            ),
        }
    }
    Ok(())
}

/// How the host should run MemCC: this binary, by its full path (a host started from a desktop
/// may not have its PATH), with the data dir, settings and agent this command was given.
struct MemccCommand {
    exe: PathBuf,
    /// Global options, before the subcommand.
    globals: Vec<String>,
    agent: String,
    /// Environment the host should pass (a model dir named by the environment here).
    env: Vec<(String, String)>,
}

impl MemccCommand {
    fn of(cli: &Globals) -> Result<Self> {
        let exe = std::env::current_exe().context("finding the memcc binary")?;
        let exe = exe.canonicalize().unwrap_or(exe);
        let mut globals = Vec::new();
        // The data dir, when it is not the default one the host's environment would give.
        if cli.home.is_some() || std::env::var_os("MEMCC_HOME").is_some_and(|v| !v.is_empty()) {
            globals.push("--home".into());
            globals.push(std::path::absolute(cli.settings()?.data_dir())?.to_string_lossy().into_owned());
        }
        if let Some(config) = &cli.config {
            globals.push("--config".into());
            globals.push(std::path::absolute(config)?.to_string_lossy().into_owned());
        }
        let env = ["MEMCC_MODEL_DIR"]
            .iter()
            .filter_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()).map(|v| (k.to_string(), v)))
            .collect();
        Ok(MemccCommand { exe, globals, agent: cli.agent.clone(), env })
    }

    /// The shell command of a hook.
    fn hook(&self, event: HookEvent) -> String {
        let mut words: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
        words.push(shell_quote(&self.exe.to_string_lossy()));
        words.extend(self.globals.iter().map(|g| shell_quote(g)));
        words.extend(["--agent".to_string(), shell_quote(&self.agent), "hook".into(), event.host_name().into()]);
        words.join(" ")
    }

    /// The MCP server's arguments.
    fn mcp_args(&self) -> Vec<String> {
        let mut args = self.globals.clone();
        args.extend(["mcp".into(), "--agent".into(), self.agent.clone()]);
        args
    }
}

/// `s` as one word to a POSIX shell (both hosts run a hook's command with one); a path with a
/// NUL cannot be a path, and is left as it is.
fn shell_quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned())
}

/// Whether a hook's command is MemCC's: its program is the `memcc` binary (by that name: a
/// user's own `memcc-notify` is theirs) running a hook of an event (`… hook SessionStart`), or
/// the `import --hook` of earlier setups, which the hooks replace.
fn is_memcc_hook(command: &str) -> bool {
    let Some(words) = shlex::split(command) else { return false };
    // Environment assignments before the program.
    let Some(program) = words.iter().position(|w| !w.contains('=') || w.starts_with('/')) else { return false };
    let name = words[program].rsplit('/').next().unwrap_or_default();
    let rest = &words[program + 1..];
    let hook = rest.windows(2).any(|w| w[0] == "hook" && HookEvent::parse(&w[1]).is_some());
    let import = rest.iter().any(|w| w == "import") && rest.iter().any(|w| w == "--hook");
    name == "memcc" && (hook || import)
}

fn claude_dir() -> Result<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Ok(PathBuf::from(d)),
        None => Ok(home()?.join(".claude")),
    }
}

fn claude_json() -> Result<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Ok(PathBuf::from(d).join(".claude.json")),
        None => Ok(home()?.join(".claude.json")),
    }
}

fn codex_dir() -> Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(d) => Ok(PathBuf::from(d)),
        None => Ok(home()?.join(".codex")),
    }
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME").filter(|v| !v.is_empty()).map(PathBuf::from).context("HOME is not set")
}

fn read(path: &Path) -> Result<Option<String>> {
    // A FIFO or a device in a config file's place would hang setup (or never end): refused; so
    // is a file no host's settings grow to (~/.claude.json keeps every project's history: a few
    // MB), which would only be read into memory whole.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            bail!("{} is not a regular file: setup reads and writes only files", path.display());
        }
        if meta.len() > MAX_CONFIG_BYTES {
            bail!(
                "{} is {} MB, more than a host's settings file holds ({} MB): setup leaves it alone",
                path.display(),
                meta.len() >> 20,
                MAX_CONFIG_BYTES >> 20
            );
        }
    }
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// A JSON file's object (an empty one when the file is missing or blank); anything else is
/// refused untouched.
fn json_object(path: &Path, text: Option<&str>) -> Result<serde_json::Map<String, Value>> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(serde_json::Map::new()),
        Some(t) => match serde_json::from_str(t) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => bail!("{} is not a JSON object; fix it by hand (nothing written)", path.display()),
            Err(e) => bail!("{} is not valid JSON ({e}); fix it by hand (nothing written)", path.display()),
        },
    }
}

/// The hosts' `hooks` object with MemCC's hooks replaced by `wanted` (none: taken out), every
/// other hook kept in its place.
fn merge_hooks(hooks: &mut serde_json::Map<String, Value>, wanted: &[(HookEvent, String, u64)]) -> Result<()> {
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else { bail!("hooks.{event} is not a list; fix it by hand") };
        for group in groups.iter_mut() {
            if let Some(Value::Array(handlers)) = group.get_mut("hooks") {
                handlers.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(is_memcc_hook));
            }
        }
        // A group MemCC's hook was alone in goes with it.
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|h| !h.is_empty()));
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    for (event, command, timeout) in wanted {
        let groups = hooks.entry(event.host_name()).or_insert_with(|| json!([]));
        if let Value::Array(groups) = groups {
            groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]}));
        }
    }
    Ok(())
}

/// An empty `key` goes when this run added it or emptied it (an uninstall taking MemCC's
/// entries out): the file is given back as the user had it.
fn drop_if_added_empty(object: &mut serde_json::Map<String, Value>, key: &str, keep: bool) {
    if !keep && object.get(key).and_then(Value::as_object).is_some_and(serde_json::Map::is_empty) {
        object.shift_remove(key);
    }
}

fn pretty(value: &Value) -> Result<String> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

fn claude_code_files(command: &MemccCommand, uninstall: bool) -> Result<Vec<ConfigFile>> {
    let wanted: Vec<(HookEvent, String, u64)> = if uninstall {
        Vec::new()
    } else {
        Host::ClaudeCode.events().iter().map(|(e, t)| (*e, command.hook(*e), *t)).collect()
    };
    let settings_path = claude_dir()?.join("settings.json");
    let before = read(&settings_path)?;
    let mut settings = json_object(&settings_path, before.as_deref())?;
    let had_hooks = settings.contains_key("hooks");
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else { bail!("{}: hooks is not an object", settings_path.display()) };
    merge_hooks(hooks, &wanted)?;
    drop_if_added_empty(&mut settings, "hooks", had_hooks && !uninstall);
    let settings_file = ConfigFile::new(settings_path, before, pretty(&Value::Object(settings))?);

    let servers_path = claude_json()?;
    let before = read(&servers_path)?;
    let mut state = json_object(&servers_path, before.as_deref())?;
    let had_servers = state.contains_key("mcpServers");
    let servers = state.entry("mcpServers").or_insert_with(|| json!({}));
    let Value::Object(servers) = servers else { bail!("{}: mcpServers is not an object", servers_path.display()) };
    if uninstall {
        servers.shift_remove("memcc");
    } else {
        let env: serde_json::Map<String, Value> =
            command.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        servers.insert(
            "memcc".into(),
            json!({"type": "stdio", "command": command.exe, "args": command.mcp_args(), "env": env}),
        );
    }
    drop_if_added_empty(&mut state, "mcpServers", had_servers && !uninstall);
    let servers_file = ConfigFile::new(servers_path, before, pretty(&Value::Object(state))?);
    let files = vec![settings_file, servers_file];
    Ok(if uninstall { files.into_iter().map(|f| f.give_back(same_json, empty_json)).collect() } else { files })
}

fn codex_files(command: &MemccCommand, uninstall: bool) -> Result<Vec<ConfigFile>> {
    let dir = codex_dir()?;
    let wanted: Vec<(HookEvent, String, u64)> = if uninstall {
        Vec::new()
    } else {
        Host::Codex.events().iter().map(|(e, t)| (*e, command.hook(*e), *t)).collect()
    };
    let hooks_path = dir.join("hooks.json");
    let before = read(&hooks_path)?;
    let mut file = json_object(&hooks_path, before.as_deref())?;
    let hooks = file.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else { bail!("{}: hooks is not an object", hooks_path.display()) };
    merge_hooks(hooks, &wanted)?;
    let hooks_file = ConfigFile::new(hooks_path, before, pretty(&Value::Object(file))?);

    let config_path = dir.join("config.toml");
    let before = read(&config_path)?;
    let mut doc: toml_edit::DocumentMut =
        before.as_deref().unwrap_or_default().parse().with_context(|| {
            format!("{} is not valid TOML; fix it by hand (nothing written)", config_path.display())
        })?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        bail!("{}: mcp_servers is not a table", config_path.display())
    };
    if uninstall {
        servers.remove("memcc");
    } else {
        let mut server = toml_edit::Table::new();
        server["command"] = toml_edit::value(command.exe.to_string_lossy().into_owned());
        let mut args = toml_edit::Array::new();
        for a in command.mcp_args() {
            args.push(a);
        }
        server["args"] = toml_edit::value(args);
        if !command.env.is_empty() {
            let mut env = toml_edit::InlineTable::new();
            for (k, v) in &command.env {
                env.insert(k, v.as_str().into());
            }
            server["env"] = toml_edit::value(env);
        }
        servers.insert("memcc", toml_edit::Item::Table(server));
    }
    let config_file = ConfigFile::new(config_path, before, doc.to_string());
    Ok(if uninstall {
        vec![hooks_file.give_back(same_json, empty_json), config_file.give_back(same_toml, empty_toml)]
    } else {
        vec![hooks_file, config_file]
    })
}

/// Write `f` through a file beside it (renamed into place, so a host never reads half of it),
/// keeping the old contents as `<name>.memcc-backup` first. A config file that is a symlink
/// (dotfiles, home-manager) is written where it points, and stays a link. The backup is the
/// user's alone (a config may hold credentials) and is the first one MemCC made: a later setup
/// does not overwrite the bytes the user had before MemCC ever touched the file.
fn write_with_backup(f: &ConfigFile) -> Result<()> {
    let Some(after) = &f.after else { return Ok(()) };
    let path = match std::fs::symlink_metadata(&f.path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(&f.path).with_context(|| format!("following the link {}", f.path.display()))?
        }
        _ => f.path.clone(),
    };
    let dir = path.parent().context("a config file has a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if let Some(old) = &f.before
        && !f.backup_done
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(f.backup()) {
            Ok(mut backup) => std::io::Write::write_all(&mut backup, old.as_bytes())
                .with_context(|| format!("backing up {}", f.path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("backing up {}", f.path.display())),
        }
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, after.as_bytes())?;
    // Keep the file's permissions (~/.claude.json holds credentials: 600).
    if let Ok(meta) = std::fs::metadata(&path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(&path).with_context(|| format!("writing {}", f.path.display()))?;
    if f.backup_done {
        // The user's bytes are back in place: the copy has done its work.
        let _ = std::fs::remove_file(f.backup());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// --check

/// What one check found.
struct Finding {
    ok: bool,
    line: String,
}

fn check(cli: &Globals, only: Option<Host>) -> Result<()> {
    let mut failed = false;
    for host in [Host::ClaudeCode, Host::Codex] {
        if only.is_some_and(|h| h != host) {
            continue;
        }
        println!("{}", host.label());
        for f in check_host(host)? {
            failed |= !f.ok;
            println!("  {} {}", if f.ok { "ok  " } else { "FAIL" }, printable(&f.line));
        }
    }
    println!("MemCC");
    for f in check_memcc(cli)? {
        failed |= !f.ok;
        println!("  {} {}", if f.ok { "ok  " } else { "FAIL" }, printable(&f.line));
    }
    if failed {
        bail!("a part that is installed does not answer (see FAIL above)");
    }
    Ok(())
}

/// The hooks of `host` that are MemCC's: (event, command, timeout).
fn installed_hooks(path: &Path) -> Result<Vec<(String, String, Option<u64>)>> {
    let Some(text) = read(path)? else { return Ok(Vec::new()) };
    let file = json_object(path, Some(&text))?;
    let mut out = Vec::new();
    if let Some(Value::Object(hooks)) = file.get("hooks") {
        for (event, groups) in hooks {
            for group in groups.as_array().into_iter().flatten() {
                for h in group.get("hooks").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(c) = h.get("command").and_then(Value::as_str).filter(|c| is_memcc_hook(c)) {
                        out.push((event.clone(), c.to_string(), h.get("timeout").and_then(Value::as_u64)));
                    }
                }
            }
        }
    }
    Ok(out)
}

fn check_host(host: Host) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    let (hooks_path, server) = match host {
        Host::ClaudeCode => {
            let state = json_object(&claude_json()?, read(&claude_json()?)?.as_deref())?;
            let server = state.get("mcpServers").and_then(|s| s.get("memcc")).map(|s| {
                let command = s.get("command").and_then(Value::as_str).unwrap_or_default().to_string();
                let args: Vec<String> = s
                    .get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().map(String::from))
                    .collect();
                (command, args)
            });
            (claude_dir()?.join("settings.json"), server)
        }
        Host::Codex => {
            let path = codex_dir()?.join("config.toml");
            let doc: toml_edit::DocumentMut = read(&path)?.unwrap_or_default().parse().unwrap_or_default();
            let server = doc.get("mcp_servers").and_then(|s| s.get("memcc")).map(|s| {
                let command = s.get("command").and_then(|c| c.as_str()).unwrap_or_default().to_string();
                let args: Vec<String> = s
                    .get("args")
                    .and_then(|a| a.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().map(String::from))
                    .collect();
                (command, args)
            });
            (codex_dir()?.join("hooks.json"), server)
        }
    };
    match server {
        None => out.push(Finding { ok: true, line: "MCP server: not installed".into() }),
        Some((command, args)) => {
            let started = Instant::now();
            let answer = mcp_answers(&command, &args);
            out.push(match answer {
                Ok(tools) => Finding {
                    ok: true,
                    line: format!(
                        "MCP server: {command} {} — answers with {tools} tools ({:.1} s)",
                        args.join(" "),
                        started.elapsed().as_secs_f64()
                    ),
                },
                Err(e) => Finding { ok: false, line: format!("MCP server: {command} {} — {e:#}", args.join(" ")) },
            });
        }
    }
    let hooks = installed_hooks(&hooks_path)?;
    if hooks.is_empty() {
        out.push(Finding { ok: true, line: format!("hooks: none installed in {}", hooks_path.display()) });
        return Ok(out);
    }
    let names: Vec<String> =
        hooks.iter().map(|(e, _, t)| format!("{e} ({}s)", t.map_or("default".into(), |t| t.to_string()))).collect();
    out.push(Finding { ok: true, line: format!("hooks in {}: {}", hooks_path.display(), names.join(", ")) });
    if let Some((_, command, timeout)) = hooks.iter().find(|(e, _, _)| e == "SessionStart") {
        let started = Instant::now();
        // Hosts give a hook 60 s when its entry names no timeout.
        let limit = Duration::from_secs(timeout.unwrap_or(60));
        out.push(match hook_answers(command, limit) {
            Ok(said) => Finding {
                ok: true,
                line: format!("SessionStart hook answers ({said}, {:.1} s)", started.elapsed().as_secs_f64()),
            },
            Err(e) => Finding { ok: false, line: format!("SessionStart hook: {e:#}") },
        });
    }
    if host == Host::Codex {
        out.push(codex_trust(&hooks_path)?);
    }
    Ok(out)
}

/// Whether Codex will run MemCC's hooks: its `config.toml` records the hash of each hook its
/// user trusted (`[hooks.state."<file>:<event>:<group>:<handler>"]`). Codex asks again after a
/// hook changed; this only sees that a trust was recorded.
fn codex_trust(hooks_path: &Path) -> Result<Finding> {
    let config = read(&codex_dir()?.join("config.toml"))?.unwrap_or_default();
    let doc: toml_edit::DocumentMut = config.parse().unwrap_or_default();
    let states = doc.get("hooks").and_then(|h| h.get("state")).and_then(|s| s.as_table_like());
    let text = read(hooks_path)?.unwrap_or_default();
    let file = json_object(hooks_path, Some(&text))?;
    let mut ours = Vec::new();
    if let Some(Value::Object(hooks)) = file.get("hooks") {
        for (event, groups) in hooks {
            for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
                for (h, handler) in group.get("hooks").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    if handler.get("command").and_then(Value::as_str).is_some_and(is_memcc_hook) {
                        ours.push(format!("{}:{}:{g}:{h}", hooks_path.display(), snake(event)));
                    }
                }
            }
        }
    }
    let trusted = ours
        .iter()
        .filter(|key| {
            states.and_then(|s| s.get(key)).and_then(|s| s.get("trusted_hash")).is_some_and(|v| v.as_str().is_some())
        })
        .count();
    Ok(if trusted == ours.len() {
        Finding { ok: true, line: format!("trust: all {trusted} of MemCC's hooks trusted in Codex") }
    } else {
        // Not a failure of MemCC's: Codex waits for its user.
        Finding {
            ok: true,
            line: format!(
                "trust: {} of {} hooks wait for you to trust them: start `codex` and review them with /hooks",
                ours.len() - trusted,
                ours.len()
            ),
        }
    })
}

/// `SessionStart` → `session_start`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Start the MCP server as the host would and ask for its tools; how many it offers.
fn mcp_answers(command: &str, args: &[String]) -> Result<usize> {
    let mut child = Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {command}"))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    use std::io::Write;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": MCP_PROTOCOL_VERSION,
               "capabilities": {}, "clientInfo": {"name": "memcc-setup-check", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for r in &requests {
        writeln!(stdin, "{r}")?;
    }
    let deadline = Instant::now() + MCP_CHECK_WAIT;
    let mut tools = None;
    while tools.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else { break };
        if let Ok(v) = serde_json::from_str::<Value>(&line)
            && v.get("id") == Some(&json!(2))
        {
            tools = v.pointer("/result/tools").and_then(Value::as_array).map(Vec::len);
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    tools.context("no answer to tools/list within 30 s")
}

/// Run a `SessionStart` hook's command as its host does (a shell, the JSON on stdin, the
/// current directory as the session's) for a session of no consequence, for at most `limit` (the
/// time its host gives it); what it said.
fn hook_answers(command: &str, limit: Duration) -> Result<String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let cwd = std::env::current_dir()?;
    let payload = json!({"session_id": "memcc-setup-check", "transcript_path": null, "cwd": cwd,
                         "hook_event_name": "SessionStart", "source": "startup"});
    // A group of its own, so a hook that hangs is ended with whatever it started.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start sh")?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        // A hook that does not read its payload is no error here.
        let _ = writeln!(stdin, "{payload}");
    }
    // Read on threads: a hook that writes much must not stall on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            let _ = tx.send(bytes);
        });
        rx
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            // SAFETY: kill sends a signal, to the group this check started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            bail!(
                "no answer within {} s, the time its host gives it: the host goes on without MemCC's brief",
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What it started in the background may hold the pipes open: what came by now is its answer.
    let grace = Duration::from_secs(1);
    let out = std::process::Output {
        status,
        stdout: stdout.recv_timeout(grace).unwrap_or_default(),
        stderr: stderr.recv_timeout(grace).unwrap_or_default(),
    };
    // A hook never fails its host, so what went wrong is only on stderr.
    let said = String::from_utf8_lossy(&out.stderr);
    let problem = said.lines().find(|l| l.starts_with("memcc hook") || l.contains("error"));
    if !out.status.success() || problem.is_some() {
        bail!("exit {}: {}", out.status, problem.unwrap_or(said.trim()));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.trim().is_empty() {
        return Ok("nothing to say yet".into());
    }
    let v: Value = serde_json::from_str(stdout.trim()).context("its output is not the JSON hosts read")?;
    let context = v.pointer("/hookSpecificOutput/additionalContext").and_then(Value::as_str).unwrap_or_default();
    Ok(format!("{} tokens of context", memcc::core::estimate_tokens(context)))
}

fn check_memcc(cli: &Globals) -> Result<Vec<Finding>> {
    let settings = cli.settings()?;
    let mut out = vec![Finding { ok: true, line: format!("data in {}", settings.data_dir().display()) }];
    out.push(if settings.local_model_present() || !settings.wants_local_model() {
        Finding { ok: true, line: format!("embedding model in {}", settings.model_dir().display()) }
    } else {
        Finding { ok: false, line: "the local embedding model is missing: `memcc model fetch` installs it".into() }
    });
    let socket = crate::daemon_cmd::socket_path(cli)?;
    out.push(Finding {
        ok: true,
        line: if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
            format!("warm process: running ({})", socket.display())
        } else {
            "warm process: not running (the next hook starts it)".into()
        },
    });
    let memcc = cli.open(false)?;
    let jobs = memcc.context.store().transcript_jobs()?;
    let failing: Vec<_> = jobs.iter().filter(|j| j.attempts > 0).collect();
    out.push(Finding {
        ok: failing.iter().all(|j| j.attempts < memcc::context::PARK_TRANSCRIPT_AFTER),
        line: match failing.first() {
            None => format!("transcripts waiting for import: {}", jobs.len()),
            Some(j) => format!(
                "transcripts waiting for import: {} ({} failing; {} after {} tries: {})",
                jobs.len(),
                failing.len(),
                j.session_id,
                j.attempts,
                j.last_error.as_deref().unwrap_or_default()
            ),
        },
    });
    let log = settings.data_dir().join("run").join("hooks.log");
    if let Some(text) = read(&log)? {
        let last: Vec<&str> = text.lines().rev().take(3).collect();
        for l in last.into_iter().rev() {
            out.push(Finding { ok: true, line: format!("hook error logged: {l}") });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcc_s_hooks_are_told_from_others() {
        assert!(is_memcc_hook("/usr/local/bin/memcc --agent main hook SessionStart"));
        assert!(is_memcc_hook("'/home/a b/memcc' --home '/x y' --agent main hook Stop"));
        assert!(is_memcc_hook("MEMCC_MODEL_DIR=/m /usr/bin/memcc --agent claude hook UserPromptSubmit"));
        assert!(!is_memcc_hook("memcc-notify hook Stop"), "a user's own program named like it");
        assert!(!is_memcc_hook("/opt/bin/memccx --agent main hook Stop"));
        assert!(is_memcc_hook("memcc --agent claude import --hook --flush"), "an earlier setup's, replaced");
        assert!(!is_memcc_hook("python3 ~/.claude/hooks/lint.py"));
        assert!(!is_memcc_hook("echo memcc hook"));
        assert!(!is_memcc_hook("memcc grep hook"));
    }

    #[test]
    fn merging_keeps_other_hooks_and_replaces_memcc_s_once() {
        let mut hooks: serde_json::Map<String, Value> = serde_json::from_value(json!({
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "memcc --agent claude import --hook --flush"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
        }))
        .unwrap();
        let wanted = vec![
            (HookEvent::Stop, "/bin/memcc --agent main hook Stop".to_string(), 10),
            (HookEvent::SessionEnd, "/bin/memcc --agent main hook SessionEnd".to_string(), 10),
        ];
        merge_hooks(&mut hooks, &wanted).unwrap();
        let once = Value::Object(hooks.clone());
        merge_hooks(&mut hooks, &wanted).unwrap();
        assert_eq!(Value::Object(hooks.clone()), once, "idempotent");
        assert_eq!(hooks["Stop"].as_array().unwrap().len(), 2, "the user's Stop hook stays");
        assert_eq!(hooks["SessionEnd"].as_array().unwrap().len(), 1, "the old import --hook is replaced");
        assert_eq!(hooks["PreToolUse"][0]["matcher"], "Bash");
        merge_hooks(&mut hooks, &[]).unwrap();
        assert_eq!(
            Value::Object(hooks),
            json!({"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                   "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]})
        );
    }

    #[test]
    fn a_word_with_spaces_or_quotes_stays_one_word() {
        assert_eq!(shell_quote("/usr/bin/memcc"), "/usr/bin/memcc");
        assert_eq!(shell_quote("/home/a b/memcc"), "'/home/a b/memcc'");
        assert_eq!(shlex::split(&shell_quote("it's")).unwrap(), ["it's"]);
        assert_eq!(snake("UserPromptSubmit"), "user_prompt_submit");
    }
}
