//! The language rules: what memory reads in what people say, and how it reads a question.
//!
//! Everything here is about words, English and Chinese, and nothing else in the crate holds a
//! pattern over them:
//!
//! - reading what was said ([`Sentences`]), by family — [`preference`] (likes, habits, goals,
//!   biography: a "User …" document each), [`fact`] (who works or lives where, relations),
//!   [`setting`] (a thing's coded value or scheduled date) and [`replacement`] (a choice that
//!   replaced another). Each family is a table of [`Rule`]s read by one reader;
//! - reading a question: [`question`] (its terms, what it names, the predicates it asks about),
//!   [`period`] (the time it names), [`irregular`] (the other forms of its verbs);
//! - the words they share: [`vocab`].
//!
//! **One shape for every rule.** A rule is a row: its name, its language, its pattern, the
//! [`Predicate`] a statement it reads is kept under (so that a later one supersedes it), the
//! [`Object`] shape it cuts from the match, and its own examples and counter-examples. One test
//! walks every row and fails a rule without an example; adding a language means adding rows and
//! vocabulary, not code.
//!
//! **Read twice on purpose.** "I live in Lisbon", "I'm allergic to peanuts" (住在, 在…工作,
//! 对…过敏) are read both as a preference and as a fact: the preference's document keeps the
//! whole clause for recall ("User lives in Lisbon with two cats."), the fact keeps the name alone
//! so that "I moved to Porto" supersedes it.

pub mod fact;
pub mod irregular;
pub mod object;
pub mod period;
pub mod preference;
pub mod question;
pub mod replacement;
pub mod setting;
pub mod vocab;

use std::sync::LazyLock;

use memcc_core::text::static_regex;
use regex::Regex;

use crate::record::NewTriple;
pub use object::Object;
pub use preference::{PrefCategory, Preference};

/// The language a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    Chinese,
}

/// What a statement is kept under, so that a later statement of the same subject and predicate
/// supersedes it, and a question asking about it finds it ([`Predicate::cues`]). Stored as text
/// ([`Predicate::key`]); a predicate an LLM extracted is any text and has no variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    /// How the user feels about the object: "sentiment:{object}".
    Sentiment,
    /// "My favourite {kind} is …": "favorite:{kind}".
    Favorite,
    Name,
    Occupation,
    LivesIn,
    Origin,
    GrewUpIn,
    WorksAt,
    AllergicTo,
    MarriedTo,
    Birthday,
    /// A relation to a named person or pet: "has_{relation}" ("has_sister").
    Has,
    /// Where a thing is: an address, a host, a URL.
    IsAt,
    Version,
    /// Another coded value ("my phone number is 555-0182").
    Is,
    /// The date a thing is set for.
    IsOn,
    /// The older choice's triple: replaced by the object.
    ReplacedBy,
}

impl Predicate {
    const ALL: [Predicate; 17] = [
        Predicate::Sentiment,
        Predicate::Favorite,
        Predicate::Name,
        Predicate::Occupation,
        Predicate::LivesIn,
        Predicate::Origin,
        Predicate::GrewUpIn,
        Predicate::WorksAt,
        Predicate::AllergicTo,
        Predicate::MarriedTo,
        Predicate::Birthday,
        Predicate::Has,
        Predicate::IsAt,
        Predicate::Version,
        Predicate::Is,
        Predicate::IsOn,
        Predicate::ReplacedBy,
    ];

