//! A newer record that names an older one's coded value — a port, a path, a host, a limit —
//! beside a value of its own restates it: "move the dev server from port 8080 to port 8443"
//! after "the dev server listens on port 8080", "images now live in public/img instead of
//! assets/img" after "images go in assets/img". Read from the values alone, in any language
//! and any phrasing (no list of verbs of change): recall shows the newer record first, so a
//! changed value comes before the one it replaced.

use std::collections::{HashMap, HashSet};

use crate::search::SearchHit;

/// The coded values of `text`: its words of three or more characters with a digit in them
/// ("8443", "1200px", "v2.3") or letters joined by `/ . _ @ :` ("assets/img",
/// "db-api.internal", "limits.toml"), lowercased — not dates, times or years, which any two
/// records of one week share.
pub fn coded_values(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for raw in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '[' | ']' | '"' | '`')) {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        if word.chars().count() < 3 || is_when(&word) {
            continue;
        }
        let digit = word.chars().any(|c| c.is_ascii_digit());
        let joined = word.char_indices().any(|(i, c)| {
            matches!(c, '/' | '.' | '_' | '@' | ':')
                && word[..i].chars().next_back().is_some_and(char::is_alphanumeric)
                && word[i + c.len_utf8()..].chars().next().is_some_and(char::is_alphanumeric)
        });
        // "e.g" and "i.e" are joined letters too, and shorter than any code.
        if digit || (joined && word.chars().count() >= 4) {
            out.insert(word);
        }
    }
    out
}

/// A date ("2026-12-01", "12/01"), a time ("13:00") or a year ("2026").
fn is_when(word: &str) -> bool {
    let digits_and = |seps: &[char]| word.chars().all(|c| c.is_ascii_digit() || seps.contains(&c));
    let year = word.len() == 4 && (word.starts_with("19") || word.starts_with("20")) && digits_and(&[]);
    year || (digits_and(&['-', '/', ':', '.']) && word.contains(['-', '/', ':']))
}

/// The coded values of a search's hits, by hit id.
pub struct Coded(HashMap<String, HashSet<String>>);

impl Coded {
    pub fn of(hits: &[SearchHit]) -> Coded {
        Coded(hits.iter().filter(|h| h.record.is_some()).map(|h| (h.id.clone(), coded_values(&h.text))).collect())
    }

    /// Whether `newer` restates `older`: said later, it names one of `older`'s coded values and
    /// one of its own.
    pub fn restates(&self, newer: &SearchHit, older: &SearchHit) -> bool {
        let (Some(new_at), Some(old_at)) = (newer.event_time, older.event_time) else { return false };
        let (Some(new), Some(old)) = (self.0.get(&newer.id), self.0.get(&older.id)) else { return false };
        new_at > old_at && new.iter().any(|v| old.contains(v)) && new.iter().any(|v| !old.contains(v))
    }

    /// `hits`, ranked best first, with each hit's newest restatement moved before it.
    pub fn newer_first(&self, hits: &mut Vec<SearchHit>) {
        let mut i = 0;
        while i < hits.len() {
            // Each step goes to a later record, so the chain ends.
            let mut at = i;
            while let Some(newer) = (i + 1..hits.len()).filter(|&j| self.restates(&hits[j], &hits[at])).min() {
                at = newer;
            }
            if at != i {
                let newer = hits.remove(at);
                hits.insert(i, newer);
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn coded_values_are_codes_not_dates_or_words() {
        assert_eq!(
            coded_values(
                "[2026-12-01 13:00] Moved the dev server to port 8443; images in public/img (1200px), see limits.toml."
            ),
            set(&["8443", "public/img", "1200px", "limits.toml"])
        );
        assert_eq!(coded_values("Alice moved to the mobile team in 2026, e.g. on 12/03."), set(&[]));
        assert_eq!(coded_values("端口改成 8443 了"), set(&["8443"]));
    }
}
