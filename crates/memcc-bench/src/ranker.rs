//! `memcc bench ranker`: fit the session ranker's logistic models ([`memcc::lab::memory::rank`])
//! on a dataset's questions, leave-one-haystack-out, and write the weights MemCC ships with the
//! report of how they were fit and what they scored.
//!
//! Every question is asked as `bench retrieval --modes full` asks it (its recall query, its
//! conversation's turns before it, its session, when) and the features of every session the
//! ranker ranks are read from MemCC's own search, so the model is fit on exactly what it will
//! be given. A session is relevant when it is one of the question's gold sessions.
//!
//! The fit is logistic regression with an L2 penalty (Newton's method; its strength chosen by
//! an inner leave-one-haystack-out), unweighted, so its outputs stay probabilities (the recall
//! gate reads them). Scored: each held-out haystack by a model fit on the others (session
//! R_all@5/10/20, its mean over haystacks), beside the same rows ranked by one feature alone
//! (BM25 over the question; the expanded query's BM25): same questions, same sessions.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::haystack::{HQuestion, Haystack};
use crate::pipeline::{Provenance, open, replay, session_id};
use crate::{BenchError, Options, load};
use memcc::Memcc;
use memcc::lab::context::SessionRef;
use memcc::lab::context::message::AgentMessage;
use memcc::lab::memory::SearchMode;
use memcc::lab::memory::rank::model::{Logistic, Models};
use memcc::lab::memory::rank::{FEATURES, PROJECT_FEATURES};

/// The penalties tried (sklearn's `C`: the inverse of the L2 strength, per row).
const PENALTIES: &[f64] = &[0.01, 0.1, 1.0];

/// One question's candidate sessions: their feature rows and whether each is gold.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Group {
    pub question: String,
    /// The sessions ranked (the dataset's units), in the rows' order.
    #[serde(default)]
    pub sessions: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub gold: Vec<bool>,
    /// Gold sessions the ranker had no row for (not in the index): they count as misses.
    pub unranked_gold: usize,
}

/// A haystack's groups.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Persona {
    pub id: String,
    pub groups: Vec<Group>,
}

/// What a model scored on held-out haystacks.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub name: String,
    /// Mean over haystacks of session R_all@5 / @10 / @20.
    pub recall_all: [f64; 3],
    pub per_haystack: Vec<(String, [f64; 3])>,
}

/// The report `memcc bench ranker` writes beside the weights.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub dataset: String,
    pub projects: bool,
    pub questions: usize,
    pub rows: usize,
    pub features: Vec<String>,
    pub penalty_per_fold: Vec<(String, f64)>,
    pub leave_one_out: Scored,
    pub baselines: Vec<Scored>,
    /// Of the final model on its own data: mean predicted probability and share relevant, by
    /// tenth of the predictions.
    pub calibration: Vec<(f64, f64, usize)>,
    pub model: Logistic,
}

