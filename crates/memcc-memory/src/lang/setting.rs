//! Settings and dates: a thing stated with its coded value ("the staging database is now
//! db-staging-7:6432", "our API runs on Node 24.11", "my phone number is 555-0182") or with the
//! date it is set for ("the launch was pushed to 8 June").
//!
//! The value is what code and operations change — an address (URL, host, host:port, IP), a
//! version, a code with digits — so a later statement of the same thing with another value
//! supersedes the older one, as "I live in Lisbon now" does Boston. Prose values ("the plan is to
//! wait") are left alone: two of them about one subject are as often two facts as one that
//! changed. A date said of a past event ("the party was on Saturday") is what happened, not a
//! plan that may change, and is not read.

use std::sync::LazyLock;

use memcc_core::text::static_regex;
use regex::Regex;

use super::Language::English;
use super::{Keyed, Object, Predicate, Rule, Sentences, object, vocab};
use crate::record::NewTriple;

pub static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let day = r"\d{1,2}(?:st|nd|rd|th)?";
    let month = vocab::MONTH;
    let weekday = vocab::WEEKDAY;
    let date = format!(
        r"(?:(?:this |next )?{weekday}|{month}\.? {day}(?:,? \d{{4}})?|{day}(?: of)? {month}(?:,? \d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}})"
    );
    vec![
        Rule::new(
            "setting",
            English,
            r"(?i)(?:^|[\s:(])(?:the |our |my |your |its )?(?P<s>[a-z][\w-]*(?: [a-z][\w-]*){0,3}?)(?: (?:is|are|was)(?: now| still)?| now| (?:runs|listens|lives|points|moved|changed|went)(?: now)?)(?: (?:at|on|to|in|from))?(?: now)? (?P<o>https?://[^\s,;]+|[\w][\w.-]*[:.][\w.:/-]*\w|\w*\d[\w-]*)(?:[\s,;.!?)]|$)",
            Keyed::ByValue,
            Object::Value,
        )
        .examples(&[
            ("The staging database is db-staging-3.internal:5432.", "staging database is_at db-staging-3.internal:5432"),
            (
                "user: Heads up, the staging database is now db-staging-7:6432 since Monday.",
                "staging database is_at db-staging-7:6432",
            ),
            ("Note that the staging database moved to 10.0.3.7.", "staging database is_at 10.0.3.7"),
            ("Our API runs on v24.11.0 now.", "api version v24.11.0"),
            ("The docs site is at https://docs.example.com/v2.", "docs site is_at https://docs.example.com/v2"),
            ("My phone number is 555-0182.", "phone number is 555-0182"),
        ])
        // Prose, pronouns, quantities, questions and dates are not settings.
        .counter_examples(&[
            "The plan is to wait until spring.",
            "It is 3.5 km from here.",
            "The team is 12 people.",
            "Is the staging database db-staging-3:5432?",
            "That is version 2.",
            "I was born in 1990.",
            "The deadline is 2027-03-03.",
        ]),
        Rule::new(
            "scheduled",
            English,
            &format!(
                r"(?i)(?:^|[\s:(])(?P<s>[a-z][\w-]*(?: [a-z][\w-]*){{0,3}}?) (?:(?:is|are)(?: now| still)?(?: (?:scheduled|planned|set|booked|due|happening))?(?: (?:on|for))?|(?:(?:has|have) been |was |were |got |is |are )?(?:moved|pushed(?: back)?|postponed|rescheduled|delayed|brought forward|shifted)(?: to| until))(?: now)? (?P<o>{date})\b"
            ),
            Keyed::By(Predicate::IsOn),
            Object::Date,
        )
        .examples(&[
            ("The launch is on June 1st.", "launch is_on June 1"),
            ("Heads up: the launch was pushed to 8 June.", "launch is_on June 8"),
            ("We agreed the design review moved to next Friday.", "design review is_on Friday"),
            ("Our demo is now scheduled for Sept 3, 2027.", "demo is_on September 3, 2027"),
            ("The deadline is 2027-03-03.", "deadline is_on 2027-03-03"),
            ("The offsite has been postponed until 2 of May 2027.", "offsite is_on May 2, 2027"),
        ])
        .counter_examples(&[
            "The party was on Saturday.",
            "I went camping on May 3.",
            "We are on Friday's call.",
            "Is the launch on June 1?",
            "The launch is on track.",
            "It is on June 1.",
        ]),
    ]
});

/// The settings and dates of `sentences`, in their order.
pub(super) fn read(sentences: &Sentences<'_>) -> Vec<NewTriple> {
    super::read_triples(&RULES, sentences, read_one)
}

fn read_one(rule: &Rule, sentence: &str) -> Vec<NewTriple> {
    rule.pattern
        .captures_iter(sentence)
        .filter_map(|c| {
            let subject = subject(c.name("s")?.as_str())?;
            let object = rule.object.read(c.name("o")?.as_str(), rule.chinese())?;
            let predicate = match rule.keyed {
                Keyed::By(p) => p,
                Keyed::ByValue => kind_of(&object)?,
                Keyed::Never => return None,
            };
            Some(NewTriple { subject, predicate: predicate.key().to_string(), object, valid_from: None })
        })
        .collect()
}

/// What `rule` (one of [`RULES`]) alone reads in `text`: "subject predicate object".
pub(super) fn read_alone(rule: &Rule, text: &str) -> Vec<String> {
    super::triples_alone(rule, text, read_one)
}

/// The kind of a setting's value: where a thing is, which version it runs, or another code;
/// `None` for a date (the scheduled rule reads it) or a bare quantity.
fn kind_of(value: &str) -> Option<Predicate> {
    static VERSION: LazyLock<Regex> = LazyLock::new(|| static_regex(r"^v?\d+(?:\.\d+){1,2}(?:[-+][\w.]+)?$"));
    static IP: LazyLock<Regex> = LazyLock::new(|| static_regex(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$"));
    let digits = value.chars().filter(char::is_ascii_digit).count();
    if object::date(value).is_some() {
        return None;
    }
    if value.starts_with("http://") || value.starts_with("https://") || IP.is_match(value) {
        return Some(Predicate::IsAt);
    }
    if VERSION.is_match(value) {
        return Some(Predicate::Version);
    }
    let host = value.contains(':') || (value.contains('.') && value.chars().any(char::is_alphabetic));
    if host && !value.ends_with(['.', ':']) {
        return Some(Predicate::IsAt);
    }
    // A bare number is a quantity more often than a setting ("the team is 12"); a code mixes.
    (digits > 0 && (value.contains('-') || value.chars().any(char::is_alphabetic)) || digits >= 3)
        .then_some(Predicate::Is)
}

/// What a setting's value is of: "Note that the staging database" → "staging database", "we
/// agreed the launch" → "launch" (what follows the last article or possessive); `None` for a
/// pronoun or a vague word, which names nothing to supersede.
fn subject(raw: &str) -> Option<String> {
    let lower = raw.to_lowercase();
    let words: Vec<&str> = lower.split(' ').collect();
    let after_determiner = words.iter().rposition(|w| vocab::DETERMINERS.contains(w)).map_or(0, |i| i + 1);
    let words: Vec<&str> =
        words[after_determiner..].iter().copied().skip_while(|w| vocab::SETTING_LEAD.contains(w)).collect();
    (!words.is_empty() && !words.iter().any(|w| vocab::VAGUE_SUBJECTS.contains(w))).then(|| words.join(" "))
}
