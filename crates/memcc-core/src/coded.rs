//! A text's coded values — a port, a path, a host, a version, a limit: the words a setting is
//! stated with, in any language. Memory reads a newer record that names an older one's value
//! beside its own as restating it; a session's brief keeps the sentences that set them.

use std::collections::HashSet;

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

/// Whether a message says little — "ok", "tests pass?", "looks good, thanks": no coded value,
/// fewer than four words (eight letters of a script written without spaces). Where a session
/// left off is the last message that says more.
pub fn says_little(text: &str) -> bool {
    let words = text.split_whitespace().count();
    let unspaced = text.chars().filter(|&c| crate::text::is_cjk_letter(c)).count();
    coded_values(text).is_empty() && words < 4 && unspaced < 8
}

/// A date ("2026-12-01", "12/01"), a time ("13:00") or a year ("2026").
fn is_when(word: &str) -> bool {
    let digits_and = |seps: &[char]| word.chars().all(|c| c.is_ascii_digit() || seps.contains(&c));
    let year = word.len() == 4 && (word.starts_with("19") || word.starts_with("20")) && digits_and(&[]);
    year || (digits_and(&['-', '/', ':', '.']) && word.contains(['-', '/', ':']))
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

    #[test]
    fn a_message_says_little_without_words_or_values() {
        for little in ["ok", "tests pass?", "looks good, thanks", "好的，谢谢"] {
            assert!(says_little(little), "{little}");
        }
        for more in ["fix the failing migration", "use port 8443", "把部署迁移到新的服务器上去"] {
            assert!(!says_little(more), "{more}");
        }
    }
}