/// Replay every haystack and read each question's sessions and features.
pub fn collect(
    path: &Path,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Vec<Persona>, BenchError> {
    let mut issues = Vec::new();
    let haystacks = load(options, path, &mut issues)?;
    let embedder: Arc<dyn memcc::lab::memory::embed::Embedder> = Memcc::embedder(&options.settings, &mut Vec::new())?;
    let mut out = Vec::new();
    for (i, h) in haystacks.iter().enumerate() {
        progress(i, haystacks.len(), &h.id);
        let dir = tempfile::tempdir()?;
        let memcc = open(options, dir.path(), &embedder, false)?;
        let mut ids: Provenance = HashMap::new();
        let units: HashMap<String, String> =
            (0..h.sessions.len()).map(|si| (session_id(h, si), h.sessions[si].unit.clone())).collect();
        let mut groups = Vec::new();
        let mut asked = |m: &Memcc, q: &HQuestion, _: &Provenance| -> Result<(), BenchError> {
            if q.abstention || q.gold_sessions.is_empty() {
                return Ok(());
            }
            groups.push(group(m, h, q, options, &units)?);
            Ok(())
        };
        replay(&memcc, h, options.budget, &mut ids, &mut asked)?;
        out.push(Persona { id: h.id.clone(), groups });
    }
    progress(haystacks.len(), haystacks.len(), "done");
    Ok(out)
}

/// One question asked as the retrieval bench's full pipeline asks it.
fn group(
    memcc: &Memcc,
    h: &Haystack,
    q: &HQuestion,
    options: &Options,
    units: &HashMap<String, String>,
) -> Result<Group, BenchError> {
    let at = q.asked_at;
    let (text, context) = match at {
        Some(at) => {
            let sref = SessionRef::new(&session_id(h, at.session));
            let query = memcc.context.recall_query(&sref, q.as_of, &[AgentMessage::user(&q.text)])?;
            (query.text, query.context)
        }
        None => (q.text.clone(), Vec::new()),
    };
    let session = at.map(|a| session_id(h, a.session));
    let project = at.and_then(|a| h.sessions.get(a.session)).and_then(|s| s.project.as_deref());
    let asking = memcc::lab::memory::Asking {
        context: &context,
        session: session.as_deref(),
        as_of: q.as_of,
        project: if options.projects { project } else { None },
        ..Default::default()
    };
    let rt = memcc.memory()?;
    let (_, sessions) =
        rt.search_explained(&options.settings.context.agent_id, &text, &asking, 30, SearchMode::Hybrid)?;
    let mut seen = Vec::new();
    let mut rows = Vec::new();
    let mut gold = Vec::new();
    for s in sessions {
        let Some(unit) = units.get(&s.info.session_id) else { continue };
        seen.push(unit.clone());
        gold.push(q.gold_sessions.contains(unit));
        rows.push(s.features);
    }
    let unranked_gold = q.gold_sessions.iter().filter(|g| !seen.contains(g)).count();
    Ok(Group { question: q.id.clone(), sessions: seen, rows, gold, unranked_gold })
}

/// The names of the features a model reads: every feature, or those a host without projects has.
pub fn feature_set(projects: bool) -> Vec<String> {
    FEATURES.iter().filter(|f| projects || !PROJECT_FEATURES.contains(f)).map(|f| f.to_string()).collect()
}

/// Session R_all@5, @10, @20 of `groups` ranked by `score`.
fn recall_all(groups: &[Group], score: &dyn Fn(&[f64]) -> f64) -> [f64; 3] {
    let mut hits = [0.0; 3];
    for g in groups {
        let mut order: Vec<(f64, bool)> = g.rows.iter().zip(&g.gold).map(|(r, &y)| (score(r), y)).collect();
        // Ties keep the index's order (newest first).
        order.sort_by(|a, b| b.0.total_cmp(&a.0));
        let golds = g.gold.iter().filter(|y| **y).count();
        for (k, cut) in [5, 10, 20].into_iter().enumerate() {
            let found = order.iter().take(cut).filter(|(_, y)| *y).count();
            if g.unranked_gold == 0 && golds > 0 && found == golds {
                hits[k] += 1.0;
            }
        }
    }
    let n = groups.len().max(1) as f64;
    hits.map(|h| h / n)
}

/// How a row is scored.
type Scorer = Box<dyn Fn(&[f64]) -> f64>;

/// `personas` each scored by `score_for(held-out index)`, and their mean.
fn scored_by(name: &str, personas: &[Persona], score_for: &dyn Fn(usize) -> Scorer) -> Scored {
    let per: Vec<(String, [f64; 3])> =
        personas.iter().enumerate().map(|(i, p)| (p.id.clone(), recall_all(&p.groups, &*score_for(i)))).collect();
    let n = per.len().max(1) as f64;
    let mut mean = [0.0; 3];
    for (_, r) in &per {
        for k in 0..3 {
            mean[k] += r[k] / n;
        }
    }
    Scored { name: name.into(), recall_all: mean, per_haystack: per }
}

/// The rows of `personas` (all but `except`), as the model's inputs, with their labels.
fn training_rows(personas: &[Persona], except: &[usize], names: &[String]) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (i, p) in personas.iter().enumerate() {
        if except.contains(&i) {
            continue;
        }
        for g in &p.groups {
            for (row, &gold) in g.rows.iter().zip(&g.gold) {
                x.push(Logistic::inputs(&memcc::lab::memory::rank::pick(names, row)));
                y.push(f64::from(u8::from(gold)));
            }
        }
    }
    (x, y)
}

