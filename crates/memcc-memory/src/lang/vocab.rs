//! The words the rules share: names of months and days, and the small lists a rule consults to
//! tell a statement from a turn of phrase. Each list is here once; a rule names the list.

/// A month's name or its abbreviation ("June", "Jun", "Sept"), as a pattern fragment without a
/// group. [`month_number`] reads what it matched.
pub const MONTH: &str = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";

/// The month a name or its abbreviation names ("Sept" → 9), 1–12.
pub fn month_number(name: &str) -> Option<u32> {
    let n = name.to_lowercase();
    let i = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        .iter()
        .position(|m| n.starts_with(m))?;
    u32::try_from(i + 1).ok()
}

/// The days of the week, lowercase, Monday first.
pub const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// A day of the week's full name, as a pattern fragment without a group.
pub const WEEKDAY: &str = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day";

/// Objects that make a preference meaningless ("I like it", "I want to say…").
pub const VAGUE_OBJECTS: &[&str] = &[
    "it", "that", "this", "you", "your", "how", "what", "when", "the way", "so", "them", "him", "her", "those",
    "these", // goals that are only turns of phrase ("I want to say…")
    "say", "to say", "know", "to know", "ask", "to ask", "thank", "to thank", "tell", "to tell", "let", "to let",
    "hear", "to hear", "mention", "add",
];

/// Where a clause ends inside a sentence: a dot only where a sentence would end ("Node.js" and
/// "v2.1" stay whole), a comma or semicolon, or a conjunction that starts another clause.
pub const CLAUSE_END: &str = r"(?i)[.!?]+(?:\s|$)|[;,。！？；，]|\s(?:but|because|although|though|and then|so that|since|which|when|if)\s|但是|因为|不过|所以|而且";

/// Words after an English object that add nothing to it ("I love pizza too").
pub const TRAILING_FILLERS: &[&str] = &[" too", " also", " as well", " so much", " very much", " a lot"];

/// A verb an English object cannot start with: the pattern matched inside a relative clause
/// ("doing something I love is awesome"), and the object is what the clause is said of.
pub const STARTS_A_PREDICATE: &[&str] =
    &["is", "are", "was", "were", "has", "had", "will", "would", "should", "does", "did"];

/// Prepositions an English object cannot end with: what they point at came before the pattern
/// ("the friends I used to hang out with"). Not "in", "on", "up": they end phrasal verbs ("take
/// it all in").
pub const DANGLING: &[&str] = &["at", "with", "for", "of", "to", "from", "about", "into", "by"];

/// Objects that answer what the other speaker just said ("I like the idea of more variety", "I
/// love the sound of that", "I like a lot of yours"): a reaction in the conversation, not
/// something the person likes whatever is said — RealMem's essentials were full of them.
pub const REACTION_STARTS: &[&str] = &[
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

/// Words that name the other speaker: an object holding one reacts to them.
pub const SECOND_PERSON: &[&str] = &["you", "your", "yours", "you've", "you're"];

/// Words that may sit inside a name ("Bank of America", "Rio de Janeiro").
pub const NAME_JOINERS: &[&str] =
    &["of", "de", "da", "do", "du", "del", "la", "le", "von", "van", "upon", "on", "the", "and"];

/// Subject words a setting or a choice cannot have: a pronoun or a vague word names nothing to
/// supersede.
pub const VAGUE_SUBJECTS: &[&str] = &[
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
pub const SETTING_LEAD: &[&str] =
    &["that", "so", "and", "but", "also", "note", "the", "our", "my", "your", "its", "a", "an", "now", "then"];

/// Words after which a setting's subject starts.
pub const DETERMINERS: &[&str] = &["the", "our", "my", "your", "its", "their", "this", "a", "an"];

/// Besides the determiners, the words before a choice that say which of the two it is.
pub const WHICH_CHOICE: &[&str] = &["that", "old", "new", "current", "existing"];

/// Words that end a choice: another clause starts ("Vitest for unit tests" → "Vitest").
pub const ENDS_A_CHOICE: &[&str] = &[
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

/// Pronouns a choice cannot be, beside [`VAGUE_SUBJECTS`].
pub const VAGUE_CHOICES: &[&str] = &["them", "those", "these", "us"];
