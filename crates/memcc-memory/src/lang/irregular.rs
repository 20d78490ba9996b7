//! Irregular English verbs: the forms a stemmer cannot reach from the base form, so a question
//! in the base form ("What did Dave buy?") finds what was told in the past ("I bought …").

/// English verbs whose past tense or participle a stemmer cannot reach from the base form
/// ("buy" / "bought", "win" / "won"), each with its distinct forms. Questions ask in the base
/// form ("What did Dave buy?"), people tell in the past ("I bought a vintage camera"). Left
/// out: the light verbs (get, go, make, take, give, come, keep, feel, see, say, know, think),
/// whose past forms are among the commonest words of any conversation and would match nearly
/// every record; and forms that are more often another word ("rose", "lay", "wound", "ground",
/// "born", "spring", "ring", "light").
const IRREGULAR_VERBS: &[&[&str]] = &[
    &["arise", "arose", "arisen"],
    &["awake", "awoke", "awoken"],
    &["beat", "beaten"],
    &["become", "became"],
    &["begin", "began", "begun"],
    &["bend", "bent"],
    &["bite", "bitten"],
    &["bleed", "bled"],
    &["blow", "blew", "blown"],
    &["break", "broke", "broken"],
    &["breed", "bred"],
    &["bring", "brought"],
    &["build", "built"],
    &["buy", "bought"],
    &["catch", "caught"],
    &["choose", "chose", "chosen"],
    &["creep", "crept"],
    &["deal", "dealt"],
    &["dig", "dug"],
    &["draw", "drew", "drawn"],
    &["drink", "drank", "drunk"],
    &["drive", "drove", "driven"],
    &["eat", "ate", "eaten"],
    &["fall", "fell", "fallen"],
    &["feed", "fed"],
    &["fight", "fought"],
    &["find", "found"],
    &["flee", "fled"],
    &["fly", "flew", "flown"],
    &["forget", "forgot", "forgotten"],
    &["forgive", "forgave", "forgiven"],
    &["freeze", "froze", "frozen"],
    &["grow", "grew", "grown"],
    &["hang", "hung"],
    &["hear", "heard"],
    &["hide", "hid", "hidden"],
    &["hold", "held"],
    &["kneel", "knelt"],
    &["lead", "led"],
    &["leave", "left"],
    &["lend", "lent"],
    &["lose", "lost"],
    &["mean", "meant"],
    &["meet", "met"],
    &["pay", "paid"],
    &["ride", "rode", "ridden"],
    &["run", "ran"],
    &["seek", "sought"],
    &["sell", "sold"],
    &["send", "sent"],
    &["shake", "shook", "shaken"],
    &["shoot", "shot"],
    &["show", "shown"],
    &["shrink", "shrank", "shrunk"],
    &["sing", "sang", "sung"],
    &["sink", "sank", "sunk"],
    &["sit", "sat"],
    &["sleep", "slept"],
    &["slide", "slid"],
    &["speak", "spoke", "spoken"],
    &["spend", "spent"],
    &["spin", "spun"],
    &["stand", "stood"],
    &["steal", "stole", "stolen"],
    &["stick", "stuck"],
    &["sting", "stung"],
    &["strike", "struck"],
    &["swear", "swore", "sworn"],
    &["sweep", "swept"],
    &["swim", "swam", "swum"],
    &["swing", "swung"],
    &["teach", "taught"],
    &["tear", "tore", "torn"],
    &["tell", "told"],
    &["throw", "threw", "thrown"],
    &["understand", "understood"],
    &["wake", "woke", "woken"],
    &["wear", "wore", "worn"],
    &["weep", "wept"],
    &["win", "won"],
    &["write", "wrote", "written"],
];

/// The other forms of the irregular English verb that `word` (lowercase) is a form of ("buy" →
/// "bought", "won" → "win"; see [`IRREGULAR_VERBS`]); nothing for any other word.
pub fn irregular_forms(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    IRREGULAR_VERBS
        .iter()
        .filter(move |forms| forms.contains(&word))
        .flat_map(|forms| forms.iter().copied())
        .filter(move |form| *form != word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memcc_core::text::is_stop_word;

    #[test]
    fn an_irregular_verb_form_brings_its_other_forms_and_nothing_else_does() {
        assert_eq!(irregular_forms("buy").collect::<Vec<_>>(), ["bought"]);
        assert_eq!(irregular_forms("won").collect::<Vec<_>>(), ["win"]);
        assert_eq!(irregular_forms("wrote").collect::<Vec<_>>(), ["write", "written"]);
        for word in ["paint", "camera", "made", "got", "went", "said", "bit", "rose", ""] {
            assert_eq!(irregular_forms(word).count(), 0, "{word}");
        }
        for forms in IRREGULAR_VERBS {
            assert!(forms.iter().all(|f| !is_stop_word(f) && f.chars().all(|c| c.is_ascii_lowercase())), "{forms:?}");
            // A form in two rows would join two verbs' words.
            assert!(forms.iter().all(|f| IRREGULAR_VERBS.iter().filter(|r| r.contains(f)).count() == 1), "{forms:?}");
        }
    }
}
