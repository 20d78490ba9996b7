//! Summarisers: the [`Summarizer`] trait, the offline extractive default, an LLM-backed one
//! (any [`ChatModel`]: an OpenAI-compatible API or the host's model), and the escalation that
//! always ends in a deterministic truncation that is smaller than its input.

use memcc_core::text::static_regex;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use regex::Regex;

use crate::store::SummaryKind;
use memcc_core::estimate_tokens;
use memcc_core::llm::{ChatModel, ChatRequest, LlmError};
use memcc_core::text::is_stop_word;
use memcc_core::tokens::latin_chars;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryMode {
    Normal,
    /// Used when the normal output was not smaller than the input.
    Aggressive,
}

/// What to summarise.
#[derive(Debug, Clone)]
pub struct SummaryInput<'a> {
    pub kind: SummaryKind,
    pub mode: SummaryMode,
    /// Rendered source: one `[date] role: text` line per message (leaf) or the child summaries
    /// (condensed).
    pub text: &'a str,
    pub target_tokens: usize,
}

pub trait Summarizer: Send + Sync {
    fn summarize(&self, input: &SummaryInput<'_>) -> Result<String, LlmError>;
    fn label(&self) -> String;
}

/// The marker every summary ends with (the bridge's, which memory reads).
pub use memcc_core::bridge::EXPAND_FOOTER;

// ---------------------------------------------------------------------------------------------
// Extractive

/// Offline, deterministic: a first line naming each speaker's subjects (the words they come back
/// to), then the sentences that carry names, numbers, dates, decisions, preferences, what a
/// speaker did, and — in a span of messages — open questions, in their original order, under
/// their date and speaker.
#[derive(Debug, Default, Clone, Copy)]
pub struct ExtractiveSummarizer;

static LINE_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| static_regex(r"^(?:- )?(\[[^\]]{1,40}\] [^:\n]{1,40}:)\s?(.*)$"));
static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| static_regex(r"[.!?;](?:\s+|$)|[。！？；]"));
static DIGIT: LazyLock<Regex> = LazyLock::new(|| static_regex(r"\d"));
static CUE: LazyLock<Regex> = LazyLock::new(|| {
    static_regex(
        r"(?i)\b(decided?|decision|agreed?|plan(?:ned|ning)?|will|going to|must|need to|deadline|todo|promise[ds]?|remember|important|prefer(?:s|red)?|love[sd]?|like[sd]?|hate[sd]?|favou?rite|always|never|allergic|birthday|moved?|married|started|finished|bought|adopted|joined|lives?|works?)\b|决定|计划|打算|需要|必须|喜欢|讨厌|最爱|记得|重要|搬|生日",
    )
});
static CAPITALISED: LazyLock<Regex> =
    // Any script's letters: an ASCII class cut "Holzmarktstraße" to "Holzmarktstra" and dropped
    // "Müller" and "São" whole.
    LazyLock::new(|| static_regex(r"\b\p{Lu}\p{Ll}{2,}(?:\s+\p{Lu}\p{Ll}+)*\b"));

/// "I went", "we finally adopted": a speaker saying what they did, the span's who-did-what.
static FIRST_PERSON_EVENT: LazyLock<Regex> = LazyLock::new(|| {
    static_regex(
        r"(?i)\b(?:I|we)(?:'ve| have| had)?\s+(?:just |finally |also |recently |already |then )?(?:\w{3,}ed|went|ran|saw|got|made|took|began|bought|found|gave|met|won|left|came|did|wrote|built|sold|told|kept|became|quit|grew|sang|drew|flew|drove|threw|chose|caught|taught|brought|thought)\b",
    )
});

/// Month and weekday names: the words of a date, which a summary's lines carry already.
const CALENDAR_WORDS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

const COMMON_CAPS: &[&str] = &[
    "The", "This", "That", "There", "Then", "They", "What", "When", "Where", "Which", "Who", "Why", "How", "And",
    "But", "Yes", "Yeah", "Okay", "Thanks", "Thank", "Hey", "Hello", "Sure", "Well", "Also", "Just", "Wow", "Great",
    "Let", "Our", "Your", "You", "Its", "Not", "Can", "For", "With", "Have", "Has", "Had", "Are", "Was", "Were",
    "Expand", "Good", "Nice", "Oh", "Sounds", "Really", "That's", "It's", "I'm", "Any", "Some", "She", "His", "Her",
];

struct Sentence {
    group: usize,
    order: usize,
    text: String,
    score: f64,
    tokens: usize,
}

/// What the whole input says about its words: who speaks (their names carry nothing in their own
/// dialogue) and how often each word occurs (a word said once is more likely a specific fact).
#[derive(Default)]
struct InputStats {
    speakers: HashSet<String>,
    counts: HashMap<String, usize>,
}

static SPEAKER: LazyLock<Regex> = LazyLock::new(|| static_regex(r"^([A-Z][\w'-]{1,30}(?: [A-Z][\w'-]{1,30})?):\s"));

/// A line of a summariser's source — `[date] role: Name: what was said`, a child summary's with a
/// leading "- " — taken apart, once for every reader of it.
struct SourceLine<'a> {
    /// `[date] role:`, when the line has one.
    prefix: Option<&'a str>,
    /// Everything after the prefix (the whole line without one).
    text: &'a str,
    /// The `Name` of a `Name: ` the text starts with.
    speaker: Option<&'a str>,
    /// The text after that `Name: ` (the text itself without one).
    said: &'a str,
}

