//! Mining what the user said: preferences (≥ 27 English and 12 Chinese patterns) become
//! synthetic "User …" documents so paraphrased questions recall them; rule-based triples fill
//! the knowledge graph. Only the user's own words are mined.

use memcc_core::text::static_regex;
use std::sync::LazyLock;

use regex::Regex;

use crate::record::NewTriple;

/// What kind of statement a pattern recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefCategory {
    Like,
    Dislike,
    Habit,
    Goal,
    Bio,
    Nostalgia,
}

/// One preference pattern: `{}` in `template` is replaced by the captured object.
pub struct PrefPattern {
    pub name: &'static str,
    pub category: PrefCategory,
    pub regex: Regex,
    pub template: &'static str,
    /// Predicate for supersession; `{}` is replaced by the normalised object. `None`: never superseded.
    pub predicate: Option<&'static str>,
    pub chinese: bool,
}

/// A preference found in a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Preference {
    pub pattern: &'static str,
    pub category: PrefCategory,
    pub object: String,
    /// The synthetic document, e.g. "User likes hiking in the Alps."
    pub document: String,
    pub predicate: Option<String>,
}

fn re(s: &str) -> Regex {
    static_regex(s)
}

macro_rules! pat {
    ($name:expr, $cat:ident, $re:expr, $tpl:expr, $pred:expr, $zh:expr) => {
        PrefPattern {
            name: $name,
            category: PrefCategory::$cat,
            regex: re($re),
            template: $tpl,
            predicate: $pred,
            chinese: $zh,
        }
    };
}

pub static PATTERNS: LazyLock<Vec<PrefPattern>> = LazyLock::new(|| {
    const I: &str = r"(?i)(?:^|[\s,;:(])I";
    vec![
        // English — likes
        pat!(
            "like",
            Like,
            &format!(r"{I} (?:really |truly |absolutely |just )?like (?P<o>.+)"),
            "User likes {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "love",
            Like,
            &format!(r"{I} (?:really |absolutely |just )?love (?P<o>.+)"),
            "User loves {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "enjoy",
            Like,
            &format!(r"{I} (?:really |truly )?enjoy (?P<o>.+)"),
            "User enjoys {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "prefer",
            Like,
            &format!(r"{I} (?:would |'d |usually )?prefer (?P<o>.+)"),
            "User prefers {}.",
            None,
            false
        ),
        pat!(
            "fan_of",
            Like,
            &format!(r"{I}'?m a (?:big |huge |real )?fan of (?P<o>.+)"),
            "User is a fan of {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "favorite",
            Like,
            r"(?i)\bmy (?:all-time )?favou?rite (?P<k>[a-z]+(?: [a-z]+)?) (?:is|are) (?P<o>.+)",
            "User's favorite {k} is {}.",
            Some("favorite:{k}"),
            false
        ),
        pat!(
            "into",
            Like,
            &format!(r"{I}'?m (?:really |so )?into (?P<o>.+)"),
            "User is into {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "passionate",
            Like,
            &format!(r"{I}'?m (?:really )?passionate about (?P<o>.+)"),
            "User is passionate about {}.",
            Some("sentiment:{}"),
            false
        ),
        // English — dislikes
        pat!(
            "dont_like",
            Dislike,
            &format!(r"{I} (?:really )?(?:don't|do not|dont) (?:like|enjoy) (?P<o>.+)"),
            "User dislikes {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "hate",
            Dislike,
            &format!(r"{I} (?:really |absolutely )?(?:hate|detest) (?P<o>.+)"),
            "User hates {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "cant_stand",
            Dislike,
            &format!(r"{I} (?:can't|cannot|can not) stand (?P<o>.+)"),
            "User can't stand {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!(
            "not_fan",
            Dislike,
            &format!(r"{I}'?m not (?:a |really a )?(?:big )?fan of (?P<o>.+)"),
            "User is not a fan of {}.",
            Some("sentiment:{}"),
            false
        ),
        pat!("avoid", Dislike, &format!(r"{I} (?:try to |always )?avoid (?P<o>.+)"), "User avoids {}.", None, false),
        pat!(
            "allergic",
            Bio,
            &format!(r"{I}'?m (?:very |severely )?allergic to (?P<o>.+)"),
            "User is allergic to {}.",
            None,
            false
        ),
        // English — habits
        pat!("usually", Habit, &format!(r"{I} usually (?P<o>.+)"), "User usually {}.", None, false),
        pat!("always", Habit, &format!(r"{I} always (?P<o>.+)"), "User always {}.", None, false),
        pat!(
            "every",
            Habit,
            r"(?i)\bevery (?P<k>day|morning|evening|night|week|weekend|sunday|monday|saturday) I (?P<o>.+)",
            "Every {k} user {}.",
            None,
            false
        ),
        pat!("tend_to", Habit, &format!(r"{I} tend to (?P<o>.+)"), "User tends to {}.", None, false),
        pat!("often", Habit, &format!(r"{I} (?:often|regularly) (?P<o>.+)"), "User often {}.", None, false),
        // English — goals
        pat!("want_to", Goal, &format!(r"{I} (?:really )?want to (?P<o>.+)"), "User wants to {}.", None, false),
        pat!(
            "plan_to",
            Goal,
            &format!(r"{I}(?:'m| am)? plan(?:ning)? (?:to|on) (?P<o>.+)"),
            "User plans to {}.",
            None,
            false
        ),
        pat!("hope_to", Goal, &format!(r"{I} hope to (?P<o>.+)"), "User hopes to {}.", None, false),
        pat!(
            "my_goal",
            Goal,
            r"(?i)\bmy (?:goal|dream|ambition) is (?:to )?(?P<o>.+)",
            "User's goal is to {}.",
            None,
            false
        ),
        // English — biography
        pat!(
            "work_as",
            Bio,
            &format!(r"{I} work (?:as an?|as) (?P<o>.+)"),
            "User works as {}.",
            Some("occupation"),
            false
        ),
        pat!(
            "live_in",
            Bio,
            &format!(r"{I} (?:live|'m living|am living) in (?P<o>.+)"),
            "User lives in {}.",
            Some("lives_in"),
            false
        ),
        pat!(
            "from",
            Bio,
            &format!(r"{I}(?:'m| am) (?:originally )?from (?P<o>.+)"),
            "User is from {}.",
            Some("origin"),
            false
        ),
        pat!("name", Bio, r"(?i)\bmy name is (?P<o>.+)", "User's name is {}.", Some("name"), false),
        pat!(
            "grew_up",
            Bio,
            &format!(r"{I} grew up (?:in|on|near) (?P<o>.+)"),
            "User grew up in {}.",
            Some("grew_up_in"),
            false
        ),
        // English — nostalgia
        pat!("miss", Nostalgia, &format!(r"{I} (?:really )?miss (?P<o>.+)"), "User misses {}.", None, false),
        pat!(
            "remember",
            Nostalgia,
            &format!(r"{I} (?:still |fondly )?remember (?:when )?(?P<o>.+)"),
            "User fondly remembers {}.",
            None,
            false
        ),
        pat!("used_to", Nostalgia, &format!(r"{I} used to (?P<o>.+)"), "User used to {}.", None, false),
        // Chinese
        pat!(
            "zh_like",
            Like,
            r"我(?:很|非常|特别|真的|一直)?喜欢(?P<o>.+)",
            "用户喜欢{}。",
            Some("sentiment:{}"),
            true
        ),
        pat!("zh_love", Like, r"我(?:很|非常|特别)?(?:爱|热爱)(?P<o>.+)", "用户热爱{}。", Some("sentiment:{}"), true),
        pat!(
            "zh_favorite",
            Like,
            r"我最(?:喜欢|爱)的(?P<k>.{1,6}?)是(?P<o>.+)",
            "用户最喜欢的{k}是{}。",
            Some("favorite:{k}"),
            true
        ),
        pat!(
            "zh_dislike",
            Dislike,
            r"我(?:很|非常|特别)?不(?:喜欢|爱)(?P<o>.+)",
            "用户不喜欢{}。",
            Some("sentiment:{}"),
            true
        ),
        pat!("zh_hate", Dislike, r"我(?:很|非常|特别)?讨厌(?P<o>.+)", "用户讨厌{}。", Some("sentiment:{}"), true),
        pat!("zh_allergic", Bio, r"我对(?P<o>.{1,12}?)过敏", "用户对{}过敏。", None, true),
        pat!("zh_usually", Habit, r"我(?:通常|一般|平时|经常)(?P<o>.+)", "用户通常{}。", None, true),
        pat!("zh_every", Habit, r"我每(?P<k>天|周|个周末|晚|天早上)(?P<o>.+)", "用户每{k}{}。", None, true),
        pat!("zh_habit", Habit, r"我习惯(?P<o>.+)", "用户习惯{}。", None, true),
        pat!("zh_want", Goal, r"我(?:想要|希望|梦想)(?P<o>.+)", "用户希望{}。", None, true),
        pat!("zh_plan", Goal, r"我(?:打算|计划|准备)(?P<o>.+)", "用户打算{}。", None, true),
        pat!("zh_live", Bio, r"我(?:现在)?住在(?P<o>.+)", "用户住在{}。", Some("lives_in"), true),
        pat!("zh_work", Bio, r"我在(?P<o>.{1,15}?)(?:工作|上班)", "用户在{}工作。", Some("works_at"), true),
        pat!("zh_miss", Nostalgia, r"我(?:很)?(?:怀念|想念)(?P<o>.+)", "用户怀念{}。", None, true),
    ]
});

