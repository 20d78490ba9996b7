//! The stretches of time a question names: "on 25 May, 2022", "in October 2023", "2021",
//! "2023-05-08", "2023年5月", and, asked at a known time, "yesterday", "last month", "上周".
//! Memory search prefers what was said within them, since a question that names when
//! something happened is asking about that time.

use memcc_core::text::static_regex;
use std::sync::LazyLock;

use chrono::{Datelike, NaiveDate, Weekday};
use regex::{Captures, Regex};

use super::vocab::{self, month_number};
use memcc_core::time::{DayRange, days, month_of, relative_ranges, weekday, weekday_at_or_before, year_of};

/// A half-open interval of time in milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub start: i64,
    pub end: i64,
}

impl Period {
    pub fn contains(&self, ms: i64) -> bool {
        (self.start..self.end).contains(&ms)
    }

    /// The smallest period holding all of `periods`.
    pub fn span(periods: &[Period]) -> Option<Period> {
        let start = periods.iter().map(|p| p.start).min()?;
        let end = periods.iter().map(|p| p.end).max()?;
        Some(Period { start, end })
    }

    fn of_range((first, end): DayRange) -> Option<Period> {
        Some(Period { start: midnight(first)?, end: midnight(end)? })
    }

    /// A named day: it and the days after it in which it is still told of.
    fn of_day(y: i32, m: u32, d: u32) -> Option<Period> {
        Period::of_range(days(NaiveDate::from_ymd_opt(y, m, d)?, DAY_REACH)?)
    }

    fn of_month(y: i32, m: u32) -> Option<Period> {
        Period::of_range(month_of(NaiveDate::from_ymd_opt(y, m, 1)?)?)
    }
}