impl<'a> SourceLine<'a> {
    fn of(line: &'a str) -> Self {
        let (prefix, text) = match LINE_PREFIX.captures(line) {
            Some(c) => (c.get(1).map(|m| m.as_str()), c.get(2).map_or("", |m| m.as_str())),
            None => (None, line),
        };
        match SPEAKER.captures(text) {
            Some(c) => SourceLine {
                prefix,
                text,
                speaker: c.get(1).map(|m| m.as_str()),
                said: c.get(0).map_or(text, |m| &text[m.end()..]),
            },
            None => SourceLine { prefix, text, speaker: None, said: text },
        }
    }
}

/// Words long enough to carry content (CJK runs have no word boundaries and are left out).
fn content_words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| {
            w.chars().count() >= 5 && w.chars().all(|c| c.is_alphabetic() && !memcc_core::text::is_cjk_letter(c))
        })
        .map(str::to_lowercase)
        .filter(|w| !memcc_core::text::is_stop_word(w))
}

impl InputStats {
    fn of(text: &str) -> Self {
        let mut stats = InputStats::default();
        for line in text.lines() {
            let line = SourceLine::of(line);
            if let Some(speaker) = line.speaker {
                stats.speakers.insert(speaker.to_string());
            }
            for w in content_words(line.text) {
                *stats.counts.entry(w).or_default() += 1;
            }
        }
        stats
    }
}

/// How much a question counts: in a span of messages it may be what is still open; in a span of
/// summaries (weeks of talk) it is long answered or dropped, and says nothing of who did what.
fn question_weight(kind: SummaryKind) -> f64 {
    match kind {
        SummaryKind::Leaf => 2.0,
        SummaryKind::Condensed => 0.0,
    }
}

fn score_sentence(s: &str, first_in_group: bool, stats: &InputStats, questions: f64) -> f64 {
    let mut score = 0.0;
    // A line's "Name: " is who speaks, not what is said.
    let s = SPEAKER.find(s).map_or(s, |m| &s[m.end()..]);
    if DIGIT.is_match(s) {
        score += 3.0;
    }
    score += 2.5 * CUE.find_iter(s).count().min(2) as f64;
    if FIRST_PERSON_EVENT.is_match(s) {
        score += 1.5;
    }
    // Specific beats generic: words the span says only once ("pottery", "Perseid") are more
    // often the fact than words it keeps repeating ("love", "awesome").
    let once: HashSet<String> = content_words(s).filter(|w| stats.counts.get(w).is_some_and(|&n| n == 1)).collect();
    score += 0.5 * once.len().min(3) as f64;
    let names = CAPITALISED
        .find_iter(s)
        .filter(|m| m.start() > 0 && !COMMON_CAPS.contains(&m.as_str()))
        .filter(|m| !stats.speakers.contains(m.as_str()))
        .count();
    score += 1.5 * names.min(3) as f64;
    if s.trim_end().ends_with('?') || s.trim_end().ends_with('？') {
        score += questions;
    }
    if first_in_group {
        score += 1.0;
    }
    let words = s.split_whitespace().count() + s.chars().filter(|c| memcc_core::text::is_cjk_letter(*c)).count() / 2;
    if words < 4 {
        score -= 2.0;
    }
    // Prefer dense sentences: a long sentence must carry more to be worth its tokens.
    score - (words as f64 / 60.0)
}

/// What makes the next word a thing: articles, possessives, demonstratives.
const DETERMINERS: &[&str] =
    &["a", "an", "the", "my", "our", "your", "his", "her", "their", "this", "these", "those", "some", "every"];

/// Stretches of time and words of talk: said of everything, the subject of nothing.
const NOT_SUBJECTS: &[&str] = &[
    "minute",
    "hours",
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "morning",
    "evening",
    "night",
    "weekend",
    "month",
    "years",
    "while",
    "moment",
    "times",
    "really",
    "lately",
    "thing",
    "stuff",
    "whole",
    "other",
    "since",
    "around",
    "having",
    "haven",
    "didn",
    "doesn",
    "wasn",
    "aren",
    "couldn",
    "wouldn",
    "shouldn",
    "great",
    "awesome",
    "perfect",
    "different",
    "little",
    "special",
    "right",
    "first",
    "third",
    "second",
];

/// How the subjects line starts (the bridge's text contract: memory leaves the line out).
pub use memcc_core::bridge::SUBJECTS_LINE as SUBJECTS;

