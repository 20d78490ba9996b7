//! Facts about people: where they work and live, what they are allergic to, whom they married,
//! their birthday and the people (and pets) they name. "I", "my" and "我" are the user.

use std::sync::LazyLock;

use super::Language::{Chinese, English};
use super::{Keyed, Object, Predicate, Rule, Sentences};
use crate::record::NewTriple;

/// An English fact's subject: "I" or a capitalised name (one or two words).
const SUBJECT: &str = r"(?P<s>\bI\b|\b[A-Z][a-z]+(?: [A-Z][a-z]+)?)";

/// A Chinese fact's object: up to twelve characters, no punctuation or space.
const ZH_OBJECT: &str = r"[^，。！？,.!?\s]{1,12}";

fn en(name: &'static str, pattern: &str, predicate: Predicate, object: Object) -> Rule {
    Rule::new(name, English, &pattern.replace("{S}", SUBJECT), Keyed::By(predicate), object)
}

fn zh(name: &'static str, pattern: &str, predicate: Predicate) -> Rule {
    Rule::new(name, Chinese, &pattern.replace("{O}", ZH_OBJECT), Keyed::By(predicate), Object::Span)
}

pub static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    use Predicate::*;
    vec![
        en("works_at", r"{S}(?:'m| am| is)? (?:works?|working) (?:at|for) (?P<o>[A-Z][\w&.\- ]+)", WorksAt, Object::Name)
            .examples(&[
                ("Anna works at Acme Corp.", "anna works_at Acme Corp"),
                ("I work at Bank of America in Boston", "user works_at Bank of America"),
            ])
            .counter_examples(&["I work at home."]),
        en("lives_in", r"{S} (?:live|lives|'m living|am living|is living) in (?P<o>[A-Z][\w\- ]+)", LivesIn, Object::Name)
            .examples(&[
                ("I live in Boston and I work at Fidelity.", "user lives_in Boston"),
                ("I live in New York City now.", "user lives_in New York City"),
            ])
            .counter_examples(&["I live in a small flat."]),
        en(
            "moved_to",
            r"{S} (?:moved|relocated) to (?P<o>[A-Z][\w\- ]+?)(?: (?:on|in) (?P<d>[\w ,]+))?(?:[.,;!]|$)",
            LivesIn,
            Object::Name,
        )
        .examples(&[("I moved to Berlin on 3 May.", "user lives_in Berlin")]),
        en("allergic_to", r"{S}(?:'m| am| is) (?:very |severely )?allergic to (?P<o>[\w\- ]+)", AllergicTo, Object::Name)
            .examples(&[("I'm allergic to peanuts, so no satay.", "user allergic_to peanuts")]),
        en("married_to", r"{S}(?:'s| is) married to (?P<o>[A-Z][a-z]+)", MarriedTo, Object::Name)
            .examples(&[("Maria is married to Tomas.", "maria married_to Tomas")]),
        en("birthday", r"(?P<s>\b[Mm]y|\b[A-Z][a-z]+'s) birthday is (?:on )?(?P<o>[\w ,]+)", Birthday, Object::Words)
            .examples(&[("My birthday is on March 3rd.", "user birthday March 3rd")]),
        en(
            "relation",
            r"\b[Mm]y (?P<k>sister|brother|daughter|son|wife|husband|mom|mother|dad|father|friend|partner|boss|cat|dog) (?P<o>[A-Z][a-z]+)",
            Has,
            Object::Name,
        )
        .examples(&[("My sister Mia is great.", "user has_sister Mia")])
        .counter_examples(&["My sister is great."]),
        zh("zh_lives_in", r"我(?:现在)?住在(?P<o>{O})", LivesIn).examples(&[("我住在上海，我在阿里巴巴工作。", "user lives_in 上海")]),
        zh("zh_moved_to", r"我(?:已经)?搬(?:到|去)了?(?P<o>{O})", LivesIn).examples(&[("我搬到了杭州", "user lives_in 杭州")]),
        zh("zh_works_at", r"我在(?P<o>{O}?)(?:工作|上班)", WorksAt).examples(&[("我住在上海，我在阿里巴巴工作。", "user works_at 阿里巴巴")]),
        zh("zh_allergic_to", r"我对(?P<o>{O}?)过敏", AllergicTo).examples(&[("我对花生过敏", "user allergic_to 花生")]),
        zh("zh_birthday", r"我的生日是(?P<o>{O})", Birthday).examples(&[("我的生日是五月三日", "user birthday 五月三日")]),
    ]
});

/// The facts of `sentences`, in their order.
pub(super) fn read(sentences: &Sentences<'_>) -> Vec<NewTriple> {
    super::read_triples(&RULES, sentences, read_one)
}

fn read_one(rule: &Rule, sentence: &str) -> Vec<NewTriple> {
    let Keyed::By(predicate) = rule.keyed else { return Vec::new() };
    rule.pattern
        .captures_iter(sentence)
        .filter_map(|c| {
            let object = rule.object.read(c.name("o")?.as_str(), rule.chinese())?;
            let kind = c.name("k").map_or(String::new(), |k| k.as_str().to_lowercase());
            let subject = c.name("s").map_or_else(|| "user".to_string(), |s| subject_of(s.as_str()));
            Some(NewTriple { subject, predicate: predicate.stored(&kind, &object), object, valid_from: None })
        })
        .collect()
}

/// What `rule` (one of [`RULES`]) alone reads in `text`: "subject predicate object".
pub(super) fn read_alone(rule: &Rule, text: &str) -> Vec<String> {
    super::triples_alone(rule, text, read_one)
}

fn subject_of(s: &str) -> String {
    match s.to_lowercase().as_str() {
        "i" | "my" | "me" => "user".into(),
        other => other.trim_end_matches("'s").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::triples;

    #[test]
    fn a_named_object_ends_with_the_name() {
        let objects = |text: &str| triples(text).into_iter().map(|t| (t.predicate, t.object)).collect::<Vec<_>>();
        let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        assert_eq!(
            objects("I live in Boston and I work at Fidelity."),
            pairs(&[("works_at", "Fidelity"), ("lives_in", "Boston")])
        );
        assert_eq!(objects("I live in New York City now."), pairs(&[("lives_in", "New York City")]));
        assert_eq!(objects("I work at Bank of America in Boston"), pairs(&[("works_at", "Bank of America")]));
        assert_eq!(objects("I'm allergic to peanuts, so no satay."), pairs(&[("allergic_to", "peanuts")]));
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
