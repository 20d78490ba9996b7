//! Preferences: what the user likes, dislikes, usually does, wants, is, and misses. Each read
//! becomes a synthetic "User …" document so that a paraphrased question recalls it; only the
//! user's own words (or a named speaker's) are read.

use std::sync::LazyLock;

use regex::Regex;

use super::Language::{Chinese, English};
use super::{Keyed, Object, Predicate, Rule, Sentences};
use memcc_core::text::static_regex;

/// What kind of statement a rule recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefCategory {
    Like,
    Dislike,
    Habit,
    Goal,
    Bio,
    Nostalgia,
}
use PrefCategory::{Bio, Dislike, Goal, Habit, Like, Nostalgia};

/// A preference rule: `{}` in `document` is replaced by the object read, `{k}` by the kind its
/// pattern captured ("my favorite *drink* is").
pub struct PreferenceRule {
    pub rule: Rule,
    pub category: PrefCategory,
    pub document: &'static str,
}

/// A preference found in a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Preference {
    pub pattern: &'static str,
    pub category: PrefCategory,
    pub object: String,
    /// The synthetic document, e.g. "User likes hiking in the Alps."
    pub document: String,
    /// What a later statement supersedes it by; `None`: never superseded.
    pub predicate: Option<String>,
}

/// An English rule's subject: "I" said at the start of a clause.
const I: &str = r"(?i)(?:^|[\s,;:(])I";

fn row(
    name: &'static str,
    category: PrefCategory,
    language: super::Language,
    pattern: &str,
    document: &'static str,
    keyed: Keyed,
) -> PreferenceRule {
    let rule = Rule::new(name, language, &pattern.replace("{I}", I), keyed, Object::Clause);
    PreferenceRule { rule, category, document }
}

impl PreferenceRule {
    fn examples(mut self, examples: &'static [(&'static str, &'static str)]) -> PreferenceRule {
        self.rule = self.rule.examples(examples);
        self
    }

    fn counter_examples(mut self, counter: &'static [&'static str]) -> PreferenceRule {
        self.rule = self.rule.counter_examples(counter);
        self
    }
}

