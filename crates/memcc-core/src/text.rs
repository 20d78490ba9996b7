//! Text segmentation for SQLite FTS5 that also works for Chinese and Japanese.
//!
//! FTS5's `unicode61` tokenizer sees a run of ideographs as one token, and its `trigram`
//! tokenizer cannot match queries shorter than three characters (most Chinese words are two).
//! So before indexing, every CJK run is rewritten as its overlapping character bigrams followed
//! by its last character (`北京大学` → `北京 京大 大学 学`). A CJK query of n ≥ 2 characters
//! becomes the phrase of its bigrams, which matches exactly the substring; a one-character query
//! becomes a prefix query, which every position of a run answers. No dictionary is needed and
//! segmentation never disagrees between index and query time.
//!
//! User text never reaches `MATCH` directly: [`match_query`] extracts terms and quotes each one,
//! so hostile syntax such as `"foo AND (` is searched as words, never parsed as operators.

/// A regular expression written in MemCC's source. Only the pattern goes in, never input, and
/// the tests compile every one, so a typo fails them rather than a user: the one place a
/// library crate may panic (the crates deny `expect` everywhere else).
#[allow(clippy::expect_used)]
pub fn static_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a pattern in MemCC's source compiles")
}

/// Ideographs, kana and hangul: the characters that are segmented into bigrams.
pub fn is_cjk_letter(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x309F | 0x30A0..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Which rules [`fts_document`] follows. Bump it whenever they change what is stored: a store
/// whose full-text index was written under another version rebuilds it when opened, so an
/// upgrade reaches the records written before it (1: hyphenated words also stored joined).
pub const FTS_DOCUMENT_VERSION: u32 = 1;

/// The string to store in an FTS5 column for `text`.
///
/// A word written with hyphens is also stored joined (`de-stress` → `de-stress destress`), since
/// people write compounds either way ("destress", "roadtrip") and the tokenizer splits at the
/// hyphen. The joined form follows the parts, so a phrase query for the parts still matches.
pub fn fts_document(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut run: Vec<char> = Vec::new();
    let mut compound = Compound::default();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(joined) = compound.step(c, chars.peek().copied()) {
            push_word(&mut out, &joined);
        }
        if is_cjk_letter(c) {
            run.push(c);
        } else {
            flush_run(&mut run, &mut out);
            out.push(c);
        }
    }
    flush_run(&mut run, &mut out);
    if let Some(joined) = compound.finish() {
        push_word(&mut out, &joined);
    }
    out
}

/// Whether `c` separates words wherever it stands: a joined form can be written before it.
fn ends_word(c: char) -> bool {
    c.is_whitespace()
        || c.is_ascii_punctuation()
        || is_cjk_letter(c)
        // General, CJK and full-width punctuation (curly quotes, dashes, "，", "。").
        || matches!(c as u32, 0x2000..=0x206F | 0x3000..=0x303F | 0xFF00..=0xFF0F | 0xFF1A..=0xFF20)
}

fn push_word(out: &mut String, word: &str) {
    out.push(' ');
    out.push_str(word);
    out.push(' ');
}

/// A hyphenated word being read, character by character: letters (not CJK) joined by single
/// hyphens. Digits, doubled or dangling hyphens end it (`covid-19` and `2023-05-08` are not
/// compounds of words).
#[derive(Default)]
struct Compound {
    letters: String,
    hyphenated: bool,
    /// The last character was a letter of this word (not its hyphen).
    in_letters: bool,
}

impl Compound {
    /// Read `c` (followed by `next`); the joined word when `c` ends a hyphenated one.
    fn step(&mut self, c: char, next: Option<char>) -> Option<String> {
        let letter = |c: char| c.is_alphabetic() && !is_cjk_letter(c);
        if letter(c) {
            self.letters.push(c);
            self.in_letters = true;
            None
        } else if c == '-' && self.in_letters && next.is_some_and(letter) {
            self.hyphenated = true;
            self.in_letters = false;
            None
        } else if ends_word(c) {
            self.finish()
        } else {
            // A digit or a mark inside the word: not a compound of words, and writing the
            // joined form here would split the token it is in.
            *self = Compound::default();
            None
        }
    }

    /// The word ended: its joined form when it had hyphens; reading starts afresh.
    fn finish(&mut self) -> Option<String> {
        let joined = self.hyphenated.then(|| std::mem::take(&mut self.letters));
        *self = Compound::default();
        joined
    }
}

fn flush_run(run: &mut Vec<char>, out: &mut String) {
    if run.is_empty() {
        return;
    }
    out.push(' ');
    for pair in run.windows(2) {
        out.push(pair[0]);
        out.push(pair[1]);
        out.push(' ');
    }
    if let Some(last) = run.last() {
        out.push(*last);
    }
    out.push(' ');
    run.clear();
}

