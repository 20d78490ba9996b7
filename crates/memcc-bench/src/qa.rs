//! Optional QA mode: answer each question from the prompt MemCC assembles (full pipeline), then
//! have a judge model grade the answer, as LongMemEval and LoCoMo evaluations do. Needs an
//! OpenAI-compatible endpoint; accuracy is reported per question type.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::haystack::HQuestion;
use crate::metrics::dedup_in_order;
use crate::pipeline::{Provenance, open, replay, session_id};
use crate::{BenchError, Dataset, Options, load};
use memcc::Memcc;
use memcc::lab::context::SessionRef;
use memcc::lab::context::message::AgentMessage;
use memcc::lab::core::llm::{ChatMessage, ChatModel, ChatRequest, OpenAiChat, OpenAiConfig};

const ANSWER_SYSTEM: &str = "You answer questions about the user's past conversations. Use only the conversation \
memory and history provided. Answer briefly. If the memory does not contain the answer, say that you don't know.";

/// The LongMemEval-style judge: does the response contain the correct answer?
fn judge_prompt_lme(question: &str, answer: &str, response: &str, abstention: bool) -> String {
    if abstention {
        format!(
            "I will give you an unanswerable question, an explanation, and a response from a model. Answer yes if the \
             model correctly identifies the question as unanswerable (it may say the information is missing or \
             incomplete). Otherwise answer no.\n\nQuestion: {question}\n\nExplanation: {answer}\n\nModel Response: \
             {response}\n\nDoes the model correctly identify the question as unanswerable? Answer yes or no only."
        )
    } else {
        format!(
            "I will give you a question, a correct answer, and a response from a model. Answer yes if the response \
             contains the correct answer, or is equivalent to it, or contains all the intermediate steps to get it. \
             If the response only contains a subset of the information required, answer no.\n\nQuestion: {question}\n\n\
             Correct Answer: {answer}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."
        )
    }
}

/// The RealMem judge: the question is a turn of an ongoing project; the gold is the memory points
/// of earlier sessions a good reply draws on.
fn judge_prompt_realmem(question: &str, points: &str, response: &str) -> String {
    format!(
        "A user continues a long project with an assistant. Below are the user's message, the facts from earlier \
         sessions that a good reply must take into account, and the assistant's reply. Answer yes if the reply is \
         consistent with every fact and uses those the message calls for; answer no if it contradicts one, ignores \
         what the message needs, or relies on an outdated version of a fact.\n\nUser message: {question}\n\n\
         Facts from earlier sessions:\n{points}\n\nAssistant reply: {response}\n\nAnswer yes or no only."
    )
}

