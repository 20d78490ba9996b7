//! CJK-aware token estimation.
//!
//! Latin text averages about 4 characters per cl100k token, CJK ideographs about 0.87. The
//! estimate is `ceil(cjk / 0.87 + other / 4)`, computed in integers so that text without CJK is
//! exactly `ceil(len / 4)` — the host's own heuristic, with `len` in UTF-16 code units as in
//! JavaScript. Accuracy against exact cl100k counts is measured in `tests/token_accuracy.rs`.

/// Is `c` a character that tokenises like CJK (ideographs, kana, hangul, CJK punctuation)?
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F   // CJK symbols and punctuation
        | 0x3040..=0x30FF // hiragana, katakana
        | 0x3100..=0x312F // bopomofo
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xAC00..=0xD7AF // hangul syllables
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF00..=0xFFEF // full-width forms
        | 0x20000..=0x2FA1F // CJK extensions B..F, compatibility supplement
    )
}

/// About how many characters of Latin text `tokens` tokens hold ([`estimate_tokens`]' four to
/// a token; CJK is denser, so a text cut to this many characters may still need shortening).
pub fn latin_chars(tokens: usize) -> usize {
    tokens.saturating_mul(4)
}

/// Estimated token count of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    let (mut cjk, mut other) = (0usize, 0usize);
    for c in text.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else {
            other += c.len_utf16();
        }
    }
    // cjk/0.87 + other/4 == (400*cjk + 87*other) / 348
    (400 * cjk + 87 * other).div_ceil(348)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn latin_is_ceil_len_over_four() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
    }

    #[test]
    fn cjk_costs_more_per_char() {
        // 10 ideographs / 0.87 = 11.49 -> 12
        assert_eq!(estimate_tokens("我住在北京我住在北京"), 12);
        assert!(estimate_tokens("我住在北京") > estimate_tokens("abcde"));
    }

    #[test]
    fn astral_chars_count_as_two_utf16_units() {
        assert_eq!(estimate_tokens("😀😀"), 1);
        assert_eq!(estimate_tokens("😀😀😀"), 2);
    }

    proptest! {
        #[test]
        fn non_cjk_matches_js_heuristic(s in "[ -~\u{e9}\u{f1}\u{1F600}]{0,200}") {
            let utf16 = s.encode_utf16().count();
            prop_assert_eq!(estimate_tokens(&s), utf16.div_ceil(4));
        }

        #[test]
        fn concatenation_is_subadditive_within_one(a in ".{0,80}", b in ".{0,80}") {
            let whole = estimate_tokens(&format!("{a}{b}"));
            prop_assert!(whole <= estimate_tokens(&a) + estimate_tokens(&b));
            prop_assert!(whole + 1 >= estimate_tokens(&a) + estimate_tokens(&b));
        }
    }
}
