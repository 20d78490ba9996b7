//! What a sentence says, as a key that compares it with others: recall shows nothing twice by
//! it, and a forget leaves a tombstone of it that every later delivery is checked against and
//! that the compactor keeps out of what it asks a model to summarise. Here, in core, because
//! both sides of the bridge read it.

use crate::text::sentences_of;

/// A sentence as recall compares it with what is shown (and a forget with what is delivered later): its words, lowercase, without the
/// labels it may start with — a quoted message's `- [2023-05-25 13:14] user:` in a summary, a
/// speaker's `Caroline:` — since a summary quotes a message's sentences under its label and a
/// window shows the message whole; `None` when that leaves less than [`SAID_MIN_CHARS`]
/// ("Thanks!" or "好的" said twice are two things).
pub fn said_key(sentence: &str) -> Option<String> {
    let lower = without_labels(sentence).to_lowercase();
    let key = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    (key.chars().count() >= SAID_MIN_CHARS).then_some(key)
}

/// `text` after a leading list mark, elision, `[…]` and up to two `label:` prefixes (a role,
/// then a speaker: at most three words before the colon).
fn without_labels(text: &str) -> &str {
    let mut s = text.trim_start_matches(|c: char| c == '-' || c == '…' || c.is_whitespace());
    if s.starts_with('[')
        && let Some(end) = s.find(']')
    {
        s = s[end + 1..].trim_start();
    }
    for _ in 0..2 {
        let Some(colon) = s.find(':') else { break };
        let label = &s[..colon];
        let is_label = !label.is_empty()
            && label.split_whitespace().count() <= 3
            && label.chars().all(|c| c.is_alphanumeric() || c == ' ' || c == '_' || c == '-' || c == '.');
        if !is_label {
            break;
        }
        s = s[colon + 1..].trim_start();
    }
    s
}

/// The shortest sentence (in characters of its [`said_key`]) recall recognises as said before.
pub const SAID_MIN_CHARS: usize = 12;

pub fn said_keys(text: &str) -> Vec<String> {
    text.lines().flat_map(sentences_of).filter_map(said_key).collect()
}

/// `text` without the sentences whose key is in `gone`, line by line (a line left without a
/// sentence goes); `None` when nothing was taken out. What was taken out is returned beside it.
pub fn without_said(text: &str, gone: &std::collections::HashSet<String>) -> Option<(String, String)> {
    if gone.is_empty() {
        return None;
    }
    let mut kept_lines = Vec::new();
    let mut taken = Vec::new();
    for line in text.lines() {
        let sentences: Vec<&str> = sentences_of(line).collect();
        let hit = |s: &&str| said_key(s).is_some_and(|k| gone.contains(&k));
        if !sentences.iter().any(hit) {
            kept_lines.push(line.to_string());
            continue;
        }
        let (out, keep): (Vec<&str>, Vec<&str>) = sentences.into_iter().partition(hit);
        taken.extend(out);
        let kept = keep.join(" ");
        if said_keys(&kept).is_empty() && kept.split_whitespace().count() < 3 {
            continue;
        }
        kept_lines.push(kept);
    }
    (!taken.is_empty()).then(|| (kept_lines.join("\n"), taken.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forgotten_sentence_is_taken_out_wherever_it_is_quoted() {
        let gone: std::collections::HashSet<String> =
            said_keys("user: I live at 12 Harbour Street, flat 3.").into_iter().collect();
        let summary = "[Date: 2026-01-01]\n- [2026-01-01 10:00] user: I live at 12 Harbour Street, flat 3. My sister Ana visits in June.\n- assistant: Noted, both.";
        let (kept, taken) = without_said(summary, &gone).expect("the sentence is quoted");
        assert!(!kept.contains("Harbour") && kept.contains("My sister Ana visits in June.") && kept.contains("Noted"));
        assert!(taken.contains("Harbour"));
        assert_eq!(without_said("Nothing of it here at all.", &gone), None);
    }
}