/// Objects that make a pattern hit meaningless ("I like it", "I want to say…").
const VAGUE: &[&str] = &[
    "it", "that", "this", "you", "your", "how", "what", "when", "the way", "so", "them", "him", "her", "those",
    "these", // goals that are only turns of phrase ("I want to say…")
    "say", "to say", "know", "to know", "ask", "to ask", "thank", "to thank", "tell", "to tell", "let", "to let",
    "hear", "to hear", "mention", "add",
];

// A dot ends a clause only where a sentence would end: "Node.js" and "v2.1" stay whole.
static CLAUSE_END: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)[.!?]+(?:\s|$)|[;,。！？；，]|\s(?:but|because|although|though|and then|so that|since|which|when|if)\s|但是|因为|不过|所以|而且",
    )
});

/// Words after an English object that add nothing to it ("I love pizza too").
const TRAILING_FILLERS: &[&str] = &[" too", " also", " as well", " so much", " very much", " a lot"];

/// A verb an English object cannot start with: the pattern matched inside a relative clause
/// ("doing something I love is awesome"), and the object is what the clause is said of.
const STARTS_A_PREDICATE: &[&str] =
    &["is", "are", "was", "were", "has", "had", "will", "would", "should", "does", "did"];

/// Prepositions an English object cannot end with: what they point at came before the
/// pattern ("the friends I used to hang out with"). Not "in", "on", "up": they end phrasal
/// verbs ("take it all in").
const DANGLING: &[&str] = &["at", "with", "for", "of", "to", "from", "about", "into", "by"];

/// Objects that answer what the other speaker just said ("I like the idea of more variety",
/// "I love the sound of that", "I like a lot of yours"): a reaction in the conversation, not
/// something the person likes whatever is said — RealMem's essentials were full of them.
const REACTION_STARTS: &[&str] = &[
    "the idea",
    "the sound",
    "the direction",
    "the approach",
    "the suggestion",
    "the plan",
    "the focus",
    "the way you",
    "the structure",
    "the breakdown",
    "the format",
    "the list",
    "these",
    "those",
];

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
        && !STARTS_A_PREDICATE.contains(&first.as_str())
        && !DANGLING.contains(&last.as_str())
        && !words.iter().any(|w| matches!(bare(w).as_str(), "you" | "your" | "yours" | "you've" | "you're"))
        && !REACTION_STARTS.iter().any(|r| lower == *r || lower.starts_with(&format!("{r} ")))
}

