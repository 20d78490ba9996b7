//! The shapes of what a rule reads: how the object is cut from what its pattern matched.

use std::sync::LazyLock;

use memcc_core::text::static_regex;
use regex::Regex;

use super::vocab;

/// How a rule cuts its object from the text its pattern captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// Up to the end of its clause, without trailing fillers; it must say something of its own
    /// ([`clause`]).
    Clause,
    /// A capitalised name, or else the clause, at most five words ([`name_or_clause`]).
    Name,
    /// The first five words.
    Words,
    /// What the pattern captured, as it is (its pattern bounds it).
    Span,
    /// A coded value: an address, a version, a code with digits (its kind is the predicate).
    Value,
    /// A date, kept in one form ([`date`]).
    Date,
    /// A thing chosen, without its article or what follows it ([`choice`]).
    Choice,
}

impl Object {
    /// The object read from `raw` by a rule of this shape (`chinese`: the rule's language).
    pub fn read(self, raw: &str, chinese: bool) -> Option<String> {
        let read = match self {
            Object::Clause => clause(raw, chinese)?,
            Object::Name => name_or_clause(raw),
            Object::Words => first_words(raw),
            Object::Span | Object::Value => raw.to_string(),
            Object::Date => date(raw)?,
            Object::Choice => choice(raw, chinese)?,
        };
        (!read.is_empty()).then_some(read)
    }
}

static CLAUSE_END: LazyLock<Regex> = LazyLock::new(|| static_regex(vocab::CLAUSE_END));

/// Whether an English object says something of its own: it holds a word that is not a
/// function word ("I love to." elides what is loved), starts no new predicate, leaves no
/// preposition hanging, and is not a reaction to what the other speaker said (it names them,
/// "your plan", or takes up their proposal, "the idea of…").
fn says_something(object: &str) -> bool {
    let words: Vec<String> = object.split_whitespace().map(str::to_lowercase).collect();
    let (Some(first), Some(last)) = (words.first(), words.last()) else { return false };
    let bare = |w: &String| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
    let lower = words.join(" ");
    words.iter().any(|w| !memcc_core::text::is_stop_word(&bare(w)))
        && !vocab::STARTS_A_PREDICATE.contains(&first.as_str())
        && !vocab::DANGLING.contains(&last.as_str())
        && !words.iter().any(|w| vocab::SECOND_PERSON.contains(&bare(w).as_str()))
        && !vocab::REACTION_STARTS.iter().any(|r| lower == *r || lower.starts_with(&format!("{r} ")))
}

/// The captured object cut at the end of its clause, within CJK-aware length bounds.
fn clause(raw: &str, chinese: bool) -> Option<String> {
    let cut = CLAUSE_END.find(raw).map_or(raw, |m| &raw[..m.start()]);
    let mut obj = cut.trim().trim_end_matches(['"', '\'', ')', '”']).trim();
    while let Some(rest) = vocab::TRAILING_FILLERS.iter().find_map(|f| strip_suffix_ignore_case(obj, f)) {
        obj = rest.trim_end();
    }
    let lower = obj.to_lowercase();
    if vocab::VAGUE_OBJECTS.iter().any(|v| lower == *v || lower.starts_with(&format!("{v} "))) {
        return None;
    }
    let chars = obj.chars().count();
    let cjk = obj.chars().filter(|c| memcc_core::text::is_cjk_letter(*c)).count();
    let ok = if chinese || cjk * 2 > chars {
        (1..=20).contains(&chars)
    } else {
        (2..=80).contains(&chars) && obj.split_whitespace().count() <= 12 && says_something(obj)
    };
    ok.then(|| obj.to_string())
}

fn strip_suffix_ignore_case<'t>(text: &'t str, suffix: &str) -> Option<&'t str> {
    let start = text.len().checked_sub(suffix.len())?;
    (text.is_char_boundary(start) && text[start..].eq_ignore_ascii_case(suffix)).then(|| &text[..start])
}

/// At most five words, without a trailing stop.
fn first_words(text: &str) -> String {
    let object: String = text.split_whitespace().take(5).collect::<Vec<_>>().join(" ");
    object.trim_end_matches(['.', ',']).to_string()
}