fn midnight(d: NaiveDate) -> Option<i64> {
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

/// What happened on a named day is usually told that day or within the week after it ("I got
/// accepted on Tuesday!" on Saturday): a day names the eight days from it.
const DAY_REACH: u64 = 8;

static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    // Longest forms first: at one position the first alternative that matches wins.
    let m = |i: u8| format!(r"(?P<m{i}>{})\.?", vocab::MONTH);
    let pattern = format!(
        r"(?ix)
          (?-u:\b)(?P<iy>\d{{4}})-(?P<im>\d{{2}})-(?P<id>\d{{2}})(?-u:\b)
        | \b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\ +(?:of\ +)?{m1},?\ +(?P<y1>\d{{4}})\b
        | \b{m2}\ +(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\ +(?P<y2>\d{{4}})\b
        | \b{m3},?\ +(?:of\ +)?(?P<y3>\d{{4}})\b
        | \b(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\ +(?:of\ +)?{m4}\b
        | \b{m5}\ +(?P<d5>\d{{1,2}})(?:st|nd|rd|th)?\b
        | \b{m6}\b
        | (?-u:\b)(?P<cy>\d{{4}})年(?P<cm>\d{{1,2}})月(?:(?P<cd>\d{{1,2}})[日号])?
        | (?P<cyo>\d{{4}})年
        | (?-u:\b)(?P<zm>\d{{1,2}})月(?:(?P<zd>\d{{1,2}})[日号])?
        | (?-u:\b)(?P<my>\d{{4}})-(?P<mm>\d{{2}})(?-u:\b)
        | (?-u:\b)(?P<y>1[89]\d\d|2[01]\d\d)(?-u:\b)
        | \b(?P<wd>{weekday})\b
        | (?:周|星期|礼拜)(?P<zwd>[一二三四五六日天])",
        m1 = m(1),
        m2 = m(2),
        m3 = m(3),
        m4 = m(4),
        m5 = m(5),
        m6 = m(6),
        weekday = vocab::WEEKDAY,
    );
    static_regex(&pattern)
});

fn number<T: std::str::FromStr>(c: &Captures<'_>, name: &str) -> Option<T> {
    c.name(name)?.as_str().parse().ok()
}

/// What one match names.
enum Named {
    Dated(Period),
    /// A day or a month without its year ("on August 11", "in May"): its month, and its day.
    Yearless(u32, Option<u32>),
    /// A day of the week alone ("on Tuesday", "周二"): the latest such day up to when it is
    /// asked — a question to memory asks of the past.
    Weekday(Weekday),
}

/// Words before a weekday that make it something else: "last / next Friday" (relative dates,
/// read on their own), "every Friday" (a habit), "the Sunday before 16 November" (how grounded
/// dates are written, the date read on its own).
const NOT_BEFORE_A_WEEKDAY: &[&str] = &["last", "next", "every", "each", "the"];

/// The weekday a match names, unless its neighbours make it part of another expression.
fn weekday_named(c: &Captures<'_>, before: &str, after: &str) -> Option<Option<Weekday>> {
    if let Some(wd) = c.name("wd") {
        let word = words_before(before).next().unwrap_or_default();
        // "Friday, 16 June 2023": the date says the day.
        let dated = after.trim_start_matches([',', ' ']).starts_with(|ch: char| ch.is_ascii_digit());
        let other = NOT_BEFORE_A_WEEKDAY.contains(&word.as_str()) || dated;
        return Some((!other).then(|| weekday(wd.as_str())).flatten());
    }
    let zwd = c.name("zwd")?;
    // 上周二 / 下周二 / 每周二 / 上个星期二: a relative date or a habit; 一周一次: "一" starts a
    // word of its own (一次, 一定, 一样 …).
    let starts_a_word =
        zwd.as_str() == "一" && after.starts_with(['次', '个', '定', '般', '样', '直', '起', '些', '切']);
    if before.ends_with(['上', '下', '每', '个', '这']) || starts_a_word {
        return Some(None);
    }
    let index = "一二三四五六".chars().position(|d| zwd.as_str().starts_with(d));
    Some(Some(index.and_then(|i| Weekday::try_from(i as u8).ok()).unwrap_or(Weekday::Sun)))
}

/// Words before a bare month name that make it a date ("in May"; "may" alone is a verb).
const BEFORE_A_MONTH: &[&str] = &[
    "in", "during", "of", "early", "late", "mid", "last", "this", "since", "after", "before", "until", "till", "by",
    "from", "between",
];

/// Words that open a stretch between two dates ("from May to July"), and the words between its
/// two ends.
const OPENS_A_RANGE: &[&str] = &["from", "between"];
const JOINS_A_RANGE: &[&str] = &["to", "and", "until", "till", "through", "-", "–", "—", "到", "至"];

/// Whether `before` ends with the opening of a range of months — "from May to", "between May
/// and" — so that a bare month after it is the range's end ("to May" alone may be a name).
fn closes_a_range(before: &str) -> bool {
    static A_MONTH: LazyLock<Regex> = LazyLock::new(|| static_regex(&format!(r"(?i)^{}\.?$", vocab::MONTH)));
    let mut words = words_before(before);
    let (joiner, month, opener) = (words.next(), words.next(), words.next());
    joiner.is_some_and(|w| JOINS_A_RANGE.contains(&w.as_str()))
        && month.is_some_and(|w| A_MONTH.is_match(&w))
        && opener.is_some_and(|w| OPENS_A_RANGE.contains(&w.as_str()))
}

/// The words of `text` from its end, lowercase: what was said just before a date.
fn words_before(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().rev().map(str::to_lowercase)
}

fn named(c: &Captures<'_>, before: &str, after: &str) -> Option<Named> {
    if let Some(wd) = weekday_named(c, before, after) {
        return wd.map(Named::Weekday);
    }
    if let Some(m) = number(c, "zm") {
        return Some(Named::Yearless(m, number(c, "zd")));
    }
    for i in 4..=5 {
        if let Some(d) = number(c, &format!("d{i}")) {
            return Some(Named::Yearless(month_number(c.name(&format!("m{i}"))?.as_str())?, Some(d)));
        }
    }
    if let Some(m) = c.name("m6") {
        let word = words_before(before).next().unwrap_or_default();
        if !BEFORE_A_MONTH.contains(&word.as_str()) && !closes_a_range(before) {
            return None;
        }
        return Some(Named::Yearless(month_number(m.as_str())?, None));
    }
    named_dated(c).map(Named::Dated)
}

fn named_dated(c: &Captures<'_>) -> Option<Period> {
    if c.name("iy").is_some() {
        return Period::of_day(number(c, "iy")?, number(c, "im")?, number(c, "id")?);
    }
    for i in 1..=2 {
        if let Some(y) = number(c, &format!("y{i}")) {
            return Period::of_day(y, month_number(c.name(&format!("m{i}"))?.as_str())?, number(c, &format!("d{i}"))?);
        }
    }
    if let Some(y) = number(c, "y3") {
        return Period::of_month(y, month_number(c.name("m3")?.as_str())?);
    }
    if let Some(y) = number(c, "cy") {
        let m = number(c, "cm")?;
        return match number(c, "cd") {
            Some(d) => Period::of_day(y, m, d),
            None => Period::of_month(y, m),
        };
    }
    if let Some(y) = number(c, "my") {
        return Period::of_month(y, number(c, "mm")?);
    }
    let y = number(c, "cyo").or_else(|| number(c, "y"))?;
    Period::of_range(year_of(y)?)
}

/// The periods `text` names: absolute dates in order, then, when it is said at a known time
/// `now`, its relative ones. Impossible dates ("31 February 2023") name nothing.
pub fn named_periods(text: &str, now: Option<i64>) -> Vec<Period> {
    // (where, what, as a bound, whether it is a year alone)
    let found: Vec<(std::ops::Range<usize>, Named, Option<Bound>, bool)> = NAMED
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(0)?;
            let before = text.get(..m.start()).unwrap_or("");
            let after = text.get(m.end()..).unwrap_or("");
            let bound = Bound::around(before, after);
            let year_alone = c.name("cyo").is_some() || c.name("y").is_some();
            Some((m.range(), named(&c, before, after)?, bound, year_alone))
        })
        .collect();
    let years: Vec<(usize, i32)> =
        YEAR.find_iter(text).filter_map(|m| Some((m.start(), m.as_str().parse().ok()?))).collect();
    // "between August 11 and August 15 2023": a date without its year takes the year said next,
    // else the one said before, else the latest such date up to when it is asked ("in May",
    // asked in January, is last May). A year said for such dates is not a period of its own
    // ("从5月到7月，2023年" is May to July).
    let said_year = |at: usize| {
        years.iter().find(|(y_at, _)| *y_at > at).or_else(|| years.iter().rev().find(|(y_at, _)| *y_at < at)).copied()
    };
    let lent: Vec<usize> = found
        .iter()
        .filter(|(_, named, _, _)| matches!(named, Named::Yearless(..)))
        .filter_map(|(range, _, _, _)| said_year(range.start).map(|(y_at, _)| y_at))
        .collect();
    let today = now.and_then(chrono::DateTime::from_timestamp_millis).map(|d| d.date_naive());
    let dated: Vec<Dated> = found
        .into_iter()
        .filter(|(range, _, _, year_alone)| !(*year_alone && lent.contains(&range.start)))
        .filter_map(|(range, named, bound, _)| {
            let said = said_year(range.start).map(|(_, y)| y);
            let latest = matches!(named, Named::Yearless(..)) && said.is_none();
            let period = match named {
                Named::Dated(p) => Some(p),
                Named::Weekday(wd) => {
                    let day = weekday_at_or_before(today?, wd)?;
                    Period::of_day(day.year(), day.month(), day.day())
                }
                Named::Yearless(m, d) => {
                    let year = match (said, today) {
                        (Some(y), _) => y,
                        (None, Some(t)) if (m, d.unwrap_or(1)) > (t.month(), t.day()) => t.year() - 1,
                        (None, Some(t)) => t.year(),
                        (None, None) => return None,
                    };
                    match d {
                        Some(d) => Period::of_day(year, m, d),
                        None => Period::of_month(year, m),
                    }
                }
            }?;
            Some(Dated { range, period: bound.map_or(Some(period), |b| b.apply(period, now))?, latest })
        })
        .collect();
    let mut periods = ranges_joined(text, dated);
    if let Some(now) = now {
        periods.extend(relative_ranges(text, now).into_iter().filter_map(Period::of_range));
    }
    periods
}