/// Trim the captured object at the end of its clause and check CJK-aware length bounds.
fn clean_object(raw: &str, chinese: bool) -> Option<String> {
    let cut = CLAUSE_END.find(raw).map_or(raw, |m| &raw[..m.start()]);
    let mut obj = cut.trim().trim_end_matches(['"', '\'', ')', '”']).trim();
    while let Some(rest) = TRAILING_FILLERS.iter().find_map(|f| strip_suffix_ignore_case(obj, f)) {
        obj = rest.trim_end();
    }
    let lower = obj.to_lowercase();
    if VAGUE.iter().any(|v| lower == *v || lower.starts_with(&format!("{v} "))) {
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

/// The sentences of `text` that state something (questions excluded: "do I like…?" states
/// nothing), where a dot inside a word or a value ("Node.js", "db-staging-3.internal", "v24.11")
/// does not end one.
fn statements(text: &str) -> Vec<&str> {
    static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| re(r"[.!?]+(?:\s+|$)|[。！？]+|\n+"));
    let mut out = Vec::new();
    let mut start = 0;
    let mut ends: Vec<(usize, usize)> = SENTENCE_END.find_iter(text).map(|m| (m.start(), m.end())).collect();
    ends.push((text.len(), text.len()));
    for (end, next) in ends {
        let sentence = text[start..end].trim();
        let asked = text[end..next].contains(['?', '？']);
        start = next;
        if !asked && !sentence.is_empty() {
            out.push(sentence);
        }
    }
    out
}

/// Preferences stated in `text` (the user's own words).
pub fn preferences(text: &str) -> Vec<Preference> {
    let mut out: Vec<Preference> = Vec::new();
    for sentence in statements(text) {
        for p in PATTERNS.iter() {
            let Some(c) = p.regex.captures(sentence) else { continue };
            let Some(raw) = c.name("o") else { continue };
            let Some(object) = clean_object(raw.as_str(), p.chinese) else { continue };
            let k = c.name("k").map_or("", |m| m.as_str()).to_lowercase();
            // The document speaks of the user (then of them by name): their words, not "my".
            let said = if p.chinese { object.clone() } else { in_third_person(&object) };
            let document = p.template.replace("{k}", &k).replace("{}", &said);
            let predicate = p.predicate.map(|t| t.replace("{k}", &k).replace("{}", &object.to_lowercase()));
            if !out.iter().any(|o| o.document == document) {
                out.push(Preference { pattern: p.name, category: p.category, object, document, predicate });
            }
        }
    }
    out
}

/// English first-person words in the third person ("play games with my husband" → "… with
/// their husband"): a mined document is about someone, so "my" in it would read as the reader's.
fn in_third_person(text: &str) -> String {
    static FIRST_PERSON: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\b(?:I'm|I've|I'd|I'll|I|[Mm]yself|[Mm]y|[Mm]e|[Mm]ine|[Oo]urselves|[Oo]urs|[Oo]ur|[Ww]e|us)\b")
    });
    FIRST_PERSON
        .replace_all(text, |c: &regex::Captures<'_>| {
            match c[0].to_lowercase().as_str() {
                "i'm" => "they're",
                "i've" => "they've",
                "i'd" => "they'd",
                "i'll" => "they'll",
                "i" | "we" => "they",
                "myself" | "ourselves" => "themselves",
                "my" | "our" => "their",
                "mine" | "ours" => "theirs",
                _ => "them",
            }
            .to_string()
        })
        .into_owned()
}

static EN_TRIPLES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let subj = r"(?P<s>\bI\b|\b[A-Z][a-z]+(?: [A-Z][a-z]+)?)";
    vec![
        (re(&format!(r"{subj}(?:'m| am| is)? (?:works?|working) (?:at|for) (?P<o>[A-Z][\w&.\- ]+)")), "works_at"),
        (re(&format!(r"{subj} (?:live|lives|'m living|am living|is living) in (?P<o>[A-Z][\w\- ]+)")), "lives_in"),
        (
            re(&format!(
                r"{subj} (?:moved|relocated) to (?P<o>[A-Z][\w\- ]+?)(?: (?:on|in) (?P<d>[\w ,]+))?(?:[.,;!]|$)"
            )),
            "lives_in",
        ),
        (re(&format!(r"{subj}(?:'m| am| is) (?:very |severely )?allergic to (?P<o>[\w\- ]+)")), "allergic_to"),
        (re(&format!(r"{subj}(?:'s| is) married to (?P<o>[A-Z][a-z]+)")), "married_to"),
        (re(r"(?P<s>\b[Mm]y|\b[A-Z][a-z]+'s) birthday is (?:on )?(?P<o>[\w ,]+)"), "birthday"),
        (
            re(
                r"\b[Mm]y (?P<p>sister|brother|daughter|son|wife|husband|mom|mother|dad|father|friend|partner|boss|cat|dog) (?P<o>[A-Z][a-z]+)",
            ),
            "has_",
        ),
    ]
});

/// How a question asks about a predicate of [`triples`]: the beginnings of its words ("Where does
/// she *work*?" → `works_at`), English and Chinese. A predicate of another origin (an LLM's) is
/// asked about by its own words ("likes_food" → "likes", "food"); `has_sister` by "sister".
pub fn predicate_cues(predicate: &str) -> Vec<String> {
    let cues: &[&str] = match predicate {
        "works_at" => &["work", "job", "employ", "company", "office", "career", "工作", "上班", "公司"],
        "lives_in" => &["live", "living", "home", "move", "moving", "city", "town", "country", "reside", "住", "搬"],
        "allergic_to" => &["allerg", "过敏"],
        "married_to" => &["marri", "marry", "husband", "wife", "spouse", "结婚", "丈夫", "妻子"],
        "birthday" => &["birthday", "born", "birth", "生日", "出生"],
        "is_at" => &["host", "server", "address", "url", "endpoint", "port", "connect", "ip", "domain", "where"],
        "version" => &["version", "release", "upgrad", "run"],
        "is" => &["value", "code", "number"],
        "replaced_by" => &["use", "using", "replac", "switch", "instead", "still", "now", "current", "migrat"],
        "is_on" => &["when", "date", "day", "schedul", "due", "deadline", "postpon", "resched", "delay"],
        _ => &[],
    };
    if !cues.is_empty() {
        return cues.iter().map(|c| c.to_string()).collect();
    }
    let words = predicate.strip_prefix("has_").unwrap_or(predicate);
    words.split(['_', ' ']).filter(|w| w.chars().count() > 1).map(str::to_lowercase).collect()
}