/// The line that opens a summary: each speaker's subjects, e.g. `- Subjects: Caroline: adoption,
/// mentorship; Melanie: painting, camping.` A speaker's subject is a content word they say in two
/// or more of their lines, ranked by how often and how much more than the others they say it (a
/// word everyone keeps saying, "awesome", is talk, not a subject). Speakers are the names lines
/// start with, else the roles; `None` when nobody comes back to anything.
pub fn subjects_line(text: &str, per_speaker: usize) -> Option<String> {
    // (speaker, word) → lines; word → lines of anyone; word → its forms as said.
    let mut said: HashMap<(String, String), usize> = HashMap::new();
    let mut everyone: HashMap<String, usize> = HashMap::new();
    let mut forms: HashMap<String, HashMap<String, usize>> = HashMap::new();
    let mut speakers: Vec<String> = Vec::new();
    // Words said as things: the two words after an article or a possessive ("the adoption
    // agency", "my pottery"), or an acronym ("LGBTQ"); what is only ever said otherwise ("happy")
    // is no subject, nor is a word of quality ("a great time", "a peaceful place").
    let mut things: HashSet<String> = HashSet::new();
    for line in text.lines().filter(|l| !l.starts_with(EXPAND_FOOTER) && !l.starts_with(SUBJECTS)) {
        let line = SourceLine::of(line);
        let Some(prefix) = line.prefix else { continue };
        let body = line.said;
        // The name the line starts with, else the role.
        let speaker = match line.speaker {
            Some(name) => name.to_string(),
            None => prefix.rsplit("] ").next().unwrap_or(prefix).trim_end_matches(':').to_string(),
        };
        if !speakers.contains(&speaker) {
            speakers.push(speaker.clone());
        }
        let mut seen: HashSet<String> = HashSet::new();
        // How many more words may be a noun phrase's, after an article; 0 outside one.
        let mut phrase = 0usize;
        for surface in body.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let lower = surface.to_lowercase();
            let key = content_words(surface).next().map(|word| match word.strip_suffix('s') {
                // "paintings" and "painting" are one subject.
                Some(stem) if !word.ends_with("ss") && stem.chars().count() >= 5 => stem.to_string(),
                _ => word,
            });
            if DETERMINERS.contains(&lower.as_str()) {
                phrase = 2;
                continue;
            }
            let in_phrase = phrase > 0 && surface.chars().all(char::is_alphabetic) && !is_stop_word(&lower);
            phrase = if in_phrase { phrase - 1 } else { 0 };
            if let Some(k) = key.as_ref().filter(|_| in_phrase) {
                things.insert(k.clone());
            }
            let Some(key) = key else { continue };
            // "actually", "totally": how it was said, not what about (short ones, "family", stay).
            let adverb = key.ends_with("ly") && key.chars().count() >= 7;
            let calendar = CALENDAR_WORDS.iter().any(|c| c.eq_ignore_ascii_case(&key));
            // "peaceful", "famous", "creative", "amazing", "favorite": how a thing is, not the thing.
            let quality = ["ful", "ous", "ive", "able", "ible", "zing", "ite"].iter().any(|x| key.ends_with(x));
            if adverb || calendar || quality || NOT_SUBJECTS.contains(&key.as_str()) {
                continue;
            }
            if surface.chars().all(|c| c.is_uppercase() || c.is_ascii_digit()) {
                things.insert(key.clone());
            }
            if seen.insert(key.clone()) {
                *said.entry((speaker.clone(), key.clone())).or_default() += 1;
                *everyone.entry(key.clone()).or_default() += 1;
                *forms.entry(key).or_default().entry(surface.to_string()).or_default() += 1;
            }
        }
    }
    // A speaker's name is who, not what.
    let names: HashSet<String> = speakers.iter().map(|s| s.to_lowercase()).collect();
    let shown = |key: &str| {
        forms.get(key).and_then(|f| f.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(w, _)| w.clone()))
    };
    let mut parts = Vec::new();
    for speaker in &speakers {
        let mut mine: Vec<(&String, f64)> = said
            .iter()
            .filter(|((who, word), n)| who == speaker && **n >= 2 && things.contains(word) && !names.contains(word))
            .filter_map(|((_, word), &n)| {
                let share = n as f64 / everyone.get(word).copied().unwrap_or(n).max(1) as f64;
                // Mostly this speaker's: a word all of them say about as often is the talk itself.
                (share >= 0.6).then_some((word, n as f64 * share * share))
            })
            .collect();
        mine.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let words: Vec<String> = mine.iter().take(per_speaker).filter_map(|(w, _)| shown(w)).collect();
        if !words.is_empty() {
            parts.push(format!("{speaker}: {}", words.join(", ")));
        }
    }
    (!parts.is_empty()).then(|| format!("{SUBJECTS}{}.", parts.join("; ")))
}