/// A period the text names, where it was said, and whether its year was taken as the latest
/// up to now (a month or day said without one).
struct Dated {
    range: std::ops::Range<usize>,
    period: Period,
    latest: bool,
}

/// The same stretch a year earlier.
fn a_year_earlier(p: Period) -> Option<Period> {
    let back = |ms: i64| {
        let date =
            chrono::DateTime::from_timestamp_millis(ms)?.date_naive().checked_sub_months(chrono::Months::new(12))?;
        midnight(date)
    };
    Some(Period { start: back(p.start)?, end: back(p.end)? })
}

/// The periods of `dated`, two dates said as the ends of one stretch — "from May to July",
/// "between 11 and 15 August" ("between August 11 and August 15 2023"), "从5月到7月" — made
/// that one stretch, so what lies between them is inside too. An opening end said without its
/// year lies before the closing one ("from October to February", asked in March, starts last
/// October).
fn ranges_joined(text: &str, dated: Vec<Dated>) -> Vec<Period> {
    let opens = |at: usize| {
        let before = text.get(..at).unwrap_or("").trim_end();
        let word = words_before(before).next().unwrap_or_default();
        OPENS_A_RANGE.contains(&word.as_str()) || before.ends_with('从')
    };
    let joins = |from: usize, to: usize| {
        let gap = text.get(from..to).unwrap_or("x").trim().to_lowercase();
        JOINS_A_RANGE.contains(&gap.as_str())
    };
    let mut out = Vec::with_capacity(dated.len());
    let mut i = 0;
    while i < dated.len() {
        let Dated { range, period, latest } = &dated[i];
        if let Some(Dated { range: next_range, period: next, .. }) = dated.get(i + 1)
            && opens(range.start)
            && joins(range.end, next_range.start)
        {
            let opening = if *latest && period.start >= next.start {
                a_year_earlier(*period).unwrap_or(*period)
            } else {
                *period
            };
            if opening.start < next.end.max(opening.end) {
                out.push(Period { start: opening.start, end: next.end.max(opening.end) });
                i += 2;
                continue;
            }
        }
        out.push(*period);
        i += 1;
    }
    out
}