/// Fit a logistic model on the personas but `except`, with penalty `c`.
fn fit_without(personas: &[Persona], except: &[usize], names: &[String], c: f64) -> Logistic {
    let (x, y) = training_rows(personas, except, names);
    fit(&x, &y, names, c)
}

/// The penalty whose inner leave-one-out (over the personas but `except`) ranks best at 10.
fn choose_penalty(personas: &[Persona], except: usize, names: &[String]) -> f64 {
    let inner: Vec<usize> = (0..personas.len()).filter(|&i| i != except).collect();
    let mut best = (f64::MIN, PENALTIES[0]);
    for &c in PENALTIES {
        let mut total = 0.0;
        for &v in &inner {
            let m = fit_without(personas, &[except, v], names, c);
            total += recall_all(&personas[v].groups, &|r| m.log_odds(&memcc::lab::memory::rank::pick(names, r)))[1];
        }
        if total > best.0 {
            best = (total, c);
        }
    }
    best.1
}

/// Leave-one-persona-out figures, baselines, and the final model fit on every persona, over the
/// features of [`feature_set`] but `without` (an experiment's ablation).
pub fn train(personas: &[Persona], dataset: &str, projects: bool, without: &[String]) -> Report {
    let names: Vec<String> = feature_set(projects).into_iter().filter(|f| !without.contains(f)).collect();
    let mut penalty_per_fold = Vec::new();
    let mut models = Vec::new();
    for (i, p) in personas.iter().enumerate() {
        let c = choose_penalty(personas, i, &names);
        penalty_per_fold.push((p.id.clone(), c));
        models.push(fit_without(personas, &[i], &names, c));
    }
    let leave_one_out = scored_by("learned ranker, leave one out", personas, &|i| {
        let (m, names) = (models[i].clone(), names.clone());
        Box::new(move |r: &[f64]| m.log_odds(&memcc::lab::memory::rank::pick(&names, r)))
    });
    let column = |f: &str| FEATURES.iter().position(|n| *n == f).unwrap_or(0);
    let baselines = [
        ("BM25 over whole sessions, the question alone", "bm25_norm"),
        ("BM25, question + context + feedback", "crm3"),
    ]
    .into_iter()
    .map(|(name, f)| {
        let c = column(f);
        scored_by(name, personas, &|_| Box::new(move |r: &[f64]| r[c]))
    })
    .collect();
    // The final model: the penalty most folds chose, fit on everything.
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for (_, c) in &penalty_per_fold {
        *counts.entry(c.to_bits()).or_default() += 1;
    }
    let c = counts.into_iter().max_by_key(|(bits, n)| (*n, *bits)).map_or(1.0, |(bits, _)| f64::from_bits(bits));
    let mut model = fit_without(personas, &[], &names, c);
    let (x, y) = training_rows(personas, &[], &names);
    let calibration = calibration(&model, &x, &y);
    let questions = personas.iter().map(|p| p.groups.len()).sum();
    // A few rows with the probability the fit gives them: a test scores them with the shipped
    // file and must agree (the weights score as the report says).
    let examples: Vec<(Vec<f64>, f64)> = personas
        .iter()
        .filter_map(|p| p.groups.first())
        .flat_map(|g| g.rows.iter().take(2))
        .map(|row| (row.clone(), model.probability(&memcc::lab::memory::rank::pick(&names, row))))
        .collect();
    model.fit = serde_json::json!({
        "by": "memcc bench ranker",
        "on": format!("{dataset}: {} haystacks, {questions} questions, {} rows", personas.len(), y.len()),
        "haystacks": personas.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
        "projects": projects,
        "penalty": c,
        "leave_one_out_recall_all_at_10": leave_one_out.recall_all[1],
        "features_of_examples": FEATURES,
        "examples": examples,
    });
    Report {
        dataset: dataset.into(),
        projects,
        questions,
        rows: y.len(),
        features: names,
        penalty_per_fold,
        leave_one_out,
        baselines,
        calibration,
        model,
    }
}