    /// The stored text, or its prefix for the predicates keyed by what was said.
    pub const fn key(self) -> &'static str {
        match self {
            Predicate::Sentiment => "sentiment:",
            Predicate::Favorite => "favorite:",
            Predicate::Name => "name",
            Predicate::Occupation => "occupation",
            Predicate::LivesIn => "lives_in",
            Predicate::Origin => "origin",
            Predicate::GrewUpIn => "grew_up_in",
            Predicate::WorksAt => "works_at",
            Predicate::AllergicTo => "allergic_to",
            Predicate::MarriedTo => "married_to",
            Predicate::Birthday => "birthday",
            Predicate::Has => "has_",
            Predicate::IsAt => "is_at",
            Predicate::Version => "version",
            Predicate::Is => "is",
            Predicate::IsOn => "is_on",
            Predicate::ReplacedBy => "replaced_by",
        }
    }

    /// The stored text of a statement: `kind` is the rule's captured kind ("drink" of "my
    /// favorite drink", "sister" of "my sister Mia"), `object` what it read.
    pub fn stored(self, kind: &str, object: &str) -> String {
        match self {
            Predicate::Sentiment => format!("{}{}", self.key(), object.to_lowercase()),
            Predicate::Favorite | Predicate::Has => format!("{}{kind}", self.key()),
            _ => self.key().to_string(),
        }
    }

    /// The predicate a stored text is of, when one of these rules wrote it.
    pub fn of_stored(text: &str) -> Option<Predicate> {
        Self::ALL.into_iter().find(|p| match p {
            Predicate::Sentiment | Predicate::Favorite | Predicate::Has => text.starts_with(p.key()),
            _ => text == p.key(),
        })
    }

    /// How a question asks about it: the beginnings of its words ("Where does she *work*?" →
    /// `works_at`), English and Chinese. Empty for those asked about by their own words.
    pub fn cues(self) -> &'static [&'static str] {
        match self {
            Predicate::WorksAt => &["work", "job", "employ", "company", "office", "career", "工作", "上班", "公司"],
            Predicate::LivesIn => {
                &["live", "living", "home", "move", "moving", "city", "town", "country", "reside", "住", "搬"]
            }
            Predicate::AllergicTo => &["allerg", "过敏"],
            Predicate::MarriedTo => &["marri", "marry", "husband", "wife", "spouse", "结婚", "丈夫", "妻子"],
            Predicate::Birthday => &["birthday", "born", "birth", "生日", "出生"],
            Predicate::IsAt => {
                &["host", "server", "address", "url", "endpoint", "port", "connect", "ip", "domain", "where"]
            }
            Predicate::Version => &["version", "release", "upgrad", "run"],
            Predicate::Is => &["value", "code", "number"],
            Predicate::ReplacedBy => {
                &["use", "using", "replac", "switch", "instead", "still", "now", "current", "migrat"]
            }
            Predicate::IsOn => &["when", "date", "day", "schedul", "due", "deadline", "postpon", "resched", "delay"],
            _ => &[],
        }
    }
}

/// How a question asks about a stored predicate: its [`Predicate::cues`], or for a predicate of
/// another origin (an LLM's) or without cues, its own words ("likes_food" → "likes", "food";
/// `has_sister` → "sister").
pub fn predicate_cues(predicate: &str) -> Vec<String> {
    if let Some(cues) = Predicate::of_stored(predicate).map(Predicate::cues).filter(|c| !c.is_empty()) {
        return cues.iter().map(|c| c.to_string()).collect();
    }
    let words = predicate.strip_prefix(Predicate::Has.key()).unwrap_or(predicate);
    words.split(['_', ' ']).filter(|w| w.chars().count() > 1).map(str::to_lowercase).collect()
}

/// Under what a rule keeps what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyed {
    /// Nothing supersedes it (a habit, a goal: two of them are two, not one that changed).
    Never,
    By(Predicate),
    /// The value's kind decides: an address, a version or another code ([`setting`]).
    ByValue,
}

/// One way of saying something, as a row.
pub struct Rule {
    pub name: &'static str,
    pub language: Language,
    pub pattern: Regex,
    pub keyed: Keyed,
    pub object: Object,
    /// Sentences it reads, each with what it reads there (a replacement: "old → new"; a
    /// triple: "subject predicate object").
    pub examples: &'static [(&'static str, &'static str)],
    /// Sentences it must not read, each for a reason its row's comment or the pattern gives.
    pub counter_examples: &'static [&'static str],
}

impl Rule {
    pub fn new(name: &'static str, language: Language, pattern: &str, keyed: Keyed, object: Object) -> Rule {
        Rule { name, language, pattern: static_regex(pattern), keyed, object, examples: &[], counter_examples: &[] }
    }

