//! A choice that replaced another, said as such: "we switched from Jest to Vitest", "let's use
//! pnpm instead of npm", "replace Redis with Valkey", "MySQL was replaced by Postgres", "把 npm
//! 换成 pnpm". The older choice is the subject and the newer the object of a `replaced_by`
//! triple; search marks a record said before it that names the older one with what replaced it.
//! States of mind are not choices: "went from sad to happy" is not read ("go" is not a verb of
//! these).

use std::sync::LazyLock;

use super::Language::{Chinese, English};
use super::{Keyed, Object, Predicate, Rule, Sentences};
use crate::record::NewTriple;

/// A thing chosen: up to four words of letters, digits and `.+#/@-`.
const THING: &str = r"[\w.+#/@-]+(?: [\w.+#/@-]+){0,3}";
/// The same, as short as the rest of the pattern allows.
const LAZY: &str = r"[\w.+#/@-]+(?: [\w.+#/@-]+){0,3}?";
/// A Chinese choice: up to twelve characters, no punctuation or space.
const ZH: &str = r"[^，。！？,.!?\s]{1,12}";
/// Verbs of change ("switched", "migrating", "moved").
const CHANGE: &str = r"(?:switch|migrat|mov|chang|port|convert|upgrad|downgrad|transition)(?:e|es|ed|ing|s)?";
/// Verbs of choosing, said with "instead of".
const CHOSE: &str = r"(?:use|uses|used|using|pick|picked|choose|chose|chosen|prefer|preferred|try|tried|adopt|adopted|install|installed|book|booked|go with|going with|went with|switch to|switched to|move to|moved to)";

fn rule(name: &'static str, language: super::Language, pattern: &str) -> Rule {
    let pattern = pattern
        .replace("{THING}", THING)
        .replace("{LAZY}", LAZY)
        .replace("{ZH}", ZH)
        .replace("{CHANGE}", CHANGE)
        .replace("{CHOSE}", CHOSE);
    Rule::new(name, language, &pattern, Keyed::By(Predicate::ReplacedBy), Object::Choice)
}

pub static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        rule("changed_from_to", English, r"(?i)\b{CHANGE}(?: [\w-]+(?: [\w-]+){0,2}?)? (?:over )?from (?P<old>{LAZY}) to (?P<new>{THING})")
            .examples(&[
                ("We switched from Jest to Vitest for unit tests.", "Jest → Vitest"),
                ("We migrated the service from Heroku to Fly.io yesterday.", "Heroku → Fly.io"),
                ("Move from static images to live video immediately.", "static images → live video"),
                ("We moved the offsite from Rome to Italy instead.", "Rome → Italy"),
            ])
            .counter_examples(&[
                "I went from sad to happy.",
                "Traffic grew from 5 to 10 per second.",
                "Should we switch from Jest to Vitest?",
                "We moved from it to that.",
            ]),
        rule("instead_of", English, r"(?i)\b{CHOSE} (?P<new>{LAZY}) (?:instead of|rather than) (?:using )?(?P<old>{THING})")
            .examples(&[
                ("Let's use pnpm instead of npm from now on.", "npm → pnpm"),
                ("I booked the Hilton instead of the Ritz.", "Ritz → Hilton"),
            ]),
        rule("replace_with", English, r"(?i)\breplac(?:e|es|ed|ing) (?P<old>{LAZY}) (?:with|by) (?P<new>{THING})")
            .examples(&[("Please replace the old Redis cache with Valkey.", "Redis cache → Valkey")]),
        rule(
            "was_replaced",
            English,
            r"(?i)(?:^|[\s,:;(])(?P<old>[\w.+#/@-]+) (?:was|were|is being|are being|has been|have been|got|gets) replaced (?:with|by) (?P<new>{THING})",
        )
        .examples(&[("Last week MySQL was replaced by Postgres 16.", "MySQL → Postgres 16")])
        .counter_examples(&["Jest is fine."]),
        rule("zh_ba_huan_cheng", Chinese, r"把\s*(?P<old>{ZH}?)\s*(?:换|改|替换|切换)成了?\s*(?P<new>{ZH})")
            .examples(&[("我们把 npm 换成了 pnpm。", "npm → pnpm")]),
        rule("zh_cong_dao", Chinese, r"从\s*(?P<old>{ZH}?)\s*(?:换|改|迁移|切换|转)(?:到|成)了?\s*(?P<new>{ZH})")
            .examples(&[("从MySQL迁移到Postgres了", "MySQL → Postgres")]),
        rule("zh_yong_daiti", Chinese, r"(?:用|使用|改用)\s*(?P<new>{ZH}?)\s*(?:代替|替代|取代)了?\s*(?P<old>{ZH})")
            .examples(&[("我们用Valkey代替了Redis", "Redis → Valkey")]),
    ]
});

/// The replacements of `sentences`; a thing never replaces itself.
pub(super) fn read(sentences: &Sentences<'_>) -> Vec<NewTriple> {
    super::read_triples(&RULES, sentences, read_one)
}

fn read_one(rule: &Rule, sentence: &str) -> Vec<NewTriple> {
    rule.pattern
        .captures_iter(sentence)
        .filter_map(|c| {
            let old = rule.object.read(c.name("old")?.as_str(), rule.chinese())?;
            let new = rule.object.read(c.name("new")?.as_str(), rule.chinese())?;
            (old.to_lowercase() != new.to_lowercase()).then(|| NewTriple {
                subject: old,
                predicate: Predicate::ReplacedBy.key().to_string(),
                object: new,
                valid_from: None,
            })
        })
        .collect()
}

/// What `rule` (one of [`RULES`]) alone reads in `text`: "old → new".
pub(super) fn read_alone(rule: &Rule, text: &str) -> Vec<String> {
    Sentences::of(text)
        .iter()
        .flat_map(|s| read_one(rule, s))
        .map(|t| format!("{} → {}", t.subject, t.object))
        .collect()
}
