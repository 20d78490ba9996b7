//! The ranking's words: what a session document and a query are counted in. Lowercase runs of
//! letters and digits of two characters or more, function words left out, English words
//! stemmed (Snowball, so "marathons" and "marathon" are one term); a run of CJK characters
//! counts as its character pairs (a single character as itself), as the full-text index stores
//! it. The session index and every query are counted by this one function, so they always agree.

use std::collections::HashMap;
use std::sync::LazyLock;

use memcc_core::text::{Term, is_stop_word, terms};
use rust_stemmers::{Algorithm, Stemmer};

static ENGLISH: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// A few function words [`is_stop_word`] keeps (it serves queries a person types, where "not"
/// and "no" matter) that only add noise to a count over whole sessions.
const MORE_FUNCTION_WORDS: &[&str] = &["not", "no", "such", "also", "just", "yes", "ok", "okay"];

/// The terms of `text`, in order, repeated as often as they occur.
pub fn ranking_terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for term in terms(text) {
        match term {
            Term::Word(w) => {
                if w.chars().count() < 2 || is_stop_word(&w) || MORE_FUNCTION_WORDS.contains(&w.as_str()) {
                    continue;
                }
                out.push(ENGLISH.stem(&w).into_owned());
            }
            Term::Cjk(chars) if chars.len() == 1 => out.push(chars[0].to_string()),
            Term::Cjk(chars) => {
                out.extend(chars.windows(2).map(|pair| pair.iter().collect::<String>()).filter(|p| !is_stop_word(p)))
            }
        }
    }
    out
}

/// How often each term of `text` occurs.
pub fn term_counts(text: &str) -> HashMap<String, u32> {
    let mut counts = HashMap::new();
    for t in ranking_terms(text) {
        *counts.entry(t).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_stemmed_function_words_and_single_letters_left_out() {
        assert_eq!(ranking_terms("The marathons I ran, and a marathon!"), ["marathon", "ran", "marathon"]);
        assert_eq!(ranking_terms("Port 8080 on the dev-server"), ["port", "8080", "dev", "server"]);
        assert!(ranking_terms("a I x of the").is_empty());
    }

    #[test]
    fn a_chinese_run_counts_as_its_character_pairs() {
        assert_eq!(ranking_terms("北京大学"), ["北京", "京大", "大学"]);
        assert_eq!(ranking_terms("猫"), ["猫"]);
    }

    #[test]
    fn counts_add_up_repeated_terms() {
        let counts = term_counts("Redis cache, redis caches");
        assert_eq!(counts.get("redi"), Some(&2));
        assert_eq!(counts.get("cach"), Some(&2));
    }
}