/// A capitalised object is the name it starts with ("Boston and I work at…" → "Boston"); any
/// other ends with its clause. Either way at most five words.
fn name_or_clause(text: &str) -> String {
    if !text.starts_with(|c: char| c.is_uppercase()) {
        let cut = CLAUSE_END.find(text).map_or(text, |m| &text[..m.start()]);
        return first_words(cut);
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    // "I" starts the next clause, not a name.
    let capital = |w: &str| w.starts_with(|c: char| c.is_uppercase()) && w != "I" && !w.starts_with("I'");
    let mut end = 0;
    while end < words.len() && end < 5 {
        let w = words[end].trim_end_matches(['.', ',', ';', '!', '?']);
        let joins = vocab::NAME_JOINERS.contains(&w) && words.get(end + 1).is_some_and(|n| capital(n));
        if !(capital(w) || joins) {
            break;
        }
        end += 1;
        if w.len() != words[end - 1].len() {
            break; // the name ends with its punctuation
        }
    }
    first_words(&words[..end].join(" "))
}

/// A date as a setting keeps it, so that two ways of writing one date are one value: "June 1st"
/// and "1 June" → "June 1", "1 of June, 2027" → "June 1, 2027", "next Friday" → "Friday"; an ISO
/// date as it is. `None` for what is not a date.
pub fn date(value: &str) -> Option<String> {
    static DATE: LazyLock<Regex> = LazyLock::new(|| {
        static_regex(&format!(
            r"(?i)^(?:(?:this |next )?(?P<wd>{weekday})|(?P<m1>{month})\.? (?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<y1>\d{{4}}))?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m2>{month})(?:,? (?P<y2>\d{{4}}))?|(?P<iso>\d{{4}}-\d{{2}}-\d{{2}}))$",
            weekday = vocab::WEEKDAY,
            month = vocab::MONTH,
        ))
    });
    let c = DATE.captures(value.trim())?;
    if let Some(iso) = c.name("iso") {
        return Some(iso.as_str().to_string());
    }
    if let Some(wd) = c.name("wd") {
        let wd = wd.as_str().to_lowercase();
        return Some(wd[..1].to_uppercase() + &wd[1..]);
    }
    let (m, d, y) = match (c.name("m1"), c.name("d1")) {
        (Some(m), Some(d)) => (m, d, c.name("y1")),
        _ => (c.name("m2")?, c.name("d2")?, c.name("y2")),
    };
    let month = vocab::month_number(m.as_str()).and_then(|n| chrono::Month::try_from(u8::try_from(n).ok()?).ok())?;
    let month = month.name();
    let day: u32 = d.as_str().parse().ok().filter(|d| (1..=31).contains(d))?;
    Some(match y {
        Some(y) => format!("{month} {day}, {}", y.as_str()),
        None => format!("{month} {day}"),
    })
}

/// A choice as a replacement keeps it: without the article, possessive or "old"/"new" before
/// it, up to the first word that starts another clause ("Vitest for unit tests" → "Vitest");
/// `None` for a pronoun, a vague word, or what has no letter (a quantity: "from 5 to 10").
fn choice(raw: &str, chinese: bool) -> Option<String> {
    let text = raw.trim().trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']);
    let kept = if chinese {
        text.trim_end_matches('了').to_string()
    } else {
        let words: Vec<&str> = text.split(' ').collect();
        let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let before =
            |w: &&String| vocab::DETERMINERS.contains(&w.as_str()) || vocab::WHICH_CHOICE.contains(&w.as_str());
        let start = lower.iter().take_while(before).count();
        // An adverb ("immediately", "finally") ends it too; a name ("Italy") does not.
        let ends = |(w, l): (&&str, &String)| {
            vocab::ENDS_A_CHOICE.contains(&l.as_str()) || (l.ends_with("ly") && *w == l.as_str())
        };
        let end = words.iter().zip(&lower).skip(start).position(ends).map_or(words.len(), |i| start + i);
        words[start..end].join(" ")
    };
    let lower = kept.to_lowercase();
    let vague = lower.split(' ').any(|w| vocab::VAGUE_SUBJECTS.contains(&w) || vocab::VAGUE_CHOICES.contains(&w));
    (!kept.is_empty() && !vague && kept.chars().any(char::is_alphabetic)).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_date_written_two_ways_is_one_value() {
        assert_eq!(date("1st of June"), date("June 1"));
        assert_eq!(date("June 32"), None);
        assert_eq!(date("next friday").as_deref(), Some("Friday"));
    }

    #[test]
    fn a_name_ends_where_its_capitals_do() {
        assert_eq!(name_or_clause("Bank of America in Boston"), "Bank of America");
        assert_eq!(name_or_clause("Boston and I work at Fidelity"), "Boston");
        assert_eq!(name_or_clause("New York City now."), "New York City");
    }
}