/// For each persona, models fit without it: the plain one from `plain`'s features, the project one
/// from `project`'s (each penalty chosen by an inner leave-one-out), the other kind the shipped.
pub fn fold_models(personas: &[Persona], projects: bool) -> HashMap<String, Arc<Models>> {
    let names = feature_set(projects);
    let Some(shipped) = memcc::lab::memory::rank::model::SHIPPED.clone() else { return HashMap::new() };
    personas
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = choose_penalty(personas, i, &names);
            let fit = fit_without(personas, &[i], &names, c);
            let mut models = (*shipped).clone();
            if projects {
                models.project = fit;
            } else {
                models.plain = fit;
            }
            (p.id.clone(), Arc::new(models))
        })
        .collect()
}

/// Mean prediction and share relevant per tenth of the rows ordered by prediction.
fn calibration(model: &Logistic, x: &[Vec<f64>], y: &[f64]) -> Vec<(f64, f64, usize)> {
    let mut p: Vec<(f64, f64)> = x.iter().zip(y).map(|(x, y)| (model.probability_of_inputs(x), *y)).collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = p.len();
    (0..10)
        .filter_map(|k| {
            let part = &p[k * n / 10..(k + 1) * n / 10];
            (!part.is_empty()).then(|| {
                let m = part.len() as f64;
                (part.iter().map(|r| r.0).sum::<f64>() / m, part.iter().map(|r| r.1).sum::<f64>() / m, part.len())
            })
        })
        .collect()
}

/// Logistic regression with an L2 penalty of strength `1 / c` on the weights (not the
/// intercept), inputs standardised first; Newton's method to convergence. (Forty-odd inputs and
/// a hundred thousand rows: a few exact Newton steps, where a general solver crate would bring a
/// tree of dependencies for the same answer.)
#[allow(clippy::needless_range_loop)] // the Hessian's triangle, indexed as the algebra writes it
pub fn fit(x: &[Vec<f64>], y: &[f64], names: &[String], c: f64) -> Logistic {
    let d = x.first().map_or(0, Vec::len);
    let n = x.len().max(1) as f64;
    let mut mean = vec![0.0; d];
    let mut scale = vec![0.0; d];
    for row in x {
        for j in 0..d {
            mean[j] += row[j] / n;
        }
    }
    for row in x {
        for j in 0..d {
            scale[j] += (row[j] - mean[j]).powi(2) / n;
        }
    }
    let scale: Vec<f64> = scale.into_iter().map(|v| if v.sqrt() > 1e-12 { v.sqrt() } else { 1.0 }).collect();
    let z: Vec<Vec<f64>> = x
        .iter()
        .map(|row| std::iter::once(1.0).chain((0..d).map(|j| (row[j] - mean[j]) / scale[j])).collect())
        .collect();
    let k = d + 1;
    let mut w = vec![0.0; k];
    for _ in 0..50 {
        let mut grad = vec![0.0; k];
        let mut hess = vec![vec![0.0; k]; k];
        for (row, &label) in z.iter().zip(y) {
            let t: f64 = row.iter().zip(&w).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-t).exp());
            let r = p * (1.0 - p);
            for a in 0..k {
                grad[a] += (p - label) * row[a];
                let ra = r * row[a];
                for b in a..k {
                    hess[a][b] += ra * row[b];
                }
            }
        }
        for a in 0..k {
            for b in 0..a {
                hess[a][b] = hess[b][a];
            }
        }
        for a in 1..k {
            grad[a] += w[a] / c;
            hess[a][a] += 1.0 / c;
        }
        let Some(step) = solve(hess, grad) else { break };
        let size: f64 = step.iter().map(|s| s.abs()).fold(0.0, f64::max);
        for a in 0..k {
            w[a] -= step[a];
        }
        if size < 1e-9 {
            break;
        }
    }
    Logistic {
        features: names.to_vec(),
        mean,
        scale,
        weights: w[1..].to_vec(),
        intercept: w[0],
        fit: serde_json::Value::Null,
    }
}

/// `a x = b` for a symmetric positive definite `a` (Cholesky); `None` when it is not.
#[allow(clippy::needless_range_loop)] // triangular index arithmetic, as the algorithm is written
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for j in 0..n {
        let mut d = a[j][j];
        for k in 0..j {
            d -= a[j][k] * a[j][k];
        }
        if d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        a[j][j] = d;
        for i in j + 1..n {
            let mut s = a[i][j];
            for k in 0..j {
                s -= a[i][k] * a[j][k];
            }
            a[i][j] = s / d;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i][k] * b[k];
        }
        b[i] = s / a[i][i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[k][i] * b[k];
        }
        b[i] = s / a[i][i];
    }
    Some(b)
}