static ZH_TRIPLES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    vec![
        (re(r"我(?:现在)?住在(?P<o>[^，。！？,.!?\s]{1,12})"), "lives_in"),
        (re(r"我(?:已经)?搬(?:到|去)了?(?P<o>[^，。！？,.!?\s]{1,12})"), "lives_in"),
        (re(r"我在(?P<o>[^，。！？,.!?\s]{1,12}?)(?:工作|上班)"), "works_at"),
        (re(r"我对(?P<o>[^，。！？,.!?\s]{1,12}?)过敏"), "allergic_to"),
        (re(r"我的生日是(?P<o>[^，。！？,.!?\s]{1,12})"), "birthday"),
    ]
});

/// A mined document about "User" made about the person who said it, when known: "User likes
/// tea." → "Caroline likes tea.", "用户喜欢茶。" → "Caroline喜欢茶。".
pub fn about_speaker(document: &str, speaker: Option<&str>) -> String {
    let Some(name) = speaker else { return document.to_string() };
    for prefix in ["User", "用户"] {
        if let Some(rest) = document.strip_prefix(prefix) {
            return format!("{name}{rest}");
        }
    }
    document.to_string()
}

fn subject_of(s: &str) -> String {
    match s.to_lowercase().as_str() {
        "i" | "my" | "me" => "user".into(),
        other => other.trim_end_matches("'s").to_string(),
    }
}

/// At most five words, without a trailing stop.
fn first_words(text: &str) -> String {
    let object: String = text.split_whitespace().take(5).collect::<Vec<_>>().join(" ");
    object.trim_end_matches(['.', ',']).to_string()
}

/// Words that may sit inside a name ("Bank of America", "Rio de Janeiro").
const NAME_JOINERS: &[&str] =
    &["of", "de", "da", "do", "du", "del", "la", "le", "von", "van", "upon", "on", "the", "and"];

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
        let joins = NAME_JOINERS.contains(&w) && words.get(end + 1).is_some_and(|n| capital(n));
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

/// A setting stated with its value: "The staging database is now db-staging-7:6432", "our API
/// runs on Node 24.11", "my phone number is 555-0182". The value is what code and operations
/// change — an address (URL, host, host:port, IP), a version, a code with digits — so a later
/// statement of the same thing with another value supersedes the older one, as "I live in
/// Lisbon now" does Boston. Prose values ("the plan is to wait") are left alone: two of them
/// about one subject are as often two facts as one that changed.
static SETTING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:^|[\s:(])(?:the |our |my |your |its )?(?P<s>[a-z][\w-]*(?: [a-z][\w-]*){0,3}?)(?: (?:is|are|was)(?: now| still)?| now| (?:runs|listens|lives|points|moved|changed|went)(?: now)?)(?: (?:at|on|to|in|from))?(?: now)? (?P<o>https?://[^\s,;]+|[\w][\w.-]*[:.][\w.:/-]*\w|\w*\d[\w-]*)(?:[\s,;.!?)]|$)",
    )
});

/// Subject words a setting cannot have: a pronoun or a vague word names nothing to supersede.
const SETTING_VAGUE: &[&str] = &[
    "it",
    "this",
    "that",
    "which",
    "what",
    "there",
    "here",
    "he",
    "she",
    "they",
    "we",
    "i",
    "you",
    "one",
    "everything",
    "something",
    "time",
    "today",
    "now",
    "answer",
    "result",
    "total",
];

/// Words before a setting's subject that are not part of it.
const SETTING_LEAD: &[&str] =
    &["that", "so", "and", "but", "also", "note", "the", "our", "my", "your", "its", "a", "an", "now", "then"];

