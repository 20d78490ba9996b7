//! Does a text contain an answer? The LLM-free measure of `memcc bench prompt`.
//!
//! Both the gold answer and the prompt are normalised the same way: HTML entities unescaped
//! (recall escapes `<`, `>`, `&`), lowercased, punctuation turned into spaces, English stop words
//! and articles dropped (NLTK's list). ISO dates (`[Date: 2023-05-08]`) also count as the way
//! people write them ("8 may 2023"), since gold answers are written that way. A gold answer
//! made only of stop words ("No") keeps them. *Strict*: every gold token is in the text;
//! *loose*: at least half of them are.

use memcc::lab::core::text::static_regex;
use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

static STOP_WORDS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| stop_words::lookup("en").unwrap_or_default().iter().copied().collect());

static ISO_DATE: LazyLock<Regex> = LazyLock::new(|| static_regex(r"\b(\d{4})-(\d{2})-(\d{2})\b"));

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Lowercased words of `text` (entities unescaped, punctuation as separators), stop words kept.
/// An identifier such as `mem_12` is one word, so ids never supply an answer's numbers.
fn words(text: &str) -> Vec<String> {
    let text = html_escape::decode_html_entities(text).to_lowercase();
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .flat_map(|w| if w.starts_with('_') || w.ends_with('_') { w.split('_').collect() } else { vec![w] })
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// `text`'s ISO dates as "8 may 2023" (appended; the original stays).
fn with_spoken_dates(text: &str) -> String {
    let mut extra = String::new();
    for c in ISO_DATE.captures_iter(text) {
        let (Ok(day), Ok(month)) = (c[3].parse::<u32>(), c[2].parse::<usize>()) else { continue };
        if let Some(name) = month.checked_sub(1).and_then(|m| MONTHS.get(m)) {
            extra.push_str(&format!(" {day} {name} {}", &c[1]));
        }
    }
    if extra.is_empty() { text.to_string() } else { format!("{text}{extra}") }
}

/// The normalised tokens of a text a model would see.
pub fn text_tokens(text: &str) -> HashSet<String> {
    words(&with_spoken_dates(text)).into_iter().filter(|w| !STOP_WORDS.contains(w.as_str())).collect()
}

/// The normalised tokens of a gold answer (its stop words only when it has nothing else).
pub fn gold_tokens(answer: &str) -> Vec<String> {
    let all = words(answer);
    let mut content: Vec<String> = all.iter().filter(|w| !STOP_WORDS.contains(w.as_str())).cloned().collect();
    if content.is_empty() {
        content = all;
    }
    let mut seen = HashSet::new();
    content.retain(|w| seen.insert(w.clone()));
    content
}

/// The share of a memory point's tokens a text must hold for the point to count as in it
/// ([`point_tokens`], [`contains_points`]). Fixed before any tuning; `memcc bench prompt
/// --dataset realmem` reports its calibration (a point's own source turn vs. another turn of the
/// same session, and the whole session).
pub const POINT_SHARE: f64 = 0.5;

/// Words a memory point is written in that no conversation turn says ("User agreed to…").
const POINT_FRAME: [&str; 3] = ["user", "users", "assistant"];

/// The normalised tokens of a RealMem memory point: its `【…】` labels dropped, then as
/// [`gold_tokens`], without the frame words ([`POINT_FRAME`]).
pub fn point_tokens(point: &str) -> Vec<String> {
    let mut text = String::with_capacity(point.len());
    let mut in_label = false;
    for c in point.chars() {
        match c {
            '【' => in_label = true,
            '】' => {
                in_label = false;
                text.push(' ');
            }
            _ if !in_label => text.push(c),
            _ => {}
        }
    }
    let mut tokens = gold_tokens(&text);
    tokens.retain(|t| !POINT_FRAME.contains(&t.as_str()));
    tokens
}

/// Whether one point (from [`point_tokens`]) is in `text`: at least [`POINT_SHARE`] of its tokens.
pub fn contains_point(text: &HashSet<String>, point: &[String]) -> bool {
    !point.is_empty()
        && point.iter().filter(|t| text.contains(t.as_str())).count() as f64 >= POINT_SHARE * point.len() as f64
}

/// Whether `text` holds a question's memory points: strict, every one; loose, at least half.
/// Points without a token are not counted; none left is never contained.
pub fn contains_points(text: &HashSet<String>, points: &[Vec<String>]) -> Containment {
    let points: Vec<&Vec<String>> = points.iter().filter(|p| !p.is_empty()).collect();
    if points.is_empty() {
        return Containment::default();
    }
    let found = points.iter().filter(|p| contains_point(text, p)).count();
    Containment { strict: found == points.len(), loose: 2 * found >= points.len() }
}

/// Whether `text` holds the answer, strictly and loosely.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Containment {
    pub strict: bool,
    pub loose: bool,
}