    pub fn examples(mut self, examples: &'static [(&'static str, &'static str)]) -> Rule {
        self.examples = examples;
        self
    }

    pub fn counter_examples(mut self, counter: &'static [&'static str]) -> Rule {
        self.counter_examples = counter;
        self
    }

    pub fn chinese(&self) -> bool {
        self.language == Language::Chinese
    }
}

/// The sentences of a text that state something, split once for every family's rules: questions
/// are left out ("do I like…?" states nothing), and a dot inside a word or a value ("Node.js",
/// "db-staging-3.internal", "v24.11") does not end one.
pub struct Sentences<'t> {
    sentences: Vec<&'t str>,
}

impl<'t> Sentences<'t> {
    pub fn of(text: &'t str) -> Sentences<'t> {
        static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| static_regex(r"[.!?]+(?:\s+|$)|[。！？]+|\n+"));
        let mut sentences = Vec::new();
        let mut start = 0;
        let mut ends: Vec<(usize, usize)> = SENTENCE_END.find_iter(text).map(|m| (m.start(), m.end())).collect();
        ends.push((text.len(), text.len()));
        for (end, next) in ends {
            let sentence = text[start..end].trim();
            let asked = text[end..next].contains(['?', '？']);
            start = next;
            if !asked && !sentence.is_empty() {
                sentences.push(sentence);
            }
        }
        Sentences { sentences }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'t str> + '_ {
        self.sentences.iter().copied()
    }

    /// The preferences stated ([`preference`]).
    pub fn preferences(&self) -> Vec<Preference> {
        preference::read(self)
    }

    /// The (subject, predicate, object) statements: facts, settings and dates, replaced
    /// choices; "I"/"my"/"我" is the user. Each once.
    pub fn triples(&self) -> Vec<NewTriple> {
        let mut out: Vec<NewTriple> = Vec::new();
        for t in fact::read(self).into_iter().chain(setting::read(self)).chain(replacement::read(self)) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }
}

/// The triples `rules` read in `sentences`, sentence by sentence, rule by rule ([`Sentences::triples`]
/// keeps each once).
fn read_triples(
    rules: &[Rule],
    sentences: &Sentences<'_>,
    read_one: fn(&Rule, &str) -> Vec<NewTriple>,
) -> Vec<NewTriple> {
    sentences.iter().flat_map(|s| rules.iter().flat_map(move |rule| read_one(rule, s))).collect()
}

/// What one triple rule alone reads in `text`, as "subject predicate object".
fn triples_alone(rule: &Rule, text: &str, read_one: fn(&Rule, &str) -> Vec<NewTriple>) -> Vec<String> {
    Sentences::of(text)
        .iter()
        .flat_map(|s| read_one(rule, s))
        .map(|t| format!("{} {} {}", t.subject, t.predicate, t.object))
        .collect()
}

/// The preferences stated in `text` (the user's own words).
pub fn preferences(text: &str) -> Vec<Preference> {
    Sentences::of(text).preferences()
}

/// The triples stated in `text` ([`Sentences::triples`]).
pub fn triples(text: &str) -> Vec<NewTriple> {
    Sentences::of(text).triples()
}

/// A reading rule as listed: its family, and what it reads alone in a text.
pub struct Listed {
    pub family: &'static str,
    pub rule: &'static Rule,
    pub read: fn(&Rule, &str) -> Vec<String>,
}

/// Every reading rule, by family (for the walking test and the reference's list).
pub fn rules() -> Vec<Listed> {
    let listed = |family, read| move |rule| Listed { family, rule, read };
    let mut out: Vec<Listed> = Vec::new();
    out.extend(preference::RULES.iter().map(|p| &p.rule).map(listed("preference", preference::read_alone)));
    out.extend(fact::RULES.iter().map(listed("fact", fact::read_alone)));
    out.extend(setting::RULES.iter().map(listed("setting", setting::read_alone)));
    out.extend(replacement::RULES.iter().map(listed("replacement", replacement::read_alone)));
    out
}

/// The reference's list of what memory reads (docs/reference.md, between its `rules` markers):
/// one line per rule, made from the rows themselves.
pub fn reference() -> String {
    let mut out = String::from("| family | rule | language | kept under | said → read |\n|---|---|---|---|---|\n");
    for Listed { family, rule, .. } in rules() {
        let language = match rule.language {
            Language::English => "English",
            Language::Chinese => "Chinese",
        };
        let keyed = match rule.keyed {
            Keyed::Never => "—".to_string(),
            Keyed::By(p) => format!("`{}`", p.stored("…", "…")),
            Keyed::ByValue => "`is_at`, `version` or `is`, by the value".to_string(),
        };
        let (said, read) = rule.examples.first().copied().unwrap_or_default();
        let cell = |t: &str| t.replace('|', "\\|");
        out.push_str(&format!(
            "| {family} | `{}` | {language} | {keyed} | {} → {} |\n",
            rule.name,
            cell(said),
            cell(read)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule reads each of its examples as the example says and none of its
    /// counter-examples; a rule without an example fails.
    #[test]
    fn every_rule_reads_its_examples_and_not_its_counter_examples() {
        let rules = rules();
        assert!(rules.len() >= 60, "{} rules", rules.len());
        for Listed { family, rule, read } in rules {
            assert!(!rule.examples.is_empty(), "{family} rule {} has no example", rule.name);
            for (said, reads) in rule.examples {
                let got = read(rule, said);
                assert!(
                    got.iter().any(|g| g == reads),
                    "{family} rule {}: {said:?} read {got:?}, not {reads:?}",
                    rule.name
                );
            }
            for said in rule.counter_examples {
                let got = read(rule, said);
                assert!(got.is_empty(), "{family} rule {}: counter-example {said:?} read {got:?}", rule.name);
            }
        }
    }

    /// docs/reference.md lists every rule as the rows say (`UPDATE_GOLDEN=1` rewrites the list).
    #[test]
    fn the_reference_lists_every_rule_as_its_row_says() {
        const START: &str =
            "<!-- rules: written by `lang::reference`, UPDATE_GOLDEN=1 cargo test -p memcc-memory -->\n";
        const END: &str = "<!-- rules end -->";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
            panic!("docs/reference.md lacks the rules markers")
        };
        let listed = &doc[a + START.len()..b];
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, format!("{}{}{}", &doc[..a + START.len()], reference(), &doc[b..])).unwrap();
            return;
        }
        assert_eq!(
            listed,
            reference(),
            "docs/reference.md's rule list is stale: UPDATE_GOLDEN=1 cargo test -p memcc-memory"
        );
    }

    #[test]
    fn rule_names_are_unique_within_a_family() {
        let rules = rules();
        for (i, r) in rules.iter().enumerate() {
            let twice = rules[..i].iter().any(|s| s.family == r.family && s.rule.name == r.rule.name);
            assert!(!twice, "{} rule {} twice", r.family, r.rule.name);
        }
    }

    #[test]
    fn a_stored_predicate_reads_back_as_its_variant() {
        for p in Predicate::ALL {
            assert_eq!(Predicate::of_stored(&p.stored("sister", "Tea")), Some(p), "{p:?}");
        }
        assert_eq!(Predicate::Sentiment.stored("", "Green Tea"), "sentiment:green tea");
        assert_eq!(Predicate::of_stored("likes_food"), None);
        assert_eq!(predicate_cues("likes_food"), ["likes", "food"]);
        assert_eq!(predicate_cues("has_sister"), ["sister"]);
        assert!(predicate_cues("works_at").contains(&"job".to_string()));
    }

    /// One splitter for every rule: a dot inside a name does not end the sentence a preference
    /// or a fact is read from ("Node.js" was read as "Node"), and a question still states nothing.
    #[test]
    fn a_dot_inside_a_name_does_not_cut_what_is_read() {
        let found = preferences("I really love Node.js for small tools. Do I love Deno?");
        assert!(found.iter().any(|p| p.object.contains("Node.js")), "{found:?}");
        assert!(!found.iter().any(|p| p.object.contains("Deno")), "{found:?}");
    }
}