/// Keywords for the "Expand for details about" footer: frequent names and long words.
pub fn keywords(text: &str, max: usize) -> Vec<String> {
    let mut freq: HashMap<String, (usize, usize)> = HashMap::new();
    let mut order = 0usize;
    let mut bump = |k: String, w: usize| {
        order += 1;
        let e = freq.entry(k).or_insert((0, order));
        e.0 += w;
    };
    for line in text.lines().filter(|l| !l.starts_with(EXPAND_FOOTER) && !l.starts_with(SUBJECTS)) {
        let line = SourceLine::of(line);
        let body = line.text;
        // A capital that only starts a sentence ("Last Friday", "Got any…") is no name, nor is a date's word.
        let starts: HashSet<usize> = std::iter::once(0)
            .chain(SENTENCE_END.find_iter(body).map(|m| m.end()))
            .map(|i| i + body[i..].len() - body[i..].trim_start().len())
            .collect();
        let body_words = body.len() - line.said.len();
        for m in CAPITALISED.find_iter(body) {
            let at_start = starts.contains(&m.start()) || m.start() == body_words;
            if !at_start && !COMMON_CAPS.contains(&m.as_str()) && !CALENDAR_WORDS.contains(&m.as_str()) {
                bump(m.as_str().to_string(), 3);
            }
        }
        for w in body.split(|c: char| !c.is_alphanumeric()) {
            if w.chars().count() >= 7 && w.chars().all(char::is_lowercase) {
                bump(w.to_string(), 1);
            }
        }
        let cjk: Vec<char> = body.chars().collect();
        for pair in cjk.windows(2) {
            if pair.iter().all(|c| memcc_core::text::is_cjk_letter(*c)) {
                bump(pair.iter().collect(), 1);
            }
        }
    }
    let mut ranked: Vec<(String, (usize, usize))> = freq.into_iter().filter(|(_, (n, _))| *n >= 2).collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    ranked.into_iter().take(max).map(|(k, _)| k).collect()
}

/// The footer line for a summary of `source`.
pub fn footer(source: &str) -> String {
    let words = keywords(source, 8);
    if words.is_empty() {
        format!("{EXPAND_FOOTER} the original messages.")
    } else {
        format!("{EXPAND_FOOTER} {}.", words.join(", "))
    }
}

/// Split `block` into scored sentences, each under its line's `[date] role:` prefix (and the
/// speaker's `Name:` when the line starts with one).
fn split_sentences(
    block: &str,
    max_chars: usize,
    stats: &InputStats,
    questions: f64,
    groups: &mut Vec<String>,
    sentences: &mut Vec<Sentence>,
) {
    for line in block.lines() {
        let line = line.trim();
        // A child's footer and subjects line: this summary writes its own.
        if line.is_empty() || line.starts_with(EXPAND_FOOTER) || line.starts_with(SUBJECTS) {
            continue;
        }
        let line = SourceLine::of(line);
        let body = line.said;
        // Who speaks ("Melanie: …" in a role's message) belongs to every sentence kept from the
        // line, not only to its first: "assistant: I ran a charity race" would say who did not.
        let prefix = match (line.prefix, line.speaker) {
            (Some(p), Some(name)) => format!("{p} {name}:"),
            (None, Some(name)) => format!("{name}:"),
            (Some(p), None) => p.to_string(),
            (None, None) => String::new(),
        };
        groups.push(prefix);
        let group = groups.len() - 1;
        let mut start = 0;
        let mut first = true;
        let ends: Vec<usize> = SENTENCE_END.find_iter(body).map(|m| m.end()).chain([body.len()]).collect();
        for end in ends {
            if end <= start {
                continue;
            }
            let raw = body[start..end].trim();
            start = end;
            if raw.is_empty() {
                continue;
            }
            let text: String = if raw.chars().count() > max_chars {
                let cut: String = raw.chars().take(max_chars).collect();
                format!("{cut}…")
            } else {
                raw.to_string()
            };
            let score = score_sentence(&text, first, stats, questions);
            first = false;
            let tokens = estimate_tokens(&text) + 1;
            sentences.push(Sentence { group, order: sentences.len(), text, score, tokens });
        }
    }
}

impl Summarizer for ExtractiveSummarizer {
    fn summarize(&self, input: &SummaryInput<'_>) -> Result<String, LlmError> {
        let foot = footer(input.text);
        let questions = question_weight(input.kind);
        let target = match input.mode {
            SummaryMode::Normal => input.target_tokens,
            SummaryMode::Aggressive => input.target_tokens / 2,
        }
        .saturating_sub(estimate_tokens(&foot) + 2)
        .max(16);
        // Who is on about what, first: it costs a line and says what the sentences below are about.
        let lead = subjects_line(input.text, 4).filter(|l| estimate_tokens(l) < target / 4);
        let target = target.saturating_sub(lead.as_deref().map_or(0, |l| estimate_tokens(l) + 1)).max(16);
        let max_sentence_chars = if input.mode == SummaryMode::Aggressive { 200 } else { 600 };

        // Blocks (separated by blank lines: one per child of a condensed summary) get equal shares
        // of the budget, so a summary of a long span covers all of it, not just its start.
        let blocks: Vec<&str> = input.text.split("\n\n").filter(|b| !b.trim().is_empty()).collect();
        let stats = InputStats::of(input.text);
        let share = (target / blocks.len().max(1)).max(8);
        let mut groups: Vec<String> = Vec::new();
        let mut sentences: Vec<Sentence> = Vec::new();
        let mut chosen: Vec<usize> = Vec::new();
        let mut used = 0usize;
        // A sentence said again (a repeated question, a child summary's echo) is kept once.
        let mut seen_texts: HashSet<String> = HashSet::new();
        for block in blocks {
            let first_sentence = sentences.len();
            split_sentences(block, max_sentence_chars, &stats, questions, &mut groups, &mut sentences);
            let mut ranked: Vec<usize> = (first_sentence..sentences.len()).collect();
            ranked.sort_by(|&a, &b| {
                sentences[b].score.partial_cmp(&sentences[a].score).unwrap_or(std::cmp::Ordering::Equal).then(a.cmp(&b))
            });
            let mut block_used = 0usize;
            let mut groups_used: HashSet<usize> = HashSet::new();
            for idx in ranked {
                let s = &sentences[idx];
                if s.score <= 0.0 {
                    break;
                }
                let prefix_cost =
                    if groups_used.contains(&s.group) { 0 } else { estimate_tokens(&groups[s.group]) + 2 };
                let cost = s.tokens + prefix_cost;
                if block_used + cost > share || used + cost > target || seen_texts.contains(&s.text.to_lowercase()) {
                    continue;
                }
                seen_texts.insert(s.text.to_lowercase());
                block_used += cost;
                used += cost;
                groups_used.insert(s.group);
                chosen.push(idx);
            }
        }
        chosen.sort_by_key(|&i| sentences[i].order);

        let mut out = String::new();
        if let Some(lead) = &lead {
            out.push_str(lead);
        }
        let mut current_group = usize::MAX;
        for i in chosen {
            let s = &sentences[i];
            if s.group != current_group {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str("- ");
                if !groups[s.group].is_empty() {
                    out.push_str(&groups[s.group]);
                    out.push(' ');
                }
                current_group = s.group;
            } else {
                out.push(' ');
            }
            out.push_str(&s.text);
        }
        if out.is_empty() {
            out.push_str("- (no salient content)");
        }
        out.push('\n');
        out.push_str(&foot);
        Ok(out)
    }

