//! What a question asks about, in words: the terms search and recall look for.
//!
//! A question has words that say what *kind* of answer it wants rather than what it is about —
//! "How **many** turtles…", "What **kind** of art…" — and words that say what the answer is
//! *not* — "hobbies other than **fixing cars**". Both match records that do not answer: "so
//! many days of gaming" for the first, the many records about fixing cars for the second. This
//! module leaves them out; function words go as everywhere ([`memcc_core::text::is_stop_word`]).
//! Time words are read elsewhere ([`super::period`]), from the question's own text.

use super::irregular::irregular_forms;
use memcc_core::text::static_regex;
use memcc_core::text::{MAX_QUERY_TERMS, Term, is_cjk_letter as is_cjk, is_stop_word, terms};

use super::predicate_cues;
use crate::record::Triple;

/// A question as search and recall read it, worked out once per retrieve.
pub struct Question<'a> {
    pub text: &'a str,
    /// What it is about ([`content_terms`]), and the other forms of its irregular verbs
    /// ([`super::irregular::irregular_forms`]: asked "buy", told "bought") — a stemmer
    /// joins "paint" and "painted", not these.
    pub content: Vec<Term>,
    /// Of those, the words worth finding in a hit's text (lowercase, as every term is): longer
    /// than three letters and not function words, and CJK character pairs. Excerpts are cut around them; they tell which
    /// turn of a hit holds the match.
    pub needles: Vec<String>,
}

impl<'a> Question<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut content = content_terms(text);
        let forms: Vec<Term> = content
            .iter()
            .filter_map(|t| match t {
                Term::Word(w) => Some(w),
                Term::Cjk(_) => None,
            })
            .flat_map(|w| irregular_forms(w))
            .map(|form| Term::Word(form.to_string()))
            .collect();
        for form in forms {
            if content.len() < MAX_QUERY_TERMS && !content.contains(&form) {
                content.push(form);
            }
        }
        let needles = content
            .iter()
            .filter_map(|t| match t {
                Term::Word(w) if w.len() > 3 && !is_stop_word(w) => Some(w.clone()),
                Term::Cjk(c) if c.len() > 1 => Some(c.iter().collect()),
                _ => None,
            })
            .collect();
        Question { text, content, needles }
    }

    /// Whether a stored fact about someone this question names is what it asks: past the fact's
    /// subject, it asks about the fact's predicate ([`predicate_cues`]) or object — or about
    /// nothing else ("What do you know about Lina?"). "What are Joanna's
    /// hobbies?" does not ask that Joanna is allergic to cockroaches.
    pub fn asks_about(&self, fact: &Triple) -> bool {
        let lower = |s: &str| s.to_lowercase();
        let names = Term::texts(&lower(&fact.subject));
        let asked: Vec<String> = self
            .content
            .iter()
            .cloned()
            .map(Term::into_text)
            .filter(|w| !names.contains(w) && !ABOUT_FRAME.contains(&w.as_str()))
            .collect();
        if asked.is_empty() {
            return true;
        }
        let cues = predicate_cues(&fact.predicate);
        let object = Term::texts(&lower(&fact.object));
        asked.iter().any(|a| {
            cues.iter().any(|c| {
                a.starts_with(c.as_str()) || same_word(a, c) || (c.chars().any(is_cjk) && a.contains(c.as_str()))
            }) || object.iter().any(|o| {
                same_word(a, o) || (o.chars().any(is_cjk) && (o.contains(a.as_str()) || a.contains(o.as_str())))
            })
        })
    }

    /// Whether the question names `phrase`: each of its words, in some form, is one of the
    /// question's ("do we still use Jest?" names "Jest").
    pub fn names(&self, phrase: &str) -> bool {
        let words = Term::texts(&phrase.to_lowercase());
        let asked: Vec<String> = self.content.iter().cloned().map(Term::into_text).collect();
        let said = |a: &String, w: &String| same_word(a, w) || (w.chars().any(is_cjk) && a.contains(w.as_str()));
        !words.is_empty() && words.iter().all(|w| asked.iter().any(|a| said(a, w)))
    }
}

/// Words a question uses to ask about someone as a whole rather than one thing about them.
const ABOUT_FRAME: &[&str] = &[
    "know",
    "tell",
    "remember",
    "recall",
    "about",
    "anything",
    "everything",
    "facts",
    "information",
    "info",
    "知道",
    "了解",
];