/// The value kinds of [`SETTING`], as predicates: where a thing is, which version it runs, or
/// another coded value.
fn setting_predicate(value: &str) -> Option<&'static str> {
    static VERSION: LazyLock<Regex> = LazyLock::new(|| re(r"^v?\d+(?:\.\d+){1,2}(?:[-+][\w.]+)?$"));
    static IP: LazyLock<Regex> = LazyLock::new(|| re(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$"));
    let digits = value.chars().filter(char::is_ascii_digit).count();
    // A date is when something happens: [`SCHEDULED`] reads it as such.
    if scheduled_date(value).is_some() {
        return None;
    }
    if value.starts_with("http://") || value.starts_with("https://") || IP.is_match(value) {
        return Some("is_at");
    }
    if VERSION.is_match(value) {
        return Some("version");
    }
    let host = value.contains(':') || (value.contains('.') && value.chars().any(char::is_alphabetic));
    if host && !value.ends_with(['.', ':']) {
        return Some("is_at");
    }
    // A bare number is a quantity more often than a setting ("the team is 12"); a code mixes.
    (digits > 0 && (value.contains('-') || value.chars().any(char::is_alphabetic)) || digits >= 3).then_some("is")
}

/// [`SETTING`]s and [`SCHEDULED`] dates in `text`, sentence by sentence.
fn settings(text: &str) -> Vec<NewTriple> {
    let mut out = Vec::new();
    for sentence in statements(text) {
        for c in SETTING.captures_iter(sentence) {
            let (Some(s), Some(o)) = (c.name("s"), c.name("o")) else { continue };
            let Some(subject) = setting_subject(s.as_str()) else { continue };
            let Some(predicate) = setting_predicate(o.as_str()) else { continue };
            out.push(NewTriple {
                subject,
                predicate: predicate.to_string(),
                object: o.as_str().to_string(),
                valid_from: None,
            });
        }
        for c in SCHEDULED.captures_iter(sentence) {
            let (Some(s), Some(o)) = (c.name("s"), c.name("o")) else { continue };
            let (Some(subject), Some(object)) = (setting_subject(s.as_str()), scheduled_date(o.as_str())) else {
                continue;
            };
            out.push(NewTriple { subject, predicate: "is_on".into(), object, valid_from: None });
        }
    }
    out
}

/// What a setting's value is of: "Note that the staging database" → "staging database", "we
/// agreed the launch" → "launch" (what follows the last article or possessive); `None` for a
/// pronoun or a vague word, which names nothing to supersede.
fn setting_subject(raw: &str) -> Option<String> {
    let lower = raw.to_lowercase();
    let words: Vec<&str> = lower.split(' ').collect();
    let after_determiner = words.iter().rposition(|w| SETTING_DETERMINERS.contains(w)).map_or(0, |i| i + 1);
    let words: Vec<&str> = words[after_determiner..].iter().copied().skip_while(|w| SETTING_LEAD.contains(w)).collect();
    (!words.is_empty() && !words.iter().any(|w| SETTING_VAGUE.contains(w))).then(|| words.join(" "))
}

/// Words after which a setting's subject starts.
const SETTING_DETERMINERS: &[&str] = &["the", "our", "my", "your", "its", "their", "this", "a", "an"];

/// Month names as a date is written ("June", "Jun", "Sept").
const MONTH: &str = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";

/// A date something is set for, stated or changed: "the launch is on June 1", "the review moved
/// to Friday", "the deadline is now 2027-03-03", "the demo was pushed to 8 June". Like a
/// setting's value, a later date for the same thing supersedes the older one; said of a past
/// event ("the party was on Saturday", "I went on May 3") it is not read — that is what
/// happened, not a plan that may change.
static SCHEDULED: LazyLock<Regex> = LazyLock::new(|| {
    let day = r"\d{1,2}(?:st|nd|rd|th)?";
    let date = format!(
        r"(?:(?:this |next )?(?:mon|tues|wednes|thurs|fri|satur|sun)day|{MONTH}\.? {day}(?:,? \d{{4}})?|{day}(?: of)? {MONTH}(?:,? \d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}})"
    );
    re(&format!(
        r"(?i)(?:^|[\s:(])(?P<s>[a-z][\w-]*(?: [a-z][\w-]*){{0,3}}?) (?:(?:is|are)(?: now| still)?(?: (?:scheduled|planned|set|booked|due|happening))?(?: (?:on|for))?|(?:(?:has|have) been |was |were |got |is |are )?(?:moved|pushed(?: back)?|postponed|rescheduled|delayed|brought forward|shifted)(?: to| until))(?: now)? (?P<o>{date})\b"
    ))
});

/// A date as [`SCHEDULED`] keeps it, so that two ways of writing one date are one value: "June
/// 1st" and "1 June" → "June 1", "1 of June, 2027" → "June 1, 2027", "next Friday" → "Friday";
/// an ISO date as it is. `None` for what is not a date.
fn scheduled_date(value: &str) -> Option<String> {
    static DATE: LazyLock<Regex> = LazyLock::new(|| {
        re(&format!(
            r"(?i)^(?:(?:this |next )?(?P<wd>(?:mon|tues|wednes|thurs|fri|satur|sun)day)|(?P<m1>{MONTH})\.? (?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<y1>\d{{4}}))?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m2>{MONTH})(?:,? (?P<y2>\d{{4}}))?|(?P<iso>\d{{4}}-\d{{2}}-\d{{2}}))$"
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
    let month =
        crate::period::month_number(m.as_str()).and_then(|n| chrono::Month::try_from(u8::try_from(n).ok()?).ok())?;
    let month = month.name();
    let day: u32 = d.as_str().parse().ok().filter(|d| (1..=31).contains(d))?;
    Some(match y {
        Some(y) => format!("{month} {day}, {}", y.as_str()),
        None => format!("{month} {day}"),
    })
}

/// Rule-based (subject, predicate, object) facts in `text`; "I"/"my"/"我" is the user.
pub fn triples(text: &str) -> Vec<NewTriple> {
    let mut out: Vec<NewTriple> = Vec::new();
    let mut push = |t: NewTriple| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    for sentence in statements(text) {
        for (regex, predicate) in EN_TRIPLES.iter() {
            for c in regex.captures_iter(sentence) {
                let Some(o) = c.name("o") else { continue };
                let object =
                    if *predicate == "birthday" { first_words(o.as_str()) } else { name_or_clause(o.as_str()) };
                if object.is_empty() {
                    continue;
                }
                let predicate = match c.name("p") {
                    Some(p) => format!("{predicate}{}", p.as_str().to_lowercase()),
                    None => predicate.to_string(),
                };
                let subject = c.name("s").map_or_else(|| "user".to_string(), |s| subject_of(s.as_str()));
                push(NewTriple { subject, predicate, object, valid_from: None });
            }
        }
        for (regex, predicate) in ZH_TRIPLES.iter() {
            if let Some(o) = regex.captures(sentence).and_then(|c| c.name("o")) {
                push(NewTriple {
                    subject: "user".into(),
                    predicate: predicate.to_string(),
                    object: o.as_str().to_string(),
                    valid_from: None,
                });
            }
        }
    }
    for t in settings(text) {
        push(t);
    }
    for t in replacements(text) {
        push(t);
    }
    out
}

/// A choice that replaced another, said as such: "we switched from Jest to Vitest", "let's use
/// pnpm instead of npm", "replace Redis with Valkey", "MySQL was replaced by Postgres", "把 npm
/// 换成 pnpm". The older choice is the subject and the newer the object of a `replaced_by`
/// triple; search marks a record said before it that names the older one with what replaced it.
/// States of mind are not choices: "went from sad to happy" is not read ("go" is not a verb of
/// these).
pub fn replacements(text: &str) -> Vec<NewTriple> {
    const THING: &str = r"[\w.+#/@-]+(?: [\w.+#/@-]+){0,3}";
    const LAZY: &str = r"[\w.+#/@-]+(?: [\w.+#/@-]+){0,3}?";
    const ZH: &str = r"[^，。！？,.!?\s]{1,12}";
    static EN: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        let change = r"(?:switch|migrat|mov|chang|port|convert|upgrad|downgrad|transition)(?:e|es|ed|ing|s)?";
        let chose = r"(?:use|uses|used|using|pick|picked|choose|chose|chosen|prefer|preferred|try|tried|adopt|adopted|install|installed|book|booked|go with|going with|went with|switch to|switched to|move to|moved to)";
        vec![
            re(&format!(
                r"(?i)\b{change}(?: [\w-]+(?: [\w-]+){{0,2}}?)? (?:over )?from (?P<old>{LAZY}) to (?P<new>{THING})"
            )),
            re(&format!(r"(?i)\b{chose} (?P<new>{LAZY}) (?:instead of|rather than) (?:using )?(?P<old>{THING})")),
            re(&format!(r"(?i)\breplac(?:e|es|ed|ing) (?P<old>{LAZY}) (?:with|by) (?P<new>{THING})")),
            re(&format!(
                r"(?i)(?:^|[\s,:;(])(?P<old>[\w.+#/@-]+) (?:was|were|is being|are being|has been|have been|got|gets) replaced (?:with|by) (?P<new>{THING})"
            )),
        ]
    });
    static CHINESE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        vec![
            re(&format!(r"把\s*(?P<old>{ZH}?)\s*(?:换|改|替换|切换)成了?\s*(?P<new>{ZH})")),
            re(&format!(r"从\s*(?P<old>{ZH}?)\s*(?:换|改|迁移|切换|转)(?:到|成)了?\s*(?P<new>{ZH})")),
            re(&format!(r"(?:用|使用|改用)\s*(?P<new>{ZH}?)\s*(?:代替|替代|取代)了?\s*(?P<old>{ZH})")),
        ]
    });
    let mut out: Vec<NewTriple> = Vec::new();
    for sentence in statements(text) {
        for (regex, chinese) in EN.iter().map(|r| (r, false)).chain(CHINESE.iter().map(|r| (r, true))) {
            for c in regex.captures_iter(sentence) {
                let (Some(old), Some(new)) = (c.name("old"), c.name("new")) else { continue };
                let (Some(old), Some(new)) = (choice(old.as_str(), chinese), choice(new.as_str(), chinese)) else {
                    continue;
                };
                let t = NewTriple { subject: old, predicate: "replaced_by".into(), object: new, valid_from: None };
                if t.subject.to_lowercase() != t.object.to_lowercase() && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// A choice as [`replacements`] keeps it: without the article, possessive or "old"/"new" before
/// it, up to the first word that starts another clause ("Vitest for unit tests" → "Vitest");
/// `None` for a pronoun, a vague word, or what has no letter (a quantity: "from 5 to 10").
fn choice(raw: &str, chinese: bool) -> Option<String> {
    // Besides a setting's determiners, the words that say which of the two it is.
    const BEFORE: &[&str] = &["that", "old", "new", "current", "existing"];
    const CLAUSE: &[&str] = &[
        "for",
        "because",
        "since",
        "as",
        "in",
        "on",
        "at",
        "and",
        "but",
        "so",
        "which",
        "with",
        "now",
        "today",
        "yesterday",
        "last",
        "next",
        "this",
        "after",
        "before",
        "then",
        "to",
        "from",
        "by",
        "when",
        "if",
        "instead",
        "rather",
        "already",
        "again",
        "too",
        "also",
        "everywhere",
    ];
    let text = raw.trim().trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']);
    let kept = if chinese {
        text.trim_end_matches('了').to_string()
    } else {
        let words: Vec<&str> = text.split(' ').collect();
        let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let before = |w: &&String| SETTING_DETERMINERS.contains(&w.as_str()) || BEFORE.contains(&w.as_str());
        let start = lower.iter().take_while(before).count();
        // An adverb ("immediately", "finally") ends it too; a name ("Italy") does not.
        let ends = |(w, l): (&&str, &String)| CLAUSE.contains(&l.as_str()) || (l.ends_with("ly") && *w == l.as_str());
        let end = words.iter().zip(&lower).skip(start).position(ends).map_or(words.len(), |i| start + i);
        words[start..end].join(" ")
    };
    let lower = kept.to_lowercase();
    let vague = lower.split(' ').any(|w| SETTING_VAGUE.contains(&w) || matches!(w, "them" | "those" | "these" | "us"));
    (!kept.is_empty() && !vague && kept.chars().any(char::is_alphabetic)).then_some(kept)
}

#[cfg(test)]
mod triple_object_tests {
    use super::*;

    fn objects(text: &str) -> Vec<(String, String)> {
        triples(text).into_iter().map(|t| (t.predicate, t.object)).collect()
    }

    fn settings_of(text: &str) -> Vec<(String, String, String)> {
        settings(text).into_iter().map(|t| (t.subject, t.predicate, t.object)).collect()
    }

    #[test]
    fn a_setting_is_read_with_its_value_and_prose_is_not() {
        let one = |s: &str, p: &str, o: &str| vec![(s.to_string(), p.to_string(), o.to_string())];
        assert_eq!(
            settings_of("The staging database is db-staging-3.internal:5432."),
            one("staging database", "is_at", "db-staging-3.internal:5432")
        );
        assert_eq!(
            settings_of("user: Heads up, the staging database is now db-staging-7:6432 since Monday."),
            one("staging database", "is_at", "db-staging-7:6432")
        );
        assert_eq!(
            settings_of("Note that the staging database moved to 10.0.3.7."),
            one("staging database", "is_at", "10.0.3.7")
        );
        assert_eq!(settings_of("Our API runs on v24.11.0 now."), one("api", "version", "v24.11.0"));
        assert_eq!(
            settings_of("The docs site is at https://docs.example.com/v2."),
            one("docs site", "is_at", "https://docs.example.com/v2")
        );
        assert_eq!(settings_of("My phone number is 555-0182."), one("phone number", "is", "555-0182"));
        // Prose, pronouns, quantities and questions are not settings.
        for none in [
            "The plan is to wait until spring.",
            "It is 3.5 km from here.",
            "The team is 12 people.",
            "Is the staging database db-staging-3:5432?",
            "That is version 2.",
            "I was born in 1990.",
        ] {
            assert_eq!(settings_of(none), vec![], "{none}");
        }
    }

    #[test]
    fn a_date_something_is_set_for_is_read_as_one_value_and_a_past_event_is_not() {
        let on = |s: &str, o: &str| vec![(s.to_string(), "is_on".to_string(), o.to_string())];
        assert_eq!(settings_of("The launch is on June 1st."), on("launch", "June 1"));
        assert_eq!(settings_of("Heads up: the launch was pushed to 8 June."), on("launch", "June 8"));
        assert_eq!(settings_of("We agreed the design review moved to next Friday."), on("design review", "Friday"));
        assert_eq!(settings_of("Our demo is now scheduled for Sept 3, 2027."), on("demo", "September 3, 2027"));
        assert_eq!(settings_of("The deadline is 2027-03-03."), on("deadline", "2027-03-03"));
        assert_eq!(settings_of("The offsite has been postponed until 2 of May 2027."), on("offsite", "May 2, 2027"));
        for none in [
            "The party was on Saturday.",
            "I went camping on May 3.",
            "We are on Friday's call.",
            "Is the launch on June 1?",
            "The launch is on track.",
            "It is on June 1.",
        ] {
            assert_eq!(settings_of(none), vec![], "{none}");
        }
        // One date written two ways is one value: nothing to supersede.
        assert_eq!(scheduled_date("1st of June"), scheduled_date("June 1"));
        assert_eq!(scheduled_date("June 32"), None);
    }

    #[test]
    fn a_replaced_choice_is_read_with_the_older_as_subject() {
        let of = |text: &str| {
            replacements(text).into_iter().map(|t| (t.subject, t.object)).collect::<Vec<(String, String)>>()
        };
        let one = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
        assert_eq!(of("We switched from Jest to Vitest for unit tests."), one("Jest", "Vitest"));
        assert_eq!(of("Let's use pnpm instead of npm from now on."), one("npm", "pnpm"));
        assert_eq!(of("Please replace the old Redis cache with Valkey."), one("Redis cache", "Valkey"));
        assert_eq!(of("Last week MySQL was replaced by Postgres 16."), one("MySQL", "Postgres 16"));
        assert_eq!(of("We migrated the service from Heroku to Fly.io yesterday."), one("Heroku", "Fly.io"));
        assert_eq!(of("I booked the Hilton instead of the Ritz."), one("Ritz", "Hilton"));
        assert_eq!(of("Move from static images to live video immediately."), one("static images", "live video"));
        assert_eq!(of("We moved the offsite from Rome to Italy instead."), one("Rome", "Italy"));
        assert_eq!(of("我们把 npm 换成了 pnpm。"), one("npm", "pnpm"));
        assert_eq!(of("从MySQL迁移到Postgres了"), one("MySQL", "Postgres"));
        for none in [
            "I went from sad to happy.",
            "Traffic grew from 5 to 10 per second.",
            "Should we switch from Jest to Vitest?",
            "We moved from it to that.",
            "Jest is fine.",
        ] {
            assert_eq!(of(none), vec![], "{none}");
        }
    }

    #[test]
    fn a_named_object_ends_with_the_name() {
        let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        assert_eq!(
            objects("I live in Boston and I work at Fidelity."),
            pairs(&[("works_at", "Fidelity"), ("lives_in", "Boston")])
        );
        assert_eq!(objects("I live in New York City now."), pairs(&[("lives_in", "New York City")]));
        assert_eq!(objects("I work at Bank of America in Boston"), pairs(&[("works_at", "Bank of America")]));
        assert_eq!(objects("I'm allergic to peanuts, so no satay."), pairs(&[("allergic_to", "peanuts")]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (pattern, positive example, expected object) for every pattern; negatives below.
    const POSITIVES: &[(&str, &str, &str)] = &[
        ("like", "I really like hiking in the Alps, it's calming.", "hiking in the Alps"),
        ("love", "Honestly I love Italian food.", "Italian food"),
        ("enjoy", "I enjoy painting sunsets on weekends", "painting sunsets on weekends"),
        ("prefer", "I prefer trains to planes.", "trains to planes"),
        ("fan_of", "I'm a big fan of jazz", "jazz"),
        ("favorite", "My favorite color is teal.", "teal"),
        ("into", "I'm really into pottery these days", "pottery these days"),
        ("passionate", "I'm passionate about LGBTQ rights.", "LGBTQ rights"),
        ("dont_like", "I don't like horror movies.", "horror movies"),
        ("hate", "I hate waking up early", "waking up early"),
        ("cant_stand", "I can't stand loud music", "loud music"),
        ("not_fan", "I'm not a fan of spicy food", "spicy food"),
        ("avoid", "I try to avoid sugar.", "sugar"),
        ("allergic", "I'm allergic to peanuts.", "peanuts"),
        ("usually", "I usually run before work.", "run before work"),
        ("always", "I always drink tea in the afternoon", "drink tea in the afternoon"),
        ("every", "Every morning I meditate for ten minutes.", "meditate for ten minutes"),
        ("tend_to", "I tend to work late", "work late"),
        ("often", "I often visit my grandma", "visit my grandma"),
        ("want_to", "I want to learn the guitar.", "learn the guitar"),
        ("plan_to", "I'm planning to adopt a child", "adopt a child"),
        ("hope_to", "I hope to run a marathon", "run a marathon"),
        ("my_goal", "My goal is to become a counselor.", "become a counselor"),
        ("work_as", "I work as a nurse at the clinic", "nurse at the clinic"),
        ("live_in", "I live in Lisbon.", "Lisbon"),
        ("from", "I'm originally from Sweden", "Sweden"),
        ("name", "My name is Caroline.", "Caroline"),
        ("grew_up", "I grew up in a small town", "a small town"),
        ("miss", "I miss my old neighbourhood", "my old neighbourhood"),
        ("remember", "I still remember when we camped by the lake", "we camped by the lake"),
        ("used_to", "I used to play the violin.", "play the violin"),
        ("zh_like", "我很喜欢喝茶。", "喝茶"),
        ("zh_love", "我热爱摄影", "摄影"),
        ("zh_favorite", "我最喜欢的水果是芒果。", "芒果"),
        ("zh_dislike", "我不喜欢咖啡，太苦了。", "咖啡"),
        ("zh_hate", "我讨厌早起", "早起"),
        ("zh_allergic", "我对花生过敏", "花生"),
        ("zh_usually", "我通常七点起床", "七点起床"),
        ("zh_every", "我每天跑步五公里", "跑步五公里"),
        ("zh_habit", "我习惯睡前看书", "睡前看书"),
        ("zh_want", "我希望明年去日本", "明年去日本"),
        ("zh_plan", "我打算学西班牙语", "学西班牙语"),
        ("zh_live", "我住在北京", "北京"),
        ("zh_work", "我在腾讯工作", "腾讯"),
        ("zh_miss", "我很怀念大学时光", "大学时光"),
    ];

    #[test]
    fn every_pattern_has_a_positive_example() {
        let english = PATTERNS.iter().filter(|p| !p.chinese).count();
        let chinese = PATTERNS.iter().filter(|p| p.chinese).count();
        assert!(english >= 27 && chinese >= 12, "{english} English, {chinese} Chinese patterns");
        for p in PATTERNS.iter() {
            assert!(POSITIVES.iter().any(|(name, _, _)| *name == p.name), "pattern {} has no positive example", p.name);
        }
        for (name, text, object) in POSITIVES {
            let found = preferences(text);
            assert!(found.iter().any(|f| f.pattern == *name && f.object == *object), "{name}: {text:?} gave {found:?}");
        }
    }

    /// One splitter for every rule: a dot inside a name does not end the sentence a preference
    /// or a fact is read from ("Node.js" was read as "Node"), and a question still states nothing.
    #[test]
    fn a_dot_inside_a_name_does_not_cut_what_is_read() {
        let found = preferences("I really love Node.js for small tools. Do I love Deno?");
        assert!(found.iter().any(|p| p.object.contains("Node.js")), "{found:?}");
        assert!(!found.iter().any(|p| p.object.contains("Deno")), "{found:?}");
    }

    #[test]
    fn negatives_are_not_preferences() {
        for text in [
            "Do I like it?",                                  // a question
            "I like that you asked.",                         // vague object
            "I like it",                                      // vague object
            "Would you like some tea?",                       // not first person
            "She loves hiking.",                              // someone else
            "I want to say thank you",                        // vague goal
            "I'd like to order now",                          // polite request
            "I like",                                         // no object
            "他喜欢喝茶",                                     // someone else (Chinese)
            "你住在哪里？",                                   // a question
            "I always",                                       // no object
            "Yeah, I love to.",                               // what is loved is elided
            "Doing something I love is awesome.",             // a relative clause: the object came before
            "Those are the friends I used to hang out with.", // … and so did this one
            "I love it too",                                  // vague once the filler is gone
            &format!("I love {}", "very ".repeat(30)),        // too long
            "I like the idea of more variety.",               // a reaction to what was proposed
            "I love the sound of that!",                      // … and this
            "Honestly I like a lot of yours.",                // … and this: it names the other speaker
            "I like your plan for the launch.",               // … and this
        ] {
            let found = preferences(text);
            assert!(found.is_empty(), "{text:?} gave {found:?}");
        }
    }

    #[test]
    fn documents_speak_of_the_user_in_the_third_person() {
        let p = preferences("I used to play games with my husband.");
        assert_eq!(p[0].object, "play games with my husband", "the object is what was said");
        assert_eq!(p[0].document, "User used to play games with their husband.");
        assert_eq!(about_speaker(&p[0].document, Some("Deborah")), "Deborah used to play games with their husband.");
        assert_eq!(in_third_person("when we camped, Ana and I"), "when they camped, Ana and they");
        assert_eq!(in_third_person("me, myself and mine; our US trip"), "them, themselves and theirs; their US trip");
        assert_eq!(in_third_person("Mystic Meg"), "Mystic Meg", "whole words only");
    }

    #[test]
    fn fillers_after_an_object_are_dropped() {
        assert_eq!(preferences("Cool, I love pizza too!")[0].document, "User loves pizza.");
        assert_eq!(preferences("I love cars so much.")[0].document, "User loves cars.");
        assert_eq!(preferences("I like jazz as well")[0].object, "jazz");
    }

    #[test]
    fn documents_and_predicates() {
        let p = preferences("My favorite drink is green tea. I hate mornings.");
        assert_eq!(p[0].document, "User's favorite drink is green tea.");
        assert_eq!(p[0].predicate.as_deref(), Some("favorite:drink"));
        assert_eq!(p[1].predicate.as_deref(), Some("sentiment:mornings"));
        let z = preferences("我最喜欢的水果是芒果");
        assert_eq!(z[0].document, "用户最喜欢的水果是芒果。");
    }

    #[test]
    fn triples_in_english_and_chinese() {
        let t = triples(
            "Anna works at Acme Corp. I moved to Berlin on 3 May. My sister Mia is great. I'm allergic to peanuts.",
        );
        let has = |s: &str, p: &str, o: &str| t.iter().any(|x| x.subject == s && x.predicate == p && x.object == o);
        assert!(has("anna", "works_at", "Acme Corp"), "{t:?}");
        assert!(has("user", "lives_in", "Berlin"), "{t:?}");
        assert!(has("user", "has_sister", "Mia"), "{t:?}");
        assert!(has("user", "allergic_to", "peanuts"), "{t:?}");
        let z = triples("我住在上海，我在阿里巴巴工作。");
        assert!(z.iter().any(|x| x.predicate == "lives_in" && x.object == "上海"), "{z:?}");
        assert!(z.iter().any(|x| x.predicate == "works_at" && x.object == "阿里巴巴"), "{z:?}");
    }
}