    fn label(&self) -> String {
        "extractive".into()
    }
}

// ---------------------------------------------------------------------------------------------
// LLM

/// Summaries written by a chat model.
pub struct LlmSummarizer {
    model: Arc<dyn ChatModel>,
}

impl LlmSummarizer {
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        LlmSummarizer { model }
    }
}

fn llm_system_prompt(input: &SummaryInput<'_>) -> String {
    let what = match input.kind {
        SummaryKind::Leaf => "a span of an agent's conversation",
        SummaryKind::Condensed => "several consecutive summaries of an agent's conversation",
    };
    match input.mode {
        SummaryMode::Normal => format!(
            "You summarise {what} so the agent can continue without the original. Keep every name, number, date, \
             decision, commitment, user preference and open question; drop pleasantries. Write terse bullet points, \
             each starting with its [date] and speaker when known. Add nothing that is not in the text. \
             Stay under {} tokens. Output only the bullets.",
            input.target_tokens
        ),
        SummaryMode::Aggressive => format!(
            "Compress {what} as hard as possible: only decisions, commitments, facts with names, numbers and dates, \
             and open questions, as very short bullets with [date]. At most {} tokens. Output only the bullets.",
            input.target_tokens / 2
        ),
    }
}

impl Summarizer for LlmSummarizer {
    fn summarize(&self, input: &SummaryInput<'_>) -> Result<String, LlmError> {
        let request = ChatRequest::simple(&llm_system_prompt(input), input.text, (input.target_tokens as u32).max(64));
        let mut text = self.model.complete(&request)?.trim().to_string();
        if !text.contains(EXPAND_FOOTER) {
            text.push('\n');
            text.push_str(&footer(input.text));
        }
        Ok(text)
    }

    fn label(&self) -> String {
        format!("llm:{}", self.model.label())
    }
}

// ---------------------------------------------------------------------------------------------
// Escalation

/// Deterministic last resort: head and tail of the source, strictly under `max_tokens`, cut
/// between words. The footer comes along only when it leaves two thirds of the room to the text: in a
/// small budget (a short span folded by a flush) a few words of what was said are worth more than
/// the list of what to expand, and a head and tail of a few characters each say nothing.
pub fn truncate_summary(source: &str, max_tokens: usize) -> String {
    let foot = footer(source);
    let foot_tokens = estimate_tokens(&foot);
    let foot = (foot_tokens * 3 <= max_tokens).then_some(foot);
    // Room for the footer and the omission marker; ~4 chars per token for Latin (CJK is denser,
    // so the loop shrinks until it fits). A head alone needs no marker's room.
    let reserved = foot.as_ref().map_or(0, |_| foot_tokens) + 12;
    let roomy = latin_chars(max_tokens.saturating_sub(reserved));
    let chars: Vec<char> = source.chars().collect();
    let mut keep = if roomy >= HEAD_AND_TAIL_MIN_CHARS { roomy } else { latin_chars(max_tokens) }.min(chars.len());
    loop {
        let text = truncated(&chars, keep, foot.as_deref());
        if estimate_tokens(&text) <= max_tokens || keep == 0 {
            return text;
        }
        keep = keep * 3 / 4;
    }
}

/// Below this many characters kept, the head alone: a tail and the omission marker would take
/// most of the room.
const HEAD_AND_TAIL_MIN_CHARS: usize = 160;