/// Two forms of one word, loosely: equal, or sharing all but the shorter's last two letters (at
/// least four) — "allergic" / "allergies", "painted" / "painting" — or the whole of a shorter
/// one of three letters ("dog" / "dogs").
fn same_word(a: &str, b: &str) -> bool {
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    a == b || (common >= 3 && common + 2 >= shorter && (common >= 4 || common == shorter))
}

/// Words naming the quantity a "how …" question asks for.
const HOW_FRAME: &[&str] = &["many", "much"];

/// Words that, followed by "of", name the class of the answer ("what kind of art").
const CLASS_FRAME: &[&str] = &["kind", "kinds", "type", "types", "sort", "sorts"];

/// Phrases after which a question names what its answer is not, up to the end of the clause.
const EXCLUDING: &[&[&str]] =
    &[&["other", "than"], &["besides"], &["apart", "from"], &["aside", "from"], &["except", "for"], &["except"]];

/// What ends a clause: an exclusion reaches only to there.
const CLAUSE_ENDS: [char; 10] = [',', ';', '?', '.', '!', '，', '；', '？', '。', '！'];

/// The words of `question` that say what it is about, in order, each once: stop words, the
/// question's frame (`how many`, `kind of`) and what it excludes (`other than …`, `besides …`)
/// left out. When that leaves nothing, the words without stop words; when those are none too,
/// every word (a query of function words is still searched). At most [`MAX_QUERY_TERMS`], the
/// newest: in a long text (the last turns, a pasted passage ending in its question) the end is
/// what is being asked, and a huge or hostile query stays cheap.
pub fn content_terms(question: &str) -> Vec<Term> {
    let words = words_with_clause_ends(&without_chinese_exclusions(question));
    let about = about_flags(&words);
    let content = newest_distinct(
        words.iter().zip(&about).rev().filter(|(_, about)| **about).flat_map(|((t, _), _)| cjk_words(t.clone())),
    );
    if !content.is_empty() {
        return content;
    }
    let all = terms(question);
    let plain = newest_distinct(all.iter().rev().filter(|t| !matches!(t, Term::Word(w) if is_stop_word(w))).cloned());
    if plain.is_empty() { newest_distinct(all.into_iter().rev()) } else { plain }
}

/// Per word, whether it says what the question is about: not a stop word, not the question's
/// frame, not in what it excludes (which reaches to the end of its clause).
fn about_flags(words: &[(Term, bool)]) -> Vec<bool> {
    let mut about = vec![false; words.len()];
    let mut excluding = false;
    let mut i = 0;
    while i < words.len() {
        let (term, ends_clause) = &words[i];
        if let Some(phrase) = EXCLUDING.iter().find(|p| phrase_at(words, i, p)) {
            excluding = true;
            i += phrase.len();
            continue;
        }
        let framed = match term {
            Term::Word(w) => {
                (HOW_FRAME.contains(&w.as_str()) && i > 0 && is_word(&words[i - 1].0, "how"))
                    || (CLASS_FRAME.contains(&w.as_str()) && words.get(i + 1).is_some_and(|(t, _)| is_word(t, "of")))
            }
            Term::Cjk(_) => false,
        };
        let stop = matches!(term, Term::Word(w) if is_stop_word(w));
        about[i] = !excluding && !framed && !stop;
        if *ends_clause {
            excluding = false;
        }
        i += 1;
    }
    about
}

/// Question words of Chinese that say what kind of answer is wanted ("什么", "哪里", "多少").
const CJK_FRAME: &[&str] = &["什么", "哪里", "哪儿", "哪个", "哪些", "怎么", "怎样", "多少", "几个", "为何", "是否"];

/// A run of Chinese (or Japanese) characters as the words it may hold, the newest first: its
/// character pairs, the units the full-text index stores ([`memcc_core::text::fts_document`]). A
/// question has no spaces, so the run as a whole ("我对什么过敏") is almost never in a record; its
/// pairs are ("过敏"). Pairs that are question words are left out; a run of two or fewer stays
/// itself. Pairs are made one at a time, as the caller takes them: a huge run costs no memory.
fn cjk_words(term: Term) -> Box<dyn Iterator<Item = Term>> {
    match term {
        Term::Cjk(chars) if chars.len() > 2 => Box::new(
            (1..chars.len())
                .rev()
                .map(move |i| vec![chars[i - 1], chars[i]])
                .filter(|pair| !CJK_FRAME.contains(&pair.iter().collect::<String>().as_str()))
                .map(Term::Cjk),
        ),
        other => Box::new(std::iter::once(other)),
    }
}

