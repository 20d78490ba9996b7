//! `memcc bench`: retrieval benchmarks and the optional QA evaluation.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::globals::Globals;
use memcc_bench::prompt::Scenario;
use memcc_bench::{Dataset, Mode, Options};

#[derive(Clone, Copy, ValueEnum)]
enum DatasetArg {
    Locomo,
    Longmemeval,
    /// RealMem persona files (`*_dialogues_256k.json`): PATH is one file or their directory.
    Realmem,
}

#[derive(Args)]
pub struct Common {
    /// Dataset format of PATH.
    #[arg(long, value_enum)]
    dataset: DatasetArg,
    /// The dataset file (or, for RealMem, a directory of persona files), e.g. ../shared/data/locomo/locomo7-dev.json.
    path: PathBuf,
    /// Token budget the full pipeline compacts and assembles against.
    #[arg(long, default_value_t = 8000)]
    budget: usize,
    /// Only the first N haystacks (LoCoMo conversations, LongMemEval questions).
    #[arg(long)]
    limit: Option<usize>,
    /// Tell MemCC each session's project, as a host that knows it does (RealMem: the project of
    /// each session's identifier). Not the upstream protocol: the report says so.
    #[arg(long)]
    projects: bool,
    /// Write the report (JSON) here, and a Markdown copy beside it.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Which session ranker a retrieval or prompt run uses.
#[derive(Args)]
pub struct Ranker {
    /// Rank each haystack's sessions with models fit on the other haystacks' features (the
    /// file `bench ranker --features` writes, with --projects when this run has it), not the
    /// shipped ones: the learned ranker's figures on data it was not fit on.
    #[arg(long)]
    ranker_folds: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Retrieval recall (recall_all / recall_any / NDCG at k = 1, 3, 5, 10), every mode on the same data.
    Retrieval {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        ranker: Ranker,
        /// Comma-separated: bm25, dense, hybrid, full, full-rerank (needs --llm-base-url); full-bm25,
        /// full-dense: the full pipeline's records searched by one retriever (with full, the report
        /// adds the best of the three per question).
        #[arg(long, default_value = "bm25,dense,hybrid,full")]
        modes: String,
        /// One JSON line per question and mode.
        #[arg(long)]
        per_question: Option<PathBuf>,
        /// The chat model full-rerank asks.
        #[arg(long, default_value = "gpt-4o-mini")]
        rerank_model: String,
        /// Comma-separated question ids (e.g. conv-26#14) whose top hits the report lists: kind,
        /// score, the turns each hit is traced to, and its text.
        #[arg(long, default_value = "")]
        explain: String,
    },
    /// Speed: ingest throughput, assemble / grep / retrieve p50 and p99 at growing sizes, vector scan vs brute force.
    Speed {
        /// Comma-separated sizes (messages, and records).
        #[arg(long, default_value = "1000,10000,100000")]
        sizes: String,
        /// Comma-separated sizes of an imported session compacted in one call (messages).
        #[arg(long, default_value = "10000,100000,200000")]
        bulk_sizes: String,
        /// Timed calls per operation and size (p50 / p99 over them).
        #[arg(long, default_value_t = 100)]
        samples: usize,
        /// Write the report (JSON) here, and a Markdown copy beside it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The prompt hook as Claude Code and Codex wait for it: `memcc hook UserPromptSubmit` timed
    /// as a process, answered by the warm daemon and by a cold process, at growing store sizes,
    /// beside the bare start of the binary.
    Hook {
        /// Comma-separated sizes (records).
        #[arg(long, default_value = "1000,10000,100000")]
        sizes: String,
        /// Prompts timed per size (the cold path: at most 10).
        #[arg(long, default_value_t = 60)]
        samples: usize,
        /// Write the report (JSON) here, and a Markdown copy beside it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The memory backends side by side: ingest records/s and retrieve / memory_search p50 and p99
    /// on SQLite and PostgreSQL + pgvector, same records and queries.
    Backends {
        /// Comma-separated sizes (records).
        #[arg(long, default_value = "10000,100000")]
        sizes: String,
        /// Timed calls per operation and size (p50 / p99 over them).
        #[arg(long, default_value_t = 100)]
        samples: usize,
        /// A PostgreSQL server with pgvector where a scratch database may be created (else $MEMCC_PG_URL).
        #[arg(long)]
        postgres_url: Option<String>,
        /// Write the report (JSON) here, and a Markdown copy beside it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Answer in prompt (LLM-free): does MemCC's assembled prompt contain the gold answer, beside
    /// same-size baselines (recency, BM25 turns, BM25 sessions), new-session and long-session.
    Prompt {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        ranker: Ranker,
        /// Comma-separated memory sizes in tokens (what recall may use).
        #[arg(long, default_value = "1000,2000,4000,8000,16000")]
        sizes: String,
        /// Comma-separated: new-session, long-session, hook (what a Claude Code / Codex prompt hook adds), hook-unfloored (the same without the relevance floor).
        #[arg(long, default_value = "new-session,long-session")]
        scenarios: String,
        /// One JSON line per question, scenario and size.
        #[arg(long)]
        per_question: Option<PathBuf>,
        /// Put MemCC's prompt text into the per-question lines.
        #[arg(long)]
        prompts: bool,
    },
    /// Fit the session ranker's model on a dataset (leave-one-haystack-out figures, then one fit
    /// on all of it): `--out` gets the report, `--weights` the model MemCC ships
    /// (crates/memcc-memory/src/rank/sessions.json; with --projects, sessions-project.json).
    Ranker {
        #[command(flatten)]
        common: Common,
        /// Write the fitted model here.
        #[arg(long)]
        weights: Option<PathBuf>,
        /// The questions' sessions and features: read from this file when it exists, else
        /// collected by replaying the dataset and written to it (a re-fit need not replay).
        #[arg(long)]
        features: Option<PathBuf>,
        /// Comma-separated features left out of the fit (an ablation; what ships reads them all).
        #[arg(long, default_value = "")]
        without: String,
    },
    /// QA accuracy: answer from the assembled prompt, grade with a judge model (needs --llm-base-url).
    Qa {
        #[command(flatten)]
        common: Common,
        /// The chat model that answers from the prompt.
        #[arg(long, default_value = "gpt-4o-mini")]
        model: String,
        /// The chat model that grades each answer against the gold one.
        #[arg(long, default_value = "gpt-4o")]
        judge: String,
    },
}

/// Print the report (JSON with `--json`, else Markdown) and write both beside `out`.
fn emit_report<T: serde::Serialize>(cli: &Globals, report: &T, md: &str, out: Option<&PathBuf>) -> Result<()> {
    if cli.json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        println!("{md}");
    }
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_string_pretty(report)?)
            .with_context(|| format!("writing {}", out.display()))?;
        std::fs::write(out.with_extension("md"), md)?;
    }
    Ok(())
}

fn progress_bar() -> ProgressBar {
    ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{msg:28} {bar:40} {pos}/{len} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    )
}