pub static RULES: LazyLock<Vec<PreferenceRule>> = LazyLock::new(|| {
    let sentiment = Keyed::By(Predicate::Sentiment);
    vec![
        row("like", Like, English, r"{I} (?:really |truly |absolutely |just )?like (?P<o>.+)", "User likes {}.", sentiment)
            .examples(&[("I really like hiking in the Alps, it's calming.", "hiking in the Alps")])
            .counter_examples(&["Do I like it?", "I like that you asked.", "I like it", "I like", "I'd like to order now", "I like the idea of more variety.", "Honestly I like a lot of yours.", "I like your plan for the launch."]),
        row("love", Like, English, r"{I} (?:really |absolutely |just )?love (?P<o>.+)", "User loves {}.", sentiment)
            .examples(&[("Honestly I love Italian food.", "Italian food")])
            .counter_examples(&["Yeah, I love to.", "Doing something I love is awesome.", "I love it too", "I love very very very very very very very very very very very very very very very very very very very very", "I love the sound of that!", "She loves hiking."]),
        row("enjoy", Like, English, r"{I} (?:really |truly )?enjoy (?P<o>.+)", "User enjoys {}.", sentiment)
            .examples(&[("I enjoy painting sunsets on weekends", "painting sunsets on weekends")]),
        row("prefer", Like, English, r"{I} (?:would |'d |usually )?prefer (?P<o>.+)", "User prefers {}.", Keyed::Never)
            .examples(&[("I prefer trains to planes.", "trains to planes")]),
        row("fan_of", Like, English, r"{I}'?m a (?:big |huge |real )?fan of (?P<o>.+)", "User is a fan of {}.", sentiment)
            .examples(&[("I'm a big fan of jazz", "jazz")]),
        row("favorite", Like, English, r"(?i)\bmy (?:all-time )?favou?rite (?P<k>[a-z]+(?: [a-z]+)?) (?:is|are) (?P<o>.+)", "User's favorite {k} is {}.", Keyed::By(Predicate::Favorite))
            .examples(&[("My favorite color is teal.", "teal")]),
        row("into", Like, English, r"{I}'?m (?:really |so )?into (?P<o>.+)", "User is into {}.", sentiment)
            .examples(&[("I'm really into pottery these days", "pottery these days")]),
        row("passionate", Like, English, r"{I}'?m (?:really )?passionate about (?P<o>.+)", "User is passionate about {}.", sentiment)
            .examples(&[("I'm passionate about LGBTQ rights.", "LGBTQ rights")]),
        row("dont_like", Dislike, English, r"{I} (?:really )?(?:don't|do not|dont) (?:like|enjoy) (?P<o>.+)", "User dislikes {}.", sentiment)
            .examples(&[("I don't like horror movies.", "horror movies")]),
        row("hate", Dislike, English, r"{I} (?:really |absolutely )?(?:hate|detest) (?P<o>.+)", "User hates {}.", sentiment)
            .examples(&[("I hate waking up early", "waking up early")]),
        row("cant_stand", Dislike, English, r"{I} (?:can't|cannot|can not) stand (?P<o>.+)", "User can't stand {}.", sentiment)
            .examples(&[("I can't stand loud music", "loud music")]),
        row("not_fan", Dislike, English, r"{I}'?m not (?:a |really a )?(?:big )?fan of (?P<o>.+)", "User is not a fan of {}.", sentiment)
            .examples(&[("I'm not a fan of spicy food", "spicy food")]),
        row("avoid", Dislike, English, r"{I} (?:try to |always )?avoid (?P<o>.+)", "User avoids {}.", Keyed::Never)
            .examples(&[("I try to avoid sugar.", "sugar")]),
        row("allergic", Bio, English, r"{I}'?m (?:very |severely )?allergic to (?P<o>.+)", "User is allergic to {}.", Keyed::Never)
            .examples(&[("I'm allergic to peanuts.", "peanuts")]),
        row("usually", Habit, English, r"{I} usually (?P<o>.+)", "User usually {}.", Keyed::Never)
            .examples(&[("I usually run before work.", "run before work")]),
        row("always", Habit, English, r"{I} always (?P<o>.+)", "User always {}.", Keyed::Never)
            .examples(&[("I always drink tea in the afternoon", "drink tea in the afternoon")])
            .counter_examples(&["I always"]),
        row("every", Habit, English, r"(?i)\bevery (?P<k>day|morning|evening|night|week|weekend|sunday|monday|saturday) I (?P<o>.+)", "Every {k} user {}.", Keyed::Never)
            .examples(&[("Every morning I meditate for ten minutes.", "meditate for ten minutes")]),
        row("tend_to", Habit, English, r"{I} tend to (?P<o>.+)", "User tends to {}.", Keyed::Never)
            .examples(&[("I tend to work late", "work late")]),
        row("often", Habit, English, r"{I} (?:often|regularly) (?P<o>.+)", "User often {}.", Keyed::Never)
            .examples(&[("I often visit my grandma", "visit my grandma")]),
        row("want_to", Goal, English, r"{I} (?:really )?want to (?P<o>.+)", "User wants to {}.", Keyed::Never)
            .examples(&[("I want to learn the guitar.", "learn the guitar")])
            .counter_examples(&["I want to say thank you", "I want to know"]),
        row("plan_to", Goal, English, r"{I}(?:'m| am)? plan(?:ning)? (?:to|on) (?P<o>.+)", "User plans to {}.", Keyed::Never)
            .examples(&[("I'm planning to adopt a child", "adopt a child")]),
        row("hope_to", Goal, English, r"{I} hope to (?P<o>.+)", "User hopes to {}.", Keyed::Never)
            .examples(&[("I hope to run a marathon", "run a marathon")]),
        row("my_goal", Goal, English, r"(?i)\bmy (?:goal|dream|ambition) is (?:to )?(?P<o>.+)", "User's goal is to {}.", Keyed::Never)
            .examples(&[("My goal is to become a counselor.", "become a counselor")]),
        row("work_as", Bio, English, r"{I} work (?:as an?|as) (?P<o>.+)", "User works as {}.", Keyed::By(Predicate::Occupation))
            .examples(&[("I work as a nurse at the clinic", "nurse at the clinic")]),
        row("live_in", Bio, English, r"{I} (?:live|'m living|am living) in (?P<o>.+)", "User lives in {}.", Keyed::By(Predicate::LivesIn))
            .examples(&[("I live in Lisbon.", "Lisbon")]),
        row("from", Bio, English, r"{I}(?:'m| am) (?:originally )?from (?P<o>.+)", "User is from {}.", Keyed::By(Predicate::Origin))
            .examples(&[("I'm originally from Sweden", "Sweden")]),
        row("name", Bio, English, r"(?i)\bmy name is (?P<o>.+)", "User's name is {}.", Keyed::By(Predicate::Name))
            .examples(&[("My name is Caroline.", "Caroline")]),
        row("grew_up", Bio, English, r"{I} grew up (?:in|on|near) (?P<o>.+)", "User grew up in {}.", Keyed::By(Predicate::GrewUpIn))
            .examples(&[("I grew up in a small town", "a small town")]),
        row("miss", Nostalgia, English, r"{I} (?:really )?miss (?P<o>.+)", "User misses {}.", Keyed::Never)
            .examples(&[("I miss my old neighbourhood", "my old neighbourhood")]),
        row("remember", Nostalgia, English, r"{I} (?:still |fondly )?remember (?:when )?(?P<o>.+)", "User fondly remembers {}.", Keyed::Never)
            .examples(&[("I still remember when we camped by the lake", "we camped by the lake")]),
        row("used_to", Nostalgia, English, r"{I} used to (?P<o>.+)", "User used to {}.", Keyed::Never)
            .examples(&[("I used to play the violin.", "play the violin")])
            .counter_examples(&["Those are the friends I used to hang out with."]),
        row("zh_like", Like, Chinese, r"我(?:很|非常|特别|真的|一直)?喜欢(?P<o>.+)", "用户喜欢{}。", sentiment)
            .examples(&[("我很喜欢喝茶。", "喝茶")])
            .counter_examples(&["他喜欢喝茶"]),
        row("zh_love", Like, Chinese, r"我(?:很|非常|特别)?(?:爱|热爱)(?P<o>.+)", "用户热爱{}。", sentiment)
            .examples(&[("我热爱摄影", "摄影")]),
        row("zh_favorite", Like, Chinese, r"我最(?:喜欢|爱)的(?P<k>.{1,6}?)是(?P<o>.+)", "用户最喜欢的{k}是{}。", Keyed::By(Predicate::Favorite))
            .examples(&[("我最喜欢的水果是芒果。", "芒果")]),
        row("zh_dislike", Dislike, Chinese, r"我(?:很|非常|特别)?不(?:喜欢|爱)(?P<o>.+)", "用户不喜欢{}。", sentiment)
            .examples(&[("我不喜欢咖啡，太苦了。", "咖啡")]),
        row("zh_hate", Dislike, Chinese, r"我(?:很|非常|特别)?讨厌(?P<o>.+)", "用户讨厌{}。", sentiment)
            .examples(&[("我讨厌早起", "早起")]),
        row("zh_allergic", Bio, Chinese, r"我对(?P<o>.{1,12}?)过敏", "用户对{}过敏。", Keyed::Never)
            .examples(&[("我对花生过敏", "花生")]),
        row("zh_usually", Habit, Chinese, r"我(?:通常|一般|平时|经常)(?P<o>.+)", "用户通常{}。", Keyed::Never)
            .examples(&[("我通常七点起床", "七点起床")]),
        row("zh_every", Habit, Chinese, r"我每(?P<k>天|周|个周末|晚|天早上)(?P<o>.+)", "用户每{k}{}。", Keyed::Never)
            .examples(&[("我每天跑步五公里", "跑步五公里")]),
        row("zh_habit", Habit, Chinese, r"我习惯(?P<o>.+)", "用户习惯{}。", Keyed::Never)
            .examples(&[("我习惯睡前看书", "睡前看书")]),
        row("zh_want", Goal, Chinese, r"我(?:想要|希望|梦想)(?P<o>.+)", "用户希望{}。", Keyed::Never)
            .examples(&[("我希望明年去日本", "明年去日本")]),
        row("zh_plan", Goal, Chinese, r"我(?:打算|计划|准备)(?P<o>.+)", "用户打算{}。", Keyed::Never)
            .examples(&[("我打算学西班牙语", "学西班牙语")]),
        row("zh_live", Bio, Chinese, r"我(?:现在)?住在(?P<o>.+)", "用户住在{}。", Keyed::By(Predicate::LivesIn))
            .examples(&[("我住在北京", "北京")])
            .counter_examples(&["你住在哪里？"]),
        row("zh_work", Bio, Chinese, r"我在(?P<o>.{1,15}?)(?:工作|上班)", "用户在{}工作。", Keyed::By(Predicate::WorksAt))
            .examples(&[("我在腾讯工作", "腾讯")]),
        row("zh_miss", Nostalgia, Chinese, r"我(?:很)?(?:怀念|想念)(?P<o>.+)", "用户怀念{}。", Keyed::Never)
            .examples(&[("我很怀念大学时光", "大学时光")]),
    ]
});