/// The report as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut out = format!(
        "# Session ranker: {}{}\n\nWritten by `memcc bench ranker`. {} questions, {} (question, session) rows. \
         A session is relevant when it is one of the question's gold sessions. Each haystack is scored by a model \
         fit on the others (its L2 penalty chosen by an inner leave-one-out); the baselines rank the same rows by \
         one feature. Session R_all@k: every gold session of the question among the first k. What ships is fit on \
         RealMem's dev personas (Apache-2.0); LoCoMo (CC BY-NC 4.0) only checks that the ranker does not trade it \
         away, and is never fit on.\n\n\
         | ranking | R_all@5 | R_all@10 | R_all@20 |\n|---|---|---|---|\n",
        r.dataset,
        if r.projects { ", the host says each session's project" } else { "" },
        r.questions,
        r.rows
    );
    for s in std::iter::once(&r.leave_one_out).chain(&r.baselines) {
        out.push_str(&format!(
            "| {} | {:.3} | {:.3} | {:.3} |\n",
            s.name, s.recall_all[0], s.recall_all[1], s.recall_all[2]
        ));
    }
    out.push_str("\nPer haystack (R_all@10): ");
    out.push_str(
        &r.leave_one_out
            .per_haystack
            .iter()
            .zip(&r.penalty_per_fold)
            .map(|((id, s), (_, c))| format!("{id} {:.3} (C {c})", s[1]))
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push_str(
        "\n\nCalibration of the final model on its own rows (tenths by prediction): mean predicted / share relevant:\n",
    );
    out.push_str(&r.calibration.iter().map(|(p, y, _)| format!("{p:.3}/{y:.3}")).collect::<Vec<_>>().join(", "));
    out.push_str("\n\nWeights of the final model (standardised inputs; `log` is ln(1 + |x|)):\n\n| feature | weight | log weight |\n|---|---|---|\n");
    let f = r.model.features.len();
    for (i, name) in r.model.features.iter().enumerate() {
        out.push_str(&format!("| {name} | {:+.3} | {:+.3} |\n", r.model.weights[i], r.model.weights[f + i]));
    }
    let fit = &r.model.fit;
    out.push_str(&format!(
        "\nIntercept {:+.3}. Fit by {} on {} (L2 penalty C = {}); the file keeps {} rows with the probability this \
         fit gives them, which a test scores again.\n",
        r.model.intercept,
        fit["by"].as_str().unwrap_or("?"),
        fit["on"].as_str().unwrap_or("?"),
        fit["penalty"],
        fit["examples"].as_array().map_or(0, Vec::len)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_fits_a_separable_signal_and_the_solver_inverts() {
        let x: Vec<Vec<f64>> = (0..200).map(|i| vec![f64::from(i % 10), f64::from(i % 7)]).collect();
        let y: Vec<f64> = x.iter().map(|r| f64::from(u8::from(r[0] >= 5.0))).collect();
        let m = fit(&x, &y, &["a".into()], 1.0);
        assert!(m.weights[0] > 1.0 && m.weights[1].abs() < m.weights[0], "{m:?}");
        let s = solve(vec![vec![4.0, 2.0], vec![2.0, 3.0]], vec![2.0, 1.0]).unwrap();
        assert!((4.0 * s[0] + 2.0 * s[1] - 2.0).abs() < 1e-12 && (2.0 * s[0] + 3.0 * s[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn recall_all_needs_every_gold_session_within_the_cut() {
        let g = Group {
            question: "q".into(),
            sessions: Vec::new(),
            rows: (0..12).map(|i| vec![f64::from(12 - i)]).collect(),
            gold: (0..12).map(|i| i == 0 || i == 7).collect(),
            unranked_gold: 0,
        };
        assert_eq!(recall_all(std::slice::from_ref(&g), &|r| r[0]), [0.0, 1.0, 1.0]);
        let missing = Group { unranked_gold: 1, ..g };
        assert_eq!(recall_all(&[missing], &|r| r[0]), [0.0, 0.0, 0.0]);
    }
}