/// The bench options: every setting of `--config` and the flags, as the other commands use them.
fn options(cli: &Globals, common: &Common, modes: Vec<Mode>) -> Result<Options> {
    options_ranked(cli, common, modes, &Ranker { ranker_folds: None })
}

/// [`options`] with the session ranker `ranker` says.
fn options_ranked(cli: &Globals, common: &Common, modes: Vec<Mode>, ranker: &Ranker) -> Result<Options> {
    let mut settings = cli.settings()?;
    settings.model_dir = Some(settings.model_dir());
    settings.llm_base_url = settings.endpoint();
    Ok(Options {
        dataset: match common.dataset {
            DatasetArg::Locomo => Dataset::Locomo,
            DatasetArg::Longmemeval => Dataset::Longmemeval,
            DatasetArg::Realmem => Dataset::Realmem,
        },
        modes,
        settings,
        budget: common.budget,
        limit: common.limit,
        projects: common.projects,
        explain: Vec::new(),
        ranker_folds: match &ranker.ranker_folds {
            Some(p) => {
                let personas: Vec<memcc_bench::ranker::Persona> =
                    serde_json::from_slice(&std::fs::read(p).with_context(|| format!("reading {}", p.display()))?)
                        .with_context(|| format!("{} holds no features of `bench ranker`", p.display()))?;
                memcc_bench::ranker::fold_models(&personas, common.projects)
            }
            None => std::collections::HashMap::new(),
        },
        ranker: match &ranker.ranker_folds {
            Some(p) => format!("leave one haystack out, fit on the features in {}", p.display()),
            None => "shipped".into(),
        },
    })
}