/// About `keep` characters of `chars`, two thirds from the head and the rest from the tail (the
/// head alone when little is kept), each cut at a word boundary, the cut marked; then `foot`.
fn truncated(chars: &[char], keep: usize, foot: Option<&str>) -> String {
    let mut out = if keep >= chars.len() {
        chars.iter().collect::<String>()
    } else {
        let head_n = if keep >= HEAD_AND_TAIL_MIN_CHARS { keep * 2 / 3 } else { keep };
        let tail_n = keep - head_n;
        // Back to the last space within the head, forward past the first one within the tail.
        let head_end = (1..=head_n).rev().find(|&i| chars[i].is_whitespace()).unwrap_or(head_n);
        let tail_from = chars.len() - tail_n;
        let tail_start = (tail_from..chars.len()).find(|&i| chars[i].is_whitespace()).map_or(tail_from, |i| i + 1);
        let head: String = chars[..head_end].iter().collect();
        let head = head.trim_end();
        if tail_n == 0 {
            if head.is_empty() { "[…]".to_string() } else { format!("{head} […]") }
        } else {
            let tail: String = chars[tail_start..].iter().collect();
            format!("{head}\n[… {} characters omitted …]\n{}", tail_start - head_end, tail.trim_start())
        }
    };
    if let Some(foot) = foot {
        out.push('\n');
        out.push_str(foot);
    }
    out
}

/// Which step of [`summarize_escalating`] produced a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escalation {
    /// The summariser's normal prompt.
    Normal,
    /// Its aggressive prompt, the normal one's output not being smaller than the source.
    Aggressive,
    /// The extractive summariser, after the configured one failed.
    ExtractiveFallback,
    /// Head and tail of the source: nothing else was smaller.
    Truncated,
    /// The source itself: a flush's span so short that the summary's frame outweighs it, where a
    /// truncation would keep no word.
    Whole,
}

impl Escalation {
    /// The name stored after the summariser's label in a summary's `method` (`extractive:normal`).
    pub fn as_str(self) -> &'static str {
        match self {
            Escalation::Normal => "normal",
            Escalation::Aggressive => "aggressive",
            Escalation::ExtractiveFallback => "extractive-fallback",
            Escalation::Truncated => "truncated",
            Escalation::Whole => "whole",
        }
    }
}

impl std::fmt::Display for Escalation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A summary and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Produced {
    pub text: String,
    pub method: Escalation,
}