/// `question` without what it excludes ("hobbies other than fixing cars?" → "hobbies?"): the
/// text to embed, so the vector search is not drawn to what the answer is not either.
pub fn without_exclusions(question: &str) -> String {
    let mut out = String::with_capacity(question.len());
    for clause in question.split_inclusive(CLAUSE_ENDS) {
        // ASCII lowercasing keeps byte offsets; the phrases are ASCII. The leading space lets a
        // phrase match at the clause's start, and puts each match one byte after where it is in `clause`.
        let padded = format!(" {}", clause.to_ascii_lowercase());
        let cut = EXCLUDING.iter().filter_map(|p| padded.find(&format!(" {} ", p.join(" ")))).min();
        match cut.and_then(|at| clause.get(..at.saturating_sub(1))) {
            Some(kept) => {
                out.push_str(kept);
                if !kept.trim().is_empty() {
                    out.extend(clause.chars().last().filter(|c| CLAUSE_ENDS.contains(c)));
                }
            }
            None => out.push_str(clause),
        }
    }
    without_chinese_exclusions(&out).into_owned()
}

/// "除了游泳以外" / "除了游泳之外" / "除了游泳，": what the answer is not, in Chinese. No spaces
/// separate words there, so without 以外/之外 or a comma to end it ("她除了游泳还喜欢什么") where
/// the exclusion ends is unknown and nothing is left out.
static CHINESE_EXCLUSION: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| static_regex(r"除了[^，,。？?！!；;]*?(?:以外|之外|[，,])"));

/// A space where an exclusion was, so the characters either side do not join into one run.
fn without_chinese_exclusions(text: &str) -> std::borrow::Cow<'_, str> {
    CHINESE_EXCLUSION.replace_all(text, " ")
}