/// A search term extracted from user input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A run of letters/digits outside CJK.
    Word(String),
    /// A run of CJK letters.
    Cjk(Vec<char>),
}

impl Term {
    /// The term as text: the word, or the CJK run's letters.
    pub fn into_text(self) -> String {
        match self {
            Term::Word(w) => w,
            Term::Cjk(c) => c.into_iter().collect(),
        }
    }

    /// The lowercase words (and CJK runs) of `text`, as text.
    pub fn texts(text: &str) -> Vec<String> {
        terms(text).into_iter().map(Term::into_text).collect()
    }
}

/// Split user text into search terms (letters and digits; everything else separates).
pub fn terms(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk_letter(c) {
            if !word.is_empty() {
                out.push(Term::Word(std::mem::take(&mut word)));
            }
            cjk.push(c);
        } else if c.is_alphanumeric() {
            if !cjk.is_empty() {
                out.push(Term::Cjk(std::mem::take(&mut cjk)));
            }
            word.extend(c.to_lowercase());
        } else {
            if !word.is_empty() {
                out.push(Term::Word(std::mem::take(&mut word)));
            }
            if !cjk.is_empty() {
                out.push(Term::Cjk(std::mem::take(&mut cjk)));
            }
        }
    }
    if !word.is_empty() {
        out.push(Term::Word(word));
    }
    if !cjk.is_empty() {
        out.push(Term::Cjk(cjk));
    }
    out
}

/// How the terms of a query combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Every term must match (grep-like).
    All,
    /// Any term may match; ranking sorts it out (retrieval-like).
    Any,
}

/// Upper bound on terms taken from one query: keeps hostile or huge queries cheap.
pub const MAX_QUERY_TERMS: usize = 48;

/// Function words left out of ranked (`Any`) queries: they match nearly every document, add
/// almost nothing to BM25 and make the query cost grow with the collection.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "before", "but",
    "by", "can", "could", "did", "do", "does", "doing", "for", "from", "had", "has", "have", "he", "her", "here",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so",
    "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "us", "was", "we",
    "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your", "s", "t",
    "的", "了", "是", "吗", "呢", "吧", "啊",
];

pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// A safe FTS5 `MATCH` expression for free text, or `None` when it has no searchable term.
/// `Any` queries drop stop words (unless nothing else is left).
pub fn match_query(text: &str, combine: Combine) -> Option<String> {
    let all = terms(text);
    let content: Vec<Term> = all.iter().filter(|t| !matches!(t, Term::Word(w) if is_stop_word(w))).cloned().collect();
    let chosen = if combine == Combine::Any && !content.is_empty() { content } else { all };
    combine_terms(&chosen, combine)
}

/// The FTS5 expression matching one term.
pub fn term_expr(term: &Term) -> String {
    match term {
        // Words only hold alphanumerics, so quoting cannot be escaped out of.
        Term::Word(w) => format!("\"{w}\""),
        Term::Cjk(chars) if chars.len() == 1 => format!("\"{}\"*", chars[0]),
        Term::Cjk(chars) => {
            let bigrams: Vec<String> = chars.windows(2).map(|p| p.iter().collect()).collect();
            format!("\"{}\"", bigrams.join(" "))
        }
    }
}

/// Each of `terms` as `render` writes it in a query language, deduplicated, at most
/// [`MAX_QUERY_TERMS`] (what every full-text backend's query is built from).
pub fn rendered_terms(terms: &[Term], render: impl Fn(&Term) -> String) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for term in terms {
        let part = render(term);
        if !parts.contains(&part) {
            parts.push(part);
        }
        if parts.len() == MAX_QUERY_TERMS {
            break;
        }
    }
    parts
}

/// `terms` joined into one safe expression (deduplicated, at most [`MAX_QUERY_TERMS`]).
pub fn combine_terms(terms: &[Term], combine: Combine) -> Option<String> {
    let parts = rendered_terms(terms, term_expr);
    if parts.is_empty() {
        return None;
    }
    let sep = match combine {
        Combine::All => " AND ",
        Combine::Any => " OR ",
    };
    Some(parts.join(sep))
}