fn list<T>(text: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
    let items = text
        .split(',')
        .map(|x| parse(x.trim()).with_context(|| format!("{x:?} is not a {what}")))
        .collect::<Result<Vec<_>>>()?;
    if items.is_empty() {
        bail!("no {what} given");
    }
    Ok(items)
}

fn write_lines<T: serde::Serialize>(path: &PathBuf, lines: &[T]) -> Result<()> {
    let mut f =
        std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?);
    for l in lines {
        writeln!(f, "{}", serde_json::to_string(l)?)?;
    }
    Ok(())
}

pub fn run(cli: &Globals, command: &BenchCommand) -> Result<()> {
    let bar = progress_bar();
    let mut tick = |done: usize, total: usize, label: &str| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(label.to_string());
    };
    match command {
        BenchCommand::Retrieval { common, ranker, modes, per_question, rerank_model, explain } => {
            let modes =
                list(modes, "mode (bm25, dense, hybrid, full, full-rerank, full-bm25, full-dense)", Mode::parse)?;
            let mut opts = options_ranked(cli, common, modes, ranker)?;
            opts.settings.rerank_model = Some(rerank_model.clone());
            opts.explain = explain.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
            let report = memcc_bench::run(&common.path, &opts, &mut tick)?;
            bar.finish_and_clear();
            let md = memcc_bench::markdown(&report);
            emit_report(cli, &report, &md, common.out.as_ref())?;
            if let Some(p) = per_question {
                write_lines(p, &report.per_question)?;
            }
        }
        BenchCommand::Prompt { common, ranker, sizes, scenarios, per_question, prompts } => {
            let sizes = list(sizes, "memory size", |s| s.parse::<usize>().ok().filter(|&n| n > 0))?;
            let scenarios =
                list(scenarios, "scenario (new-session, long-session, hook, hook-unfloored)", Scenario::parse)?;
            let opts = options_ranked(cli, common, Vec::new(), ranker)?;
            let report = memcc_bench::prompt::run(&common.path, &opts, &sizes, &scenarios, *prompts, &mut tick)?;
            bar.finish_and_clear();
            let md = memcc_bench::prompt::markdown(&report);
            emit_report(cli, &report, &md, common.out.as_ref())?;
            if let Some(p) = per_question {
                write_lines(p, &report.per_question)?;
            }
        }
        BenchCommand::Speed { sizes, bulk_sizes, samples, out } => {
            let sizes = list(sizes, "size (at least 10)", |s| s.parse::<usize>().ok().filter(|&n| n >= 10))?;
            let bulk_sizes = list(bulk_sizes, "size (at least 10)", |s| s.parse::<usize>().ok().filter(|&n| n >= 10))?;
            let embedder = cli.embedder()?;
            let report = memcc_bench::speed::run(embedder, &sizes, &bulk_sizes, (*samples).max(1), &mut |stage| {
                bar.set_message(stage.to_string())
            })?;
            bar.finish_and_clear();
            let md = memcc_bench::speed::markdown(&report);
            emit_report(cli, &report, &md, out.as_ref())?;
        }
        BenchCommand::Hook { sizes, samples, out } => {
            let sizes = list(sizes, "size (at least 10)", |s| s.parse::<usize>().ok().filter(|&n| n >= 10))?;
            let settings = cli.settings()?;
            if !settings.local_model_present() {
                bail!("bench hook times the local model: `memcc model fetch` installs it");
            }
            let exe = std::env::current_exe()?;
            let report =
                memcc_bench::hook::run(&exe, &settings.model_dir(), &sizes, (*samples).max(1), &mut |stage| {
                    bar.set_message(stage.to_string())
                })?;
            bar.finish_and_clear();
            let md = memcc_bench::hook::markdown(&report);
            emit_report(cli, &report, &md, out.as_ref())?;
        }
        BenchCommand::Backends { sizes, samples, postgres_url, out } => {
            let sizes = list(sizes, "size (at least 10)", |s| s.parse::<usize>().ok().filter(|&n| n >= 10))?;
            let url = postgres_url.clone().or_else(|| std::env::var(memcc::memory::PG_URL_ENV).ok()).context(
                "bench backends needs --postgres-url or $MEMCC_PG_URL (scripts/pg-server.sh starts a server)",
            )?;
            let embedder = cli.embedder()?;
            let report = memcc_bench::backends::run(embedder, &sizes, (*samples).max(1), &url, &mut |stage| {
                bar.set_message(stage.to_string())
            })?;
            bar.finish_and_clear();
            let md = memcc_bench::backends::markdown(&report);
            emit_report(cli, &report, &md, out.as_ref())?;
        }
        BenchCommand::Ranker { common, weights, features, without } => {
            let opts = options(cli, common, Vec::new())?;
            let personas = match features.as_ref().filter(|p| p.exists()) {
                Some(p) => {
                    serde_json::from_slice(&std::fs::read(p).with_context(|| format!("reading {}", p.display()))?)
                        .with_context(|| format!("{} holds no features of `bench ranker`", p.display()))?
                }
                None => {
                    let personas = memcc_bench::ranker::collect(&common.path, &opts, &mut tick)?;
                    if let Some(p) = features {
                        std::fs::write(p, serde_json::to_vec(&personas)?)
                            .with_context(|| format!("writing {}", p.display()))?;
                    }
                    personas
                }
            };
            bar.finish_and_clear();
            let dataset = format!("{:?} at {}", opts.dataset, common.path.display()).to_lowercase();
            let without: Vec<String> =
                without.split(',').map(str::trim).filter(|f| !f.is_empty()).map(String::from).collect();
            let report = memcc_bench::ranker::train(&personas, &dataset, common.projects, &without);
            let md = memcc_bench::ranker::markdown(&report);
            emit_report(cli, &report, &md, common.out.as_ref())?;
            if let Some(w) = weights {
                std::fs::write(w, serde_json::to_string_pretty(&report.model)? + "\n")
                    .with_context(|| format!("writing {}", w.display()))?;
            }
        }
        BenchCommand::Qa { common, model, judge } => {
            let opts = options(cli, common, vec![Mode::Full])?;
            let report = memcc_bench::qa::run_qa(&common.path, &opts, model, judge, &mut tick)?;
            bar.finish_and_clear();
            let mut md = format!(
                "QA accuracy — answer model {}, judge {}: {:.3} ({} of {}; {} failed requests counted wrong)\n",
                report.model,
                report.judge_model,
                report.overall.accuracy,
                report.overall.correct,
                report.overall.questions,
                report.failures
            );
            if let Some(main) = &report.overall_secondary {
                md.push_str(&format!(
                    "categories 1–4: {:.3} ({} of {}); ",
                    main.accuracy, main.correct, main.questions
                ));
            }
            md.push_str(&format!(
                "mean prompt {:.0} tokens; {} judge replies without a verdict (counted wrong)\n\n| type | n | accuracy | prompt tokens |\n|---|---|---|---|\n",
                report.overall.mean_prompt_tokens, report.unparsed_verdicts
            ));
            for (c, a) in &report.by_category {
                md.push_str(&format!("| {c} | {} | {:.3} | {:.0} |\n", a.questions, a.accuracy, a.mean_prompt_tokens));
            }
            emit_report(cli, &report, &md, common.out.as_ref())?;
        }
    }
    Ok(())
}