/// Words naming a stretch next to a date ("the week before 16 November").
const NEAR_A_DATE: &[&str] = &["day", "days", "week", "weeks", "weekend", "month", "night", "morning", "evening"];

/// A date said as a bound rather than a period: "since May", "after 10 July 2023", "before
/// 2022", "until March", "2023年5月以来", "2022年以前".
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bound {
    /// From the date on, up to when the question is asked.
    From,
    /// Up to the date ("before": its start; "until", "by": its end).
    Before,
    Until,
}

impl Bound {
    fn around(before: &str, after: &str) -> Option<Bound> {
        let mut words = words_before(before);
        let word = words.next().unwrap_or_default();
        // "the week before 16 November", "the Sunday after …": a stretch near the date (how
        // dates are grounded), which the date's own period covers.
        let unit =
            words.next().is_some_and(|w| NEAR_A_DATE.contains(&w.as_str()) || vocab::WEEKDAYS.contains(&w.as_str()));
        match word.as_str() {
            _ if unit => {}
            "since" | "after" => return Some(Bound::From),
            "before" => return Some(Bound::Before),
            "until" | "till" | "by" => return Some(Bound::Until),
            _ => {}
        }
        let after = after.trim_start_matches(['日', '号']);
        if ["以来", "以后", "之后"].iter().any(|w| after.starts_with(w)) {
            Some(Bound::From)
        } else if ["以前", "之前"].iter().any(|w| after.starts_with(w)) {
            Some(Bound::Before)
        } else {
            None
        }
    }