/// An FTS5 phrase matching the words of `text` in order and adjacent, or `None` when it has
/// fewer than two tokens (then it is no stricter than [`match_query`]).
pub fn phrase_query(text: &str) -> Option<String> {
    let mut tokens: Vec<String> = Vec::new();
    for term in terms(text).into_iter().take(MAX_QUERY_TERMS) {
        match term {
            Term::Word(w) => tokens.push(w),
            // The same shape as `fts_document`: bigrams, then the last character.
            Term::Cjk(chars) => {
                tokens.extend(chars.windows(2).map(|p| p.iter().collect::<String>()));
                if let Some(last) = chars.last() {
                    tokens.push(last.to_string());
                }
            }
        }
    }
    (tokens.len() >= 2).then(|| format!("\"{}\"", tokens.join(" ")))
}

/// The end of `text`, at most `max` characters, not starting inside a word: the newest words
/// matter most, and the end of a cut word would be searched as a word of its own.
pub fn newest_words(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let mut chars = text.chars().skip(count - max - 1);
    let before = chars.next();
    let tail: String = chars.collect();
    // CJK text has no spaces between words and is searched in pairs of characters: cut anywhere.
    let in_word = |c: char| c.is_alphanumeric() && !is_cjk_letter(c);
    let rest = if before.is_some_and(in_word) { tail.trim_start_matches(in_word) } else { &tail };
    // A tail that is one long word is kept whole rather than dropped.
    if rest.trim().is_empty() { tail.trim_start().to_string() } else { rest.trim_start().to_string() }
}

/// Cut `text` to at most `max_chars` characters around the first case-insensitive hit of any
/// of `needles`, marking elisions with `…`. Used for search snippets.
pub fn snippet(text: &str, needles: &[String], max_chars: usize) -> String {
    let lower = text.to_lowercase();
    // Byte offsets of `lower` and `text` differ only when lowercasing changes length; fall back
    // to the start in that case rather than slicing at a wrong boundary.
    let hit = if lower.len() == text.len() {
        needles.iter().filter(|n| !n.is_empty()).filter_map(|n| lower.find(&n.to_lowercase())).min()
    } else {
        None
    };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    if chars.len() <= max_chars {
        return text.to_string();
    }
    let hit_char = hit.map(|b| chars.partition_point(|(i, _)| *i < b)).unwrap_or(0);
    let start = hit_char.saturating_sub(max_chars / 3);
    let end = (start + max_chars).min(chars.len());
    let start = end.saturating_sub(max_chars);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(chars[start..end].iter().map(|(_, c)| c));
    if end < chars.len() {
        out.push('…');
    }
    out
}