/// The first [`MAX_QUERY_TERMS`] distinct terms of `newest_first`, oldest first again. Taking
/// stops there: the rest of a huge query is never paired or compared.
fn newest_distinct(newest_first: impl Iterator<Item = Term>) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    for t in newest_first {
        if out.len() == MAX_QUERY_TERMS {
            break;
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out.reverse();
    out
}

fn is_word(term: &Term, word: &str) -> bool {
    matches!(term, Term::Word(w) if w == word)
}

/// Whether `phrase` starts at word `i`.
fn phrase_at(words: &[(Term, bool)], i: usize, phrase: &[&str]) -> bool {
    phrase.iter().enumerate().all(|(j, w)| words.get(i + j).is_some_and(|(t, _)| is_word(t, w)))
}

/// The question's terms, each with whether a clause ends after it (`,`, `;`, `?`, `.`, `!`, or
/// their full-width forms) — an exclusion reaches only to there.
fn words_with_clause_ends(question: &str) -> Vec<(Term, bool)> {
    let mut out: Vec<(Term, bool)> = Vec::new();
    for piece in question.split_inclusive(CLAUSE_ENDS) {
        let mut ts = terms(piece);
        let last = ts.pop();
        out.extend(ts.into_iter().map(|t| (t, false)));
        if let Some(t) = last {
            let ends = piece.ends_with(CLAUSE_ENDS);
            out.push((t, ends));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fact(subject: &str, predicate: &str, object: &str) -> Triple {
        Triple {
            id: 1,
            agent_id: "main".into(),
            subject: subject.into(),
            predicate: predicate.into(),
            object: object.into(),
            valid_from: None,
            valid_until: None,
            superseded_by: None,
            source_record: None,
        }
    }

    #[test]
    fn a_question_names_a_choice_by_its_words_in_some_form() {
        assert!(Question::new("Do we still use Jest for the unit tests?").names("Jest"));
        assert!(Question::new("Is the Redis cache warm?").names("Redis cache"));
        assert!(!Question::new("Is the cache warm?").names("Redis cache"), "every word of it");
        assert!(Question::new("我们还用微信吗").names("微信"));
        assert!(!Question::new("What test runner do we use?").names("Jest"));
    }

    #[test]
    fn a_question_also_searches_the_other_forms_of_its_irregular_verbs() {
        let q = Question::new("When did Nate win his third tournament?");
        let words: Vec<&str> =
            q.content.iter().filter_map(|t| if let Term::Word(w) = t { Some(w.as_str()) } else { None }).collect();
        assert!(words.contains(&"win") && words.contains(&"won"), "{words:?}");
        // Needles are words longer than three letters: "won" finds its record, not its line.
        let q = Question::new("What did Dave buy?");
        assert!(q.needles.contains(&"bought".to_string()), "{:?}", q.needles);
        // A light verb stays as asked.
        let q = Question::new("What did Melanie make?");
        assert!(!q.content.contains(&Term::Word("made".into())), "{:?}", q.content);
    }

    #[test]
    fn a_fact_is_shown_to_the_questions_that_ask_it() {
        let allergy = fact("Joanna", "allergic_to", "cockroaches");
        let asks = |q: &str, f: &Triple| Question::new(q).asks_about(f);
        assert!(asks("What is Joanna allergic to?", &allergy));
        assert!(asks("Does Joanna have any allergies?", &allergy));
        assert!(asks("Is Joanna afraid of cockroaches?", &allergy), "its object");
        assert!(asks("What do you know about Joanna?", &allergy), "everything about her");
        assert!(asks("Joanna?", &allergy));
        assert!(!asks("What are Joanna's hobbies?", &allergy));
        assert!(!asks("When did Joanna finish her first screenplay?", &allergy));
        assert!(asks("Where does Lina work these days?", &fact("Lina", "works_at", "Fidelity")));
        assert!(asks("Which city did she move to?", &fact("user", "lives_in", "Boston")));
        assert!(!asks("Which book did she read?", &fact("user", "lives_in", "Boston")));
        assert!(asks("What is the name of my sister?", &fact("user", "has_sister", "Ana")));
        assert!(asks("我对什么过敏？", &fact("user", "allergic_to", "花生")));
        assert!(!asks("我喜欢什么电影？", &fact("user", "allergic_to", "花生")));
        assert!(asks("What food does Nate like?", &fact("Nate", "likes", "ice cream")), "an LLM's predicate");
    }

    fn words(q: &str) -> Vec<String> {
        content_terms(q).into_iter().map(Term::into_text).collect()
    }

    #[test]
    fn needles_are_lowercase_content_words_and_cjk_pairs() {
        let q = Question::new("What did Melanie BUY in Berlin, 北京大学?");
        assert!(q.needles.iter().all(|n| *n == n.to_lowercase()), "{:?}", q.needles);
        assert!(
            q.needles.contains(&"melanie".to_string()) && q.needles.contains(&"berlin".to_string()),
            "{:?}",
            q.needles
        );
        assert!(!q.needles.contains(&"what".to_string()), "function words are not needles: {:?}", q.needles);
        assert!(q.needles.iter().any(|n| n == "北京"), "{:?}", q.needles);
    }

    #[test]
    fn the_frame_of_a_question_is_not_what_it_is_about() {
        assert_eq!(words("How many turtles does Nate have?"), ["turtles", "nate"]);
        assert_eq!(words("How much did the repair cost?"), ["repair", "cost"]);
        assert_eq!(words("What kind of art does Caroline make?"), ["art", "caroline", "make"]);
        assert_eq!(words("What types of pottery have they made?"), ["pottery", "made"]);
        // Only as the frame: "many" and "kind" are words like any other elsewhere.
        assert_eq!(words("Many thanks, kind words"), ["many", "thanks", "kind", "words"]);
        assert_eq!(words("a kind person"), ["kind", "person"]);
    }

    #[test]
    fn what_the_answer_is_not_is_left_out_to_the_end_of_the_clause() {
        assert_eq!(words("What are Dave's hobbies other than fixing cars?"), ["dave", "hobbies"]);
        assert_eq!(words("What sports does John like besides basketball?"), ["sports", "john", "like"]);
        assert_eq!(words("Apart from yoga, what does Deborah do?"), ["deborah"]);
        assert_eq!(words("Who went hiking except for Tim?"), ["went", "hiking"]);
    }

    #[test]
    fn the_text_to_embed_leaves_out_what_the_answer_is_not() {
        assert_eq!(without_exclusions("What are Dave's hobbies other than fixing cars?"), "What are Dave's hobbies?");
        assert_eq!(without_exclusions("Apart from yoga, what does Deborah do?"), " what does Deborah do?");
        assert_eq!(without_exclusions("Besides work, hobbies besides yoga, or else?"), " hobbies, or else?");
        assert_eq!(without_exclusions("No exclusion here."), "No exclusion here.");
        assert_eq!(without_exclusions("İstanbul OTHER THAN Ankara"), "İstanbul");
    }

    #[test]
    fn something_is_always_searched() {
        assert_eq!(words("how many?"), ["many"]);
        assert_eq!(words("what is it"), ["what", "is", "it"]);
        assert_eq!(words("besides cars"), ["besides", "cars"]);
        assert!(words("").is_empty());
        assert_eq!(words("什么"), ["什么"]);
    }

    #[test]
    fn a_chinese_question_is_searched_for_its_character_pairs() {
        assert_eq!(words("我对什么过敏？"), ["我对", "对什", "么过", "过敏"]);
        assert_eq!(words("上个月去了哪里"), ["上个", "个月", "月去", "去了", "了哪"]);
        assert_eq!(words("Nate 喜欢 乌龟"), ["nate", "喜欢", "乌龟"]);
        assert_eq!(words("我"), ["我"]);
        // A huge run is paired only as far as the query's cap.
        let huge: String = "我对花生过敏".repeat(200_000);
        assert_eq!(content_terms(&huge).len(), 6, "{:?}", words(&huge));
        let varied: String = ('一'..='龥').cycle().take(1_000_000).collect();
        assert_eq!(content_terms(&varied).len(), MAX_QUERY_TERMS);
        // What the answer is not, in Chinese.
        assert_eq!(words("除了游泳以外，她还喜欢什么运动？"), ["她还", "还喜", "喜欢", "欢什", "么运", "运动"]);
        assert_eq!(words("除了游泳，她还喜欢什么运动？"), ["她还", "还喜", "喜欢", "欢什", "么运", "运动"]);
        assert_eq!(words("她除了游泳还喜欢什么？").len(), 8, "no end to the exclusion: nothing left out");
        assert_eq!(words("我们除了游泳以外还去"), ["我们", "还去"]);
        assert_eq!(without_exclusions("除了游泳之外，她还喜欢什么运动？"), " ，她还喜欢什么运动？");
    }

    #[test]
    fn a_long_text_is_searched_for_its_newest_words() {
        // A pasted passage of 60 distinct words, then the question: the question's words stay.
        let passage: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
        let text = format!("{} Where did Caroline buy the violin?", passage.join(" "));
        let content = words(&text);
        assert_eq!(content.len(), MAX_QUERY_TERMS);
        assert_eq!(&content[MAX_QUERY_TERMS - 4..], ["word59", "caroline", "buy", "violin"].map(String::from));
        assert!(!content.contains(&"word0".to_string()), "the oldest words go first: {content:?}");
        // In the text's order, each word once (where it was said last).
        assert_eq!(words("cars, Dave and cars engines"), ["dave", "cars", "engines"]);
    }

    proptest! {
        #[test]
        fn content_terms_are_terms_of_the_question(
            text in "\\PC{0,80}",
            chinese in "[一-丗 ，？除了以外]{0,30}",
        ) {
            let q = format!("{text}{chinese}");
            let all = terms(&q);
            let content = content_terms(&q);
            // A word of the question, or characters found together in one of its runs.
            let within = |t: &Term| {
                all.contains(t)
                    || matches!(t, Term::Cjk(part) if all.iter().any(
                        |a| matches!(a, Term::Cjk(run) if run.windows(part.len()).any(|w| w == part.as_slice()))))
            };
            prop_assert!(content.iter().all(within), "{q:?}: {content:?}");
            prop_assert_eq!(content.is_empty(), all.is_empty());
            prop_assert!(content.len() <= MAX_QUERY_TERMS);
            prop_assert!(without_exclusions(&q).len() <= q.len());
        }
    }
}