    /// The stretch `period` bounds; `None` when it is empty ("since" a date after `now`).
    fn apply(self, period: Period, now: Option<i64>) -> Option<Period> {
        let bounded = match self {
            Bound::From => Period { start: period.start, end: now.map_or(i64::MAX, |n| n.saturating_add(1)) },
            Bound::Before => Period { start: i64::MIN, end: period.start },
            Bound::Until => Period { start: i64::MIN, end: period.end },
        };
        (bounded.start < bounded.end).then_some(bounded)
    }
}

static YEAR: LazyLock<Regex> = LazyLock::new(|| static_regex(r"(?-u:\b)(?:1[89]|2[01])\d\d(?-u:\b)"));

static ASKS_WHEN: LazyLock<Regex> = LazyLock::new(|| {
    static_regex(
        r"(?i)\bwhen\b|\bwhat (?:date|day|month|year|time)\b|\bhow long ago\b|什么时候|哪天|哪一天|几号|哪年|哪一年|几月",
    )
});

/// Whether `question` asks when something happened ("When did…", "what year…", "什么时候").
pub fn asks_when(question: &str) -> bool {
    ASKS_WHEN.is_match(question)
}

/// Words by which a question asks about the present or the latest state of things.
static ASKS_ABOUT_NOW: LazyLock<Regex> = LazyLock::new(|| {
    static_regex(
        r"(?i)\b(?:now|nowadays|currently|current|these days|lately|recently|recent|latest|anymore|still|at the moment|so far|last time)\b|现在|目前|最近|当前|如今|还在|仍然|至今|上次",
    )
});

/// Whether `question` asks about now or the latest state ("Where does she live now?", "What is
/// he currently reading?", "她最近在忙什么？"): what was said last then counts for more. Other
/// questions (most: "What does Melanie paint?") are as likely about any time.
pub fn asks_about_now(question: &str) -> bool {
    ASKS_ABOUT_NOW.is_match(question)
}