/// Containment of `gold` (from [`gold_tokens`]) in `text` (from [`text_tokens`]). An empty gold
/// is never contained.
pub fn contains(text: &HashSet<String>, gold: &[String]) -> Containment {
    if gold.is_empty() {
        return Containment::default();
    }
    let found = gold.iter().filter(|g| text.contains(g.as_str())).count();
    Containment { strict: found == gold.len(), loose: 2 * found >= gold.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, answer: &str) -> Containment {
        contains(&text_tokens(text), &gold_tokens(answer))
    }

    #[test]
    fn dates_count_as_people_write_them() {
        let c = check("[Date: 2023-05-07] Caroline: I went to the support group", "7 May 2023");
        assert!(c.strict && c.loose);
        assert!(!check("[Date: 2023-05-08] Caroline: I went", "7 May 2023").strict);
    }

    #[test]
    fn stop_words_punctuation_and_entities_are_ignored() {
        assert!(check("She said: &quot;the Adoption agencies!&quot;", "Adoption agencies").strict);
        assert!(check("Tom &amp; Jerry", "Tom & Jerry").strict);
        assert_eq!(gold_tokens("The sunday before 25 May 2023"), vec!["sunday", "25", "may", "2023"]);
        assert_eq!(gold_tokens("No"), vec!["no"], "an answer of stop words keeps them");
        assert!(!check("see (mem_2) and msg_2", "2").strict, "ids are not numbers");
        assert!(check("snake_case_name", "snake_case_name").strict);
    }

    #[test]
    fn a_memory_point_counts_when_half_its_words_are_there_label_and_frame_aside() {
        let p = point_tokens("【Travel Plan】 User booked the Hotel Mitsui in Kyoto for three nights.");
        assert_eq!(p, vec!["booked", "hotel", "mitsui", "kyoto", "three", "nights"]);
        let text = |t: &str| text_tokens(t);
        assert!(contains_point(&text("You are at the Hotel Mitsui in Kyoto"), &p), "3 of 6");
        assert!(!contains_point(&text("A hotel in Kyoto"), &p), "2 of 6");
        let other = point_tokens("User runs 5 km on Tuesdays");
        let both = [p.clone(), other.clone()];
        let c = contains_points(&text("Hotel Mitsui, Kyoto"), &both);
        assert!(!c.strict && c.loose);
        assert!(contains_points(&text("Hotel Mitsui, Kyoto; runs 5 km Tuesdays"), &both).strict);
        assert_eq!(contains_points(&text("anything"), &[point_tokens("【Label】 the user")]), Containment::default());
    }

    #[test]
    fn strict_needs_every_token_loose_half() {
        let c = check("counseling and mental health", "counseling or mental health for Transgender people");
        assert!(!c.strict && c.loose, "{c:?}");
        let c = check("psychology", "Psychology, counseling certification");
        assert!(!c.strict && !c.loose, "{c:?}");
        assert_eq!(check("anything", ""), Containment::default());
    }
}