/// The preferences of `sentences`, each document once.
pub(super) fn read(sentences: &Sentences<'_>) -> Vec<Preference> {
    let mut out: Vec<Preference> = Vec::new();
    for sentence in sentences.iter() {
        for p in RULES.iter() {
            if let Some(found) = read_one(p, sentence)
                && !out.iter().any(|o| o.document == found.document)
            {
                out.push(found);
            }
        }
    }
    out
}

fn read_one(p: &PreferenceRule, sentence: &str) -> Option<Preference> {
    let c = p.rule.pattern.captures(sentence)?;
    let object = p.rule.object.read(c.name("o")?.as_str(), p.rule.chinese())?;
    let k = c.name("k").map_or("", |m| m.as_str()).to_lowercase();
    // The document speaks of the user (then of them by name): their words, not "my".
    let said = if p.rule.chinese() { object.clone() } else { in_third_person(&object) };
    let document = p.document.replace("{k}", &k).replace("{}", &said);
    let predicate = match p.rule.keyed {
        Keyed::By(predicate) => Some(predicate.stored(&k, &object)),
        Keyed::Never | Keyed::ByValue => None,
    };
    Some(Preference { pattern: p.rule.name, category: p.category, object, document, predicate })
}

/// What `rule` (one of [`RULES`]) alone reads in `text`: the objects.
pub(super) fn read_alone(rule: &Rule, text: &str) -> Vec<String> {
    let Some(p) = RULES.iter().find(|p| std::ptr::eq(&p.rule, rule)) else { return Vec::new() };
    Sentences::of(text).iter().filter_map(|s| read_one(p, s)).map(|f| f.object).collect()
}