/// Whether `text` says a date in its words, beyond a leading `[Date: …]` header: an absolute
/// date, as a relative one reads once grounded ("yesterday (7 May 2023)").
pub fn states_a_date(text: &str) -> bool {
    let body = match text.strip_prefix("[Date:") {
        Some(rest) => rest.split_once(']').map_or("", |(_, body)| body),
        None => text,
    };
    NAMED.captures_iter(body).any(|c| named_dated(&c).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named_periods_abs(text: &str) -> Vec<Period> {
        named_periods(text, None)
    }

    #[test]
    fn when_questions_and_dated_statements() {
        for q in ["When did Calvin have a car incident?", "In what year did she move?", "她什么时候搬家的？"] {
            assert!(asks_when(q), "{q}");
        }
        assert!(!asks_when("What did Nate cook?") && !asks_when("Whenever is fine"));
        for q in
            ["Where does she live now?", "What is he currently reading?", "Does Jon still dance?", "她最近在忙什么？"]
        {
            assert!(asks_about_now(q), "{q}");
        }
        for q in ["What does Melanie paint?", "When did Calvin move?", "Is the snow falling?", "他喜欢什么？"] {
            assert!(!asks_about_now(q), "{q}");
        }
        assert!(states_a_date("[Date: 2023-06-20]\nCalvin: I had an accident last Friday (Friday, 16 June 2023)."));
        assert!(states_a_date("We moved in 2019."));
        assert!(!states_a_date("[Date: 2023-06-20]\nCalvin: I had an accident."), "the header is not a statement");
        assert!(!states_a_date("[Date: 2023-06-20 – 2023-06-21] no date here") && !states_a_date("[Date: unclosed"));
    }

    proptest::proptest! {
        #[test]
        fn any_text_names_only_proper_periods(text in "\\PC{0,80}", digits in "[0-9]{1,6}", now in proptest::option::of(proptest::num::i64::ANY)) {
            for t in [
                text.clone(),
                format!("in May {digits}"),
                format!("{digits}年{digits}月{digits}日 {text}"),
                format!("on {digits} March"),
                format!("before Sunday{text}"),
                format!("{text}周日 {digits}"),
                format!("from May to {text} July {digits}"),
            ] {
                for p in named_periods(&t, now) {
                    proptest::prop_assert!(p.start < p.end, "{t:?}: {p:?}");
                }
                let _ = (asks_when(&t), states_a_date(&t));
            }
        }
    }

    #[test]
    fn relative_periods_need_the_time_they_are_said_at() {
        let may_8 = ms(2023, 5, 8) + 13 * 3_600_000;
        let april = Period { start: ms(2023, 4, 1), end: ms(2023, 5, 1) };
        assert_eq!(named_periods("What did we decide last month?", Some(may_8)), [april]);
        assert_eq!(named_periods("What did we decide last month?", None), []);
        let yesterday = Period { start: ms(2023, 5, 7), end: ms(2023, 5, 8) };
        assert_eq!(named_periods("在2022年，还有昨天", Some(may_8))[1], yesterday);
    }

    fn ms(y: i32, m: u32, d: u32) -> i64 {
        midnight(NaiveDate::from_ymd_opt(y, m, d).unwrap()).unwrap()
    }

    #[test]
    fn days_months_and_years_are_recognised() {
        let week_from = |y, m, d| Period { start: ms(y, m, d), end: ms(y, m, d) + 8 * 86_400_000 };
        assert_eq!(named_periods_abs("What did Nate do on 25 May, 2022?"), [week_from(2022, 5, 25)]);
        assert_eq!(named_periods_abs("accepted on May 23rd, 2023"), [week_from(2023, 5, 23)]);
        assert_eq!(named_periods_abs("the 3rd of March 2021"), [week_from(2021, 3, 3)]);
        assert_eq!(named_periods_abs("[Date: 2023-05-08]"), [week_from(2023, 5, 8)]);
        assert_eq!(named_periods_abs("2023年5月8日开会"), [week_from(2023, 5, 8)]);
        let october = Period { start: ms(2023, 10, 1), end: ms(2023, 11, 1) };
        assert_eq!(named_periods_abs("Which hobby did Dave pick up in October 2023?"), [october]);
        assert_eq!(named_periods_abs("in Oct. 2023"), [october]);
        assert_eq!(named_periods_abs("2023年10月"), [october]);
        assert_eq!(named_periods_abs("2023-10"), [october]);
        let december = Period { start: ms(2023, 12, 1), end: ms(2024, 1, 1) };
        assert_eq!(named_periods_abs("December 2023"), [december]);
        let y2021 = Period { start: ms(2021, 1, 1), end: ms(2022, 1, 1) };
        assert_eq!(named_periods_abs("Which country did James visit in 2021?"), [y2021]);
        assert_eq!(named_periods_abs("2021年去了哪里"), [y2021]);
        assert_eq!(
            named_periods_abs("between May 2022 and 2023"),
            [Period { start: ms(2022, 5, 1), end: ms(2024, 1, 1) }]
        );
        assert_eq!(
            named_periods_abs("Where was John between August 11 and August 15 2023?"),
            [Period { start: ms(2023, 8, 11), end: ms(2023, 8, 23) }],
            "a day without its year takes the year said next; the two ends make one stretch"
        );
        let may_to_july = Period { start: ms(2023, 5, 1), end: ms(2023, 8, 1) };
        assert_eq!(named_periods_abs("from May 2023 to July 2023"), [may_to_july]);
        assert_eq!(named_periods_abs("from May to July 2023"), [may_to_july]);
        assert_eq!(named_periods("What did we do from May to July?", Some(ms(2023, 9, 1))), [may_to_july]);
        assert_eq!(named_periods("between May and July", Some(ms(2023, 9, 1))), [may_to_july]);
        assert_eq!(named_periods("I talked to May", Some(ms(2023, 9, 1))), [], "a name");
        assert_eq!(
            named_periods("from October to February", Some(ms(2024, 3, 10))),
            [Period { start: ms(2023, 10, 1), end: ms(2024, 3, 1) }],
            "a range over the new year, asked after it"
        );
        assert_eq!(
            named_periods("from May to July", Some(ms(2023, 6, 10))),
            [Period { start: ms(2022, 5, 1), end: ms(2022, 8, 1) }],
            "asked in June: July is last year's, and so the May before it"
        );
        assert_eq!(named_periods_abs("从2023年5月到2023年7月"), [may_to_july]);
        // A month or day without its year, in Chinese: the year said elsewhere, else the latest.
        assert_eq!(named_periods_abs("从5月到7月，2023年"), [may_to_july]);
        assert_eq!(named_periods("我5月8日去了哪里？", Some(ms(2023, 9, 1))), [week_from(2023, 5, 8)]);
        assert_eq!(named_periods("10月", Some(ms(2023, 9, 1)))[0].start, ms(2022, 10, 1));
        assert_eq!(named_periods("3个月前", None), [], "a span, not a month");
        assert_eq!(named_periods("13月", Some(ms(2023, 9, 1))), []);
        // Digits right after Chinese characters start a date (both are word characters to Unicode).
        assert_eq!(named_periods_abs("我在2023年5月8日开会"), [week_from(2023, 5, 8)]);
        assert_eq!(named_periods_abs("我们在2023-05-08见过"), [week_from(2023, 5, 8)]);
        assert_eq!(named_periods_abs("from May 2023 until July 2023"), [may_to_july]);
        assert_eq!(named_periods_abs("in May 2023 and in July 2023").len(), 2, "two months, not a range");
        assert_eq!(
            named_periods_abs("from July 2023 to May 2023").len(),
            1,
            "backwards: its first end to the later end"
        );
        assert_eq!(named_periods("on the 3rd of March", Some(ms(2024, 6, 1))), [week_from(2024, 3, 3)]);
        assert_eq!(named_periods_abs("on March 3rd"), [], "no year anywhere");
        let jan_2023 = Some(ms(2023, 1, 20));
        let may_2022 = Period { start: ms(2022, 5, 1), end: ms(2022, 6, 1) };
        assert_eq!(named_periods("Which spot did Joanna visit in May?", jan_2023), [may_2022], "the latest May");
        assert_eq!(named_periods("What happened in January?", jan_2023)[0].start, ms(2023, 1, 1));
        assert_eq!(named_periods("in May 2022", jan_2023), [may_2022]);
        assert_eq!(named_periods("I may go", jan_2023), [], "a verb");
        assert_eq!(named_periods("in May 23, 2023", None), [week_from(2023, 5, 23)], "the longer form wins");
    }

    #[test]
    fn a_date_said_as_a_bound_names_the_stretch_it_bounds() {
        let asked = ms(2023, 9, 1);
        let since = |start| Period { start, end: asked + 1 };
        assert_eq!(named_periods("What has Dave done since May?", Some(asked)), [since(ms(2023, 5, 1))]);
        assert_eq!(named_periods("after 10 July 2023", Some(asked)), [since(ms(2023, 7, 10))]);
        assert_eq!(named_periods("2023年5月以来", Some(asked)), [since(ms(2023, 5, 1))]);
        assert_eq!(named_periods("2023年5月8日之后", Some(asked)), [since(ms(2023, 5, 8))]);
        assert_eq!(named_periods_abs("since 2021")[0], Period { start: ms(2021, 1, 1), end: i64::MAX });
        assert_eq!(named_periods("since October", Some(ms(2023, 10, 1))), [since_day(ms(2023, 10, 1))]);
        assert_eq!(named_periods("since 2030", Some(asked)), [], "nothing after now");
        let before = |end| Period { start: i64::MIN, end };
        assert_eq!(named_periods("Where did Jon live before 2022?", Some(asked)), [before(ms(2022, 1, 1))]);
        assert_eq!(named_periods("2022年以前", Some(asked)), [before(ms(2022, 1, 1))]);
        assert_eq!(named_periods("until March 2023", Some(asked)), [before(ms(2023, 4, 1))]);
        assert_eq!(named_periods("by March 2023", Some(asked)), [before(ms(2023, 4, 1))]);
        // Not bounds: the word before is not one, or the date is a period of its own, or the
        // words name a stretch next to it (as grounded dates say).
        let week_from = Period { start: ms(2023, 11, 16), end: ms(2023, 11, 24) };
        assert_eq!(named_periods("Where was Tim in the week before 16 November 2023?", Some(asked)), [week_from]);
        assert_eq!(named_periods("on the Sunday after 16 November 2023", Some(asked)), [week_from]);
        assert_eq!(
            named_periods("from May 2023", Some(asked)),
            [Period { start: ms(2023, 5, 1), end: ms(2023, 6, 1) }]
        );
        assert_eq!(
            named_periods("between May 2022 and June 2022", Some(asked)),
            [Period { start: ms(2022, 5, 1), end: ms(2022, 7, 1) }]
        );
    }

    #[test]
    fn a_weekday_alone_is_the_latest_one_up_to_when_it_is_asked() {
        // Wednesday 10 May 2023.
        let asked = Some(ms(2023, 5, 10) + 15 * 3_600_000);
        let day = |d| Period { start: ms(2023, 5, d), end: ms(2023, 5, d) + 8 * 86_400_000 };
        assert_eq!(named_periods("What did we decide on Tuesday?", asked), [day(9)]);
        assert_eq!(named_periods("What did we do on Wednesday?", asked), [day(10)], "today is the latest");
        assert_eq!(named_periods("on Friday", asked), [day(5)]);
        assert_eq!(named_periods("我们周二说了什么？", asked), [day(9)]);
        assert_eq!(named_periods("星期天去了哪里", asked), [day(7)]);
        assert_eq!(
            named_periods("What did we do before Tuesday?", asked),
            [Period { start: i64::MIN, end: ms(2023, 5, 9) }]
        );
        assert_eq!(named_periods("on Tuesday", None), [], "a weekday needs the time it is asked at");
        // Part of another expression: relative ("last Friday" is its own, strictly before), a
        // habit, a grounded date's weekday, a weekday next to a date.
        assert_eq!(
            named_periods("What did we do last Friday?", asked),
            [Period { start: ms(2023, 5, 5), end: ms(2023, 5, 6) }]
        );
        assert_eq!(named_periods("I swim every Sunday", asked), []);
        assert_eq!(named_periods("每周一开会", asked), []);
        assert_eq!(named_periods("一周一次", asked), []);
        assert_eq!(
            named_periods_abs("on Friday, 16 June 2023"),
            [Period { start: ms(2023, 6, 16), end: ms(2023, 6, 24) }]
        );
        assert_eq!(named_periods("the Sunday before 16 November 2023", asked).len(), 1);
        assert!(!states_a_date("[Date: 2023-05-10]\nSee you on Tuesday."), "a weekday alone does not date a record");
    }

    fn since_day(start: i64) -> Period {
        Period { start, end: start + 1 }
    }

    #[test]
    fn what_is_not_a_date_names_nothing() {
        for text in ["I may go", "31 February 2023", "room 12345", "call 555-1234", "version 3.2", "", "May I?"] {
            assert!(named_periods_abs(text).is_empty(), "{text}");
        }
        let p = named_periods_abs("in March 2023")[0];
        assert!(p.contains(ms(2023, 3, 31)) && !p.contains(ms(2023, 4, 1)) && p.contains(p.start));
        assert_eq!(
            Period::span(&named_periods_abs("2021 and 2023")).map(|p| (p.start, p.end)),
            Some((ms(2021, 1, 1), ms(2024, 1, 1)))
        );
        assert_eq!(Period::span(&[]), None);
    }
}