/// Summarise `source` (of `source_tokens`) so that the result is smaller than the source:
/// normal prompt → aggressive prompt when the output is not smaller → (after an error from a
/// model) the extractive summariser → deterministic truncation. Never fails.
pub fn summarize_escalating(
    primary: &dyn Summarizer,
    kind: SummaryKind,
    source: &str,
    source_tokens: usize,
    target_tokens: usize,
) -> Produced {
    let fits = |t: &str| !t.trim().is_empty() && estimate_tokens(t) < source_tokens;
    let input = |mode| SummaryInput { kind, mode, text: source, target_tokens };
    let mut broken = false;
    for (mode, method) in [(SummaryMode::Normal, Escalation::Normal), (SummaryMode::Aggressive, Escalation::Aggressive)]
    {
        match primary.summarize(&input(mode)) {
            Ok(text) if fits(&text) => {
                return Produced { text, method };
            }
            Ok(_) => {}
            Err(e) => {
                // No model to ask is no failure: said at debug, not warned of on every summary.
                match &e {
                    LlmError::Absent(why) => {
                        tracing::debug!(summarizer = %primary.label(), %why, "no model to ask; falling back")
                    }
                    _ => tracing::warn!(summarizer = %primary.label(), error = %e, "summariser failed; falling back"),
                }
                broken = true;
                break;
            }
        }
    }
    if broken
        && let Ok(text) = ExtractiveSummarizer.summarize(&input(SummaryMode::Normal))
        && fits(&text)
    {
        return Produced { text, method: Escalation::ExtractiveFallback };
    }
    let max = target_tokens.min(source_tokens.saturating_sub(1)).max(1);
    Produced { text: truncate_summary(source, max), method: Escalation::Truncated }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_keep_names_and_words_of_any_script_whole() {
        let text = "user: We met Müller at Holzmarktstraße, then São Paulo and Kraków.\nuser: Müller liked Holzmarktstraße; São Paulo, Kraków too. Straßenbahn, straßenbahnen everywhere: straßenbahnen.";
        let k = keywords(text, 10);
        for want in ["Müller", "Holzmarktstraße", "São Paulo", "Kraków", "straßenbahnen"] {
            assert!(k.iter().any(|w| w == want), "{want} in {k:?}");
        }
        assert!(!k.iter().any(|w| w == "Holzmarktstra" || w == "Krak"), "{k:?}");
    }

    const SOURCE: &str = "[2023-05-08 13:56] user: Hey! Good to see you.\n\
        [2023-05-08 13:57] assistant: Thanks, you too. How was the weekend?\n\
        [2023-05-08 13:58] user: I went to the LGBTQ support group on 7 May 2023 with Caroline. It was so powerful.\n\
        [2023-05-08 13:59] assistant: That sounds great. What did you decide about the adoption agency?\n\
        [2023-05-08 14:00] user: We decided to apply to Hope Adoption in Boston before June 30. I love the idea.\n\
        [2023-05-08 14:01] user: ok\n";

    #[test]
    fn the_speakers_names_do_not_make_a_line_salient_and_once_said_words_do() {
        let input = "- [2023-05-08 14:01] user: Caroline: We bought a present for the party. The present was big.\n\
                     - [2023-05-08 14:02] assistant: Melanie: Another present! We also bought a telescope.\n";
        let stats = InputStats::of(input);
        assert_eq!(stats.speakers, HashSet::from(["Caroline".to_string(), "Melanie".to_string()]));
        let score = |s: &str| score_sentence(s, false, &stats, 2.0);
        // Addressing the other speaker is not a fact; naming someone else is.
        assert!(score("Melanie: Glad you liked it, Caroline.") < score("Melanie: Glad you liked it, Joanna."));
        // "telescope" is said once in the span, "present" three times.
        assert!(score("Melanie: We also bought a present.") < score("Melanie: We also bought a telescope."));
        // A CJK run is not a word said once.
        assert_eq!(content_words("我们买了一个望远镜 telescope").collect::<Vec<_>>(), vec!["telescope".to_string()]);
    }

    #[test]
    fn every_sentence_kept_from_a_line_keeps_who_said_it() {
        let input = "[2023-05-25 13:14] assistant: Melanie: Hey Caroline, good to hear from you. \
                     Yesterday was long. I ran a charity race for mental health on 20 May.\n\
                     [2023-05-25 13:15] user: Caroline: That's great! I went to a support group on 7 May 2023.\n";
        let attributed = |out: &str, words: &str, speaker: &str| {
            out.lines().filter(|l| l.contains(words)).all(|l| l.starts_with(&format!("- [2023-05-25 {speaker}:")))
                && out.contains(words)
        };
        for target_tokens in [50, 65, 120] {
            let leaf = SummaryInput { kind: SummaryKind::Leaf, mode: SummaryMode::Normal, text: input, target_tokens };
            let out = ExtractiveSummarizer.summarize(&leaf).unwrap();
            assert!(attributed(&out, "charity race", "13:14] assistant: Melanie"), "{out}");
            // Condensing keeps the attribution, once per line.
            let condensed =
                SummaryInput { kind: SummaryKind::Condensed, mode: SummaryMode::Normal, text: &out, target_tokens };
            let again = ExtractiveSummarizer.summarize(&condensed).unwrap();
            assert!(attributed(&again, "charity race", "13:14] assistant: Melanie"), "{again}");
            assert!(!again.contains("Melanie: Melanie:"), "{again}");
        }
    }

    #[test]
    fn a_summary_opens_with_each_speaker_s_subjects() {
        let input = "[2023-07-15 13:55] user: Caroline: I went to a council meeting about the adoption.\n\
                     [2023-07-15 13:56] assistant: Melanie: Awesome! I finished my pottery class today.\n\
                     [2023-07-20 20:57] user: Caroline: The adoption agency called back. It was awesome.\n\
                     [2023-07-20 20:58] assistant: Melanie: Awesome, Caroline! My pottery bowls are drying.\n\
                     [2023-07-20 20:59] user: Caroline: Really awesome, the adoption is close.\n";
        let line = subjects_line(input, 4).unwrap();
        assert_eq!(line, "- Subjects: Caroline: adoption; Melanie: pottery.", "{line}");
        // Both say "awesome": talk, not a subject. Nobody's name is a subject either.
        let leaf = SummaryInput { kind: SummaryKind::Leaf, mode: SummaryMode::Normal, text: input, target_tokens: 200 };
        let out = ExtractiveSummarizer.summarize(&leaf).unwrap();
        assert!(out.starts_with(&line), "{out}");
        // A condensed summary writes its own line, not its children's again.
        let condensed = SummaryInput { kind: SummaryKind::Condensed, text: &out, ..leaf };
        let again = ExtractiveSummarizer.summarize(&condensed).unwrap();
        assert_eq!(again.matches(SUBJECTS).count(), 1, "{again}");
        assert!(subjects_line("[2023-07-20 20:59] user: ok, thanks\n", 4).is_none());
    }

    #[test]
    fn a_span_of_summaries_keeps_what_people_did_over_the_questions_they_asked() {
        let input = "- [2023-08-17 13:58] user: Caroline: Any particular type of flooring you like?\n\
                     - [2023-08-17 13:59] assistant: Melanie: We finally adopted a puppy named Oscar.\n\
                     - [2023-08-17 14:00] user: Caroline: What made you decide on that color for the walls?\n\
                     - [2023-08-17 14:01] assistant: Melanie: I painted the nursery last weekend.\n";
        let condensed =
            SummaryInput { kind: SummaryKind::Condensed, mode: SummaryMode::Normal, text: input, target_tokens: 80 };
        let out = ExtractiveSummarizer.summarize(&condensed).unwrap();
        assert!(out.contains("adopted a puppy") && out.contains("painted the nursery"), "{out}");
        assert!(!out.contains("flooring"), "{out}");
        // In a span of messages a question may still be open, and counts.
        let stats = InputStats::of(input);
        let q = "Caroline: Any particular type of flooring you like?";
        assert!(
            score_sentence(q, false, &stats, question_weight(SummaryKind::Leaf))
                > score_sentence(q, false, &stats, question_weight(SummaryKind::Condensed))
        );
    }

    #[test]
    fn the_footer_names_no_weekday_month_or_sentence_opener() {
        let text = "[2023-07-15 13:55] user: Caroline: Last Friday I went to Boston. Got any plans for July?\n\
                    [2023-07-16 13:55] user: Caroline: Last Friday was fun. Got tickets for Boston in July.\n";
        let words = keywords(text, 8);
        assert!(words.contains(&"Boston".to_string()), "{words:?}");
        for no in ["Friday", "July", "Last", "Got", "Caroline"] {
            assert!(!words.iter().any(|w| w == no), "{no} in {words:?}");
        }
    }

    #[test]
    fn extractive_keeps_names_numbers_dates_and_decisions() {
        let input =
            SummaryInput { kind: SummaryKind::Leaf, mode: SummaryMode::Normal, text: SOURCE, target_tokens: 90 };
        let out = ExtractiveSummarizer.summarize(&input).unwrap();
        assert!(out.contains("7 May 2023"), "{out}");
        assert!(out.contains("Hope Adoption"), "{out}");
        assert!(out.contains("June 30"), "{out}");
        assert!(out.contains("[2023-05-08 14:00] user:"), "dates and speakers are kept: {out}");
        assert!(!out.contains("user: ok"), "fillers are dropped: {out}");
        assert!(out.trim_end().lines().last().unwrap().starts_with(EXPAND_FOOTER));
        assert!(out.contains("Caroline") || out.contains("Boston"));
        assert!(estimate_tokens(&out) <= 90, "{}", estimate_tokens(&out));
    }

    #[test]
    fn extractive_is_deterministic_and_shrinks_when_aggressive() {
        let normal =
            SummaryInput { kind: SummaryKind::Leaf, mode: SummaryMode::Normal, text: SOURCE, target_tokens: 200 };
        let a = ExtractiveSummarizer.summarize(&normal).unwrap();
        assert_eq!(a, ExtractiveSummarizer.summarize(&normal).unwrap());
        let aggressive = SummaryInput { mode: SummaryMode::Aggressive, ..normal };
        let (normal_tokens, aggressive_tokens) =
            (estimate_tokens(&a), estimate_tokens(&ExtractiveSummarizer.summarize(&aggressive).unwrap()));
        assert!(aggressive_tokens < normal_tokens, "aggressive shrinks: {aggressive_tokens} vs {normal_tokens}");
    }

    #[test]
    fn truncation_is_always_smaller() {
        for n in [10usize, 100, 1000, 10_000] {
            let src = "word ".repeat(n);
            let tokens = estimate_tokens(&src);
            let out = truncate_summary(&src, tokens / 2);
            assert!(estimate_tokens(&out) <= (tokens / 2).max(1) || tokens < 40, "n={n}");
            assert_eq!(out.contains(EXPAND_FOOTER), n >= 100, "the footer when there is room for it: {out}");
            assert!(!out.contains("wor\n") && !out.contains("\nord"), "cut between words: {out}");
        }
        let cjk = "我住在北京，我喜欢喝茶。".repeat(300);
        let out = truncate_summary(&cjk, 200);
        assert!(estimate_tokens(&out) <= 200);
    }

    #[test]
    fn a_short_span_truncated_keeps_whole_words_of_what_was_said() {
        // What a flush of a four-message session must fold into fewer tokens than its source.
        let src = "[2026-01-01 10:00] user: We planned a road-trip along the coast for May, with a stop in Porto.\n\
                   [2026-01-01 10:01] assistant: A road-trip sounds great; Porto in May is lovely.\n\
                   [2026-01-01 10:02] user: Also my sister-in-law Ana joins us.\n\
                   [2026-01-01 10:03] assistant: Noted, Ana comes along.\n";
        for max in [16, 22, 30] {
            let whole = truncate_summary(src, max);
            assert!(estimate_tokens(&whole) <= max, "{max}: {whole}");
            let out = whole.split(&format!("\n{EXPAND_FOOTER}")).next().unwrap();
            assert!(out.starts_with("[2026-01-01 10:00] user: We planned"), "{max}: {out}");
            assert!(out.ends_with(" […]"), "the cut is marked: {out}");
            let words = out.trim_end_matches(" […]").split_whitespace().count();
            assert!(src.split_whitespace().take(words).eq(out.trim_end_matches(" […]").split_whitespace()), "{out}");
        }
        // Too small for a word: the mark alone.
        assert_eq!(truncate_summary(src, 1), "[…]");
    }

    struct Echo;
    impl Summarizer for Echo {
        fn summarize(&self, input: &SummaryInput<'_>) -> Result<String, LlmError> {
            Ok(input.text.to_string())
        }
        fn label(&self) -> String {
            "echo".into()
        }
    }

    struct Broken;
    impl Summarizer for Broken {
        fn summarize(&self, _: &SummaryInput<'_>) -> Result<String, LlmError> {
            Err(LlmError::Host("down".into()))
        }
        fn label(&self) -> String {
            "broken".into()
        }
    }

    #[test]
    fn escalation_ends_smaller_than_source() {
        let tokens = estimate_tokens(SOURCE);
        let p = summarize_escalating(&Echo, SummaryKind::Leaf, SOURCE, tokens, 40);
        assert_eq!(p.method, Escalation::Truncated);
        assert!(estimate_tokens(&p.text) < tokens);
        let p = summarize_escalating(&Broken, SummaryKind::Leaf, SOURCE, tokens, 60);
        assert_eq!(p.method, Escalation::ExtractiveFallback);
        assert!(p.text.contains("Hope Adoption"));
    }
}