/// English first-person words in the third person ("play games with my husband" → "… with
/// their husband"): a mined document is about someone, so "my" in it would read as the reader's.
fn in_third_person(text: &str) -> String {
    static FIRST_PERSON: LazyLock<Regex> = LazyLock::new(|| {
        static_regex(r"\b(?:I'm|I've|I'd|I'll|I|[Mm]yself|[Mm]y|[Mm]e|[Mm]ine|[Oo]urselves|[Oo]urs|[Oo]ur|[Ww]e|us)\b")
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

#[cfg(test)]
mod tests {
    use super::super::preferences;
    use super::*;

    #[test]
    fn english_and_chinese_rules_are_many() {
        let english = RULES.iter().filter(|p| !p.rule.chinese()).count();
        let chinese = RULES.iter().filter(|p| p.rule.chinese()).count();
        assert!(english >= 27 && chinese >= 12, "{english} English, {chinese} Chinese rules");
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

    /// What no rule reads, whichever rule it resembles: each rule's counter-examples, and
    /// the turns of phrase no single rule owns.
    #[test]
    fn no_rule_reads_a_counter_example_or_a_turn_of_phrase() {
        let others = ["Would you like some tea?", "She loves hiking.", "I always", "他喜欢喝茶", "你住在哪里？"];
        let counter = RULES.iter().flat_map(|p| p.rule.counter_examples.iter().copied());
        for text in counter.chain(others) {
            let found = preferences(text);
            assert!(found.is_empty(), "{text:?} gave {found:?}");
        }
    }
}