/// The sentences of `text`, each with its byte range: cut after `.`, `!`, `?` (and their CJK
/// forms) followed by a space or the end, and at " / " (how recall joins messages).
fn sentences(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let end = i + c.len_utf8();
        let cut = match c {
            '。' | '！' | '？' => true,
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            '/' => text[..i].ends_with(' ') && next == Some(' '),
            _ => false,
        };
        if cut {
            out.push(start..end);
            start = end;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// The sentences of `text`, as [`excerpt`] cuts them.
pub fn sentences_of(text: &str) -> impl Iterator<Item = &str> {
    sentences(text).into_iter().map(move |r| &text[r])
}

/// At most `max_chars` characters of `text`, made of whole sentences: the one with the most of
/// `needles` (case-insensitive), then its neighbours while they fit (the following first, since
/// an answer tends to follow what it answers). Elisions are marked with `…`. A single sentence
/// longer than `max_chars` is cut around its first hit as [`snippet`] does.
pub fn excerpt(text: &str, needles: &[String], max_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let spans = sentences(text);
    let lower: Vec<String> = needles.iter().filter(|n| !n.is_empty()).map(|n| n.to_lowercase()).collect();
    let hits = |r: &std::ops::Range<usize>| {
        let s = text[r.clone()].to_lowercase();
        lower.iter().filter(|n| s.contains(n.as_str())).count()
    };
    let best = (0..spans.len()).max_by_key(|&i| (hits(&spans[i]), std::cmp::Reverse(i))).unwrap_or(0);
    let len = |r: &std::ops::Range<usize>| text[r.clone()].chars().count();
    if spans.is_empty() || len(&spans[best]) > max_chars {
        return snippet(text, needles, max_chars);
    }
    let (mut first, mut last) = (best, best);
    let mut used = len(&spans[best]) + 2;
    loop {
        let grow_after = last + 1 < spans.len() && used + len(&spans[last + 1]) <= max_chars;
        if grow_after {
            used += len(&spans[last + 1]);
            last += 1;
            continue;
        }
        if first > 0 && used + len(&spans[first - 1]) <= max_chars {
            used += len(&spans[first - 1]);
            first -= 1;
            continue;
        }
        break;
    }
    let mut out = String::new();
    if first > 0 {
        out.push('…');
    }
    out.push_str(text[spans[first].start..spans[last].end].trim());
    if last + 1 < spans.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_runs_become_bigrams_plus_last_char() {
        assert_eq!(fts_document("北京大学").trim(), "北京 京大 大学 学");
        assert_eq!(fts_document("I live in 北京.").trim(), "I live in  北京 京 .");
    }

    #[test]
    fn hyphenated_words_are_also_stored_joined() {
        assert_eq!(fts_document("time to de-stress!"), "time to de-stress destress !");
        assert_eq!(fts_document("my mother-in-law"), "my mother-in-law motherinlaw ");
        // Numbers, dangling and doubled hyphens are not compounds of words.
        assert_eq!(fts_document("covid-19 on 2023-05-08"), "covid-19 on 2023-05-08");
        assert_eq!(fts_document("pre- and post--war"), "pre- and post--war");
        assert_eq!(fts_document("A-a0 x-y’s"), "A-a0 x-y xy ’s");
        // A CJK run ends the word before it.
        assert_eq!(fts_document("e-mail北京").trim(), "e-mail email  北京 京");
    }

    proptest::proptest! {
        /// Indexing only adds: the words of a text are, in order, among the words of its
        /// document, and a hyphenated word's joined form is there too.
        #[test]
        fn the_document_keeps_every_word(text in "[a-zA-Z0-9 ,.'’é\u{301}北京-]{0,60}") {
            let words = |t: &str| -> Vec<String> {
                terms(t).into_iter().filter_map(|t| match t { Term::Word(w) => Some(w), Term::Cjk(_) => None }).collect()
            };
            let doc = words(&fts_document(&text));
            let mut rest = doc.iter();
            for w in words(&text) {
                proptest::prop_assert!(rest.any(|d| *d == w), "{w:?} of {text:?} missing from {doc:?}");
            }
        }
    }

    #[test]
    fn queries_are_quoted_and_cjk_phrased() {
        assert_eq!(match_query("北京", Combine::All).as_deref(), Some("\"北京\""));
        assert_eq!(match_query("北京大学", Combine::All).as_deref(), Some("\"北京 京大 大学\""));
        assert_eq!(match_query("京", Combine::All).as_deref(), Some("\"京\"*"));
        assert_eq!(match_query("\"foo AND (", Combine::All).as_deref(), Some("\"foo\" AND \"and\""));
        assert_eq!(match_query("((( )))", Combine::Any), None);
        assert_eq!(match_query("Foo foo FOO", Combine::Any).as_deref(), Some("\"foo\""));
        assert_eq!(
            match_query("what did we decide about the budget", Combine::Any).as_deref(),
            Some("\"decide\" OR \"budget\"")
        );
        assert_eq!(match_query("what is it", Combine::Any).as_deref(), Some("\"what\" OR \"is\" OR \"it\""));
        assert_eq!(match_query("the budget", Combine::All).as_deref(), Some("\"the\" AND \"budget\""));
    }

    #[test]
    fn phrases_mirror_the_document_shape() {
        assert_eq!(phrase_query("Turn 17").as_deref(), Some("\"turn 17\""));
        assert_eq!(phrase_query("住在北京").as_deref(), Some("\"住在 在北 北京 京\""));
        assert_eq!(phrase_query("single"), None);
    }

    #[test]
    fn excerpts_keep_whole_sentences_around_the_match() {
        let text = "We met at noon. The weather was grey. She bought a red bike and a helmet for the trip. \
                    Then we had lunch. Later we went home.";
        let e = excerpt(text, &["bike".into()], 80);
        assert!(e.contains("She bought a red bike and a helmet for the trip."), "{e}");
        assert!(e.chars().count() <= 82, "{e}");
        assert!(!e.contains("bik…"), "never cut mid-sentence: {e}");
        assert_eq!(excerpt("short", &[], 30), "short");
        let joined = "Ann: what did you buy? / Bo: a tent for the lake";
        assert!(excerpt(joined, &["tent".into()], 30).contains("Bo: a tent for the lake"));
        let one = "x".repeat(500);
        assert!(excerpt(&one, &[], 50).chars().count() <= 52, "a long sentence is cut like a snippet");
        assert_eq!(excerpt("北京很大。上海也很大。广州呢？", &["上海".into()], 8), "…上海也很大。…");
    }

    #[test]
    fn snippet_centres_on_hit() {
        let text = format!("{}needle{}", "a".repeat(100), "b".repeat(100));
        let s = snippet(&text, &["NEEDLE".into()], 30);
        assert!(s.contains("needle"), "{s}");
        assert!(s.starts_with('…') && s.ends_with('…'));
        assert_eq!(snippet("short", &[], 30), "short");
    }
}