/// What a question's answer is graded against: its answer, or (RealMem) its memory points.
fn gold_answer(q: &HQuestion) -> Option<String> {
    if !q.gold_points.is_empty() {
        return Some(q.gold_points.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n"));
    }
    q.answer.clone()
}

/// The LoCoMo-style judge: generous on wording, strict on the fact.
fn judge_prompt_locomo(question: &str, answer: &str, response: &str) -> String {
    format!(
        "Label the generated answer CORRECT or WRONG against the gold answer. Be generous: an answer that names the same \
         fact, date or entity in other words is CORRECT; a different or missing fact is WRONG.\n\nQuestion: {question}\n\
         Gold answer: {answer}\nGenerated answer: {response}\n\nReply with one word: CORRECT or WRONG."
    )
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct QaCategory {
    pub questions: usize,
    pub correct: usize,
    pub accuracy: f64,
    /// Mean estimated tokens of the prompts these questions were asked with (system included).
    pub mean_prompt_tokens: f64,
    #[serde(skip)]
    prompt_tokens: usize,
}

impl QaCategory {
    fn add(&mut self, other: &QaCategory) {
        self.questions += other.questions;
        self.correct += other.correct;
        self.prompt_tokens += other.prompt_tokens;
    }

    fn finish(mut self) -> Self {
        let per = |x: usize| if self.questions == 0 { 0.0 } else { x as f64 / self.questions as f64 };
        self.accuracy = per(self.correct);
        self.mean_prompt_tokens = per(self.prompt_tokens);
        self
    }
}

/// A judge's verdict, however it is dressed ("**CORRECT**", "Yes.", "The answer is wrong"):
/// the first verdict word decides; `None` when there is none.
pub fn parse_verdict(reply: &str) -> Option<bool> {
    reply.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase).find_map(|w| match w.as_str() {
        "correct" | "yes" | "right" | "true" => Some(true),
        "wrong" | "incorrect" | "no" | "false" => Some(false),
        _ => None,
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct QaReport {
    pub model: String,
    pub judge_model: String,
    /// Every question with an answer.
    pub overall: QaCategory,
    /// LoCoMo: categories 1–4 (category 5 has no gold answer and is never in `overall` either,
    /// but the figure is labelled the way LoCoMo results are quoted).
    pub overall_secondary: Option<QaCategory>,
    /// Judge replies with no verdict word (counted wrong).
    pub unparsed_verdicts: usize,
    pub by_category: Vec<(String, QaCategory)>,
    /// Questions whose answer or judgement failed (counted wrong).
    pub failures: usize,
}

/// Answer and judge every question with an answer. `model`/`judge` are chat model names on
/// `options.llm_base_url`.
pub fn run_qa(
    path: &Path,
    options: &Options,
    model: &str,
    judge: &str,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<QaReport, BenchError> {
    let base = &options.settings;
    let url = base
        .endpoint()
        .ok_or_else(|| BenchError::Qa("QA mode needs an OpenAI-compatible endpoint (--llm-base-url)".into()))?;
    let chat = |name: &str| -> Result<Arc<dyn ChatModel>, BenchError> {
        let mut c = OpenAiConfig::new(&url, name);
        c.timeout = Duration::from_secs(120);
        Ok(Arc::new(OpenAiChat::new(c).map_err(|e| BenchError::Qa(e.to_string()))?))
    };
    let (answerer, grader) = (chat(model)?, chat(judge)?);
    let mut issues = Vec::new();
    let haystacks = load(options, path, &mut issues)?;
    let embedder = memcc::Memcc::embedder(base, &mut Vec::new())?;
    let mut tally: HashMap<String, QaCategory> = HashMap::new();
    let mut failures = 0;
    let mut unparsed_verdicts = 0;
    for (hi, h) in haystacks.iter().enumerate() {
        progress(hi, haystacks.len(), &format!("QA {}", h.id));
        let dir = tempfile::tempdir()?;
        let memcc = open(options, dir.path(), &embedder, false)?;
        let mut asked = 0usize;
        let mut ask = |memcc: &Memcc, q: &HQuestion, _: &Provenance| -> Result<(), BenchError> {
            let Some(answer) = gold_answer(q) else { return Ok(()) };
            asked += 1;
            let assembled = match q.asked_at {
                // Asked in its own session, after that session's earlier turns (RealMem).
                Some(at) => memcc.assemble_for(
                    &SessionRef::new(&session_id(h, at.session)),
                    memcc.budget(Some(options.budget as f64)),
                    q.as_of,
                    &[AgentMessage::user(&q.text)],
                )?,
                None => {
                    let session = format!("{}/qa-{asked}", h.id);
                    memcc.context.ingest(
                        &SessionRef::new(&session),
                        &AgentMessage::user(&q.text).with_timestamp(q.as_of.unwrap_or(0)),
                    )?;
                    memcc.context.assemble(&session, options.budget, q.as_of)?
                }
            };
            let mut messages: Vec<ChatMessage> = assembled
                .messages
                .iter()
                .map(|m| {
                    let msg = AgentMessage::from_value(m.clone());
                    let role = if msg.role() == "assistant" { "assistant" } else { "user" };
                    ChatMessage { role: role.into(), content: msg.text() }
                })
                .collect();
            if q.asked_at.is_some() {
                messages.push(ChatMessage { role: "user".into(), content: q.text.clone() });
            }
            let system = match &assembled.system_prompt_addition {
                Some(extra) => format!("{ANSWER_SYSTEM}\n\n{extra}"),
                None => ANSWER_SYSTEM.to_string(),
            };
            let prompt_tokens = memcc::lab::core::estimate_tokens(&system) + assembled.estimated_tokens;
            let request = ChatRequest { system: Some(system), messages, max_tokens: Some(200), temperature: Some(0.0) };
            let verdict = answerer.complete(&request).and_then(|response| {
                let prompt = match options.dataset {
                    Dataset::Longmemeval => judge_prompt_lme(&q.text, &answer, &response, q.abstention),
                    Dataset::Locomo => judge_prompt_locomo(&q.text, &answer, &response),
                    Dataset::Realmem => judge_prompt_realmem(&q.text, &answer, &response),
                };
                grader.complete(&ChatRequest::simple("You are a strict, fair grader.", &prompt, 10))
            });
            let entry = tally.entry(q.category.clone()).or_default();
            entry.questions += 1;
            entry.prompt_tokens += prompt_tokens;
            match verdict {
                Ok(v) => match parse_verdict(&v) {
                    Some(correct) => entry.correct += usize::from(correct),
                    None => {
                        tracing::warn!(question = %q.id, reply = %v, "the judge gave no verdict; counted wrong");
                        unparsed_verdicts += 1;
                    }
                },
                Err(e) => {
                    tracing::warn!(question = %q.id, error = %e, "QA request failed; counted wrong");
                    failures += 1;
                }
            }
            Ok(())
        };
        replay(&memcc, h, options.budget, &mut Provenance::new(), &mut ask)?;
    }
    progress(haystacks.len(), haystacks.len(), "done");
    let mut categories: Vec<String> = dedup_in_order(tally.keys().cloned());
    categories.sort();
    let sum = |keep: &dyn Fn(&str) -> bool| {
        let mut total = QaCategory::default();
        for (c, t) in &tally {
            if keep(c) {
                total.add(t);
            }
        }
        total.finish()
    };
    Ok(QaReport {
        model: model.into(),
        judge_model: judge.into(),
        overall: sum(&|_| true),
        overall_secondary: (options.dataset == Dataset::Locomo).then(|| sum(&|c| c != "5")),
        unparsed_verdicts,
        by_category: categories
            .into_iter()
            .map(|c| (c.clone(), tally.get(&c).cloned().unwrap_or_default().finish()))
            .collect(),
        failures,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_verdict;

    #[test]
    fn verdicts_are_read_however_they_are_dressed() {
        for (reply, want) in [
            ("CORRECT", Some(true)),
            ("**CORRECT**", Some(true)),
            ("Yes.", Some(true)),
            ("yes", Some(true)),
            ("WRONG", Some(false)),
            ("**Incorrect**", Some(false)),
            ("No.", Some(false)),
            ("The generated answer is wrong.", Some(false)),
            ("Label: CORRECT", Some(true)),
            ("", None),
            ("I cannot tell", None),
        ] {
            assert_eq!(parse_verdict(reply), want, "{reply:?}");
        }
    }
}
