//! Time as MemCC stores and shows it: timestamps are milliseconds since the Unix epoch (UTC),
//! valid from year 1 to year 9999; formatting never panics; and relative dates in what people
//! say ("yesterday", "last Friday", "上周") are grounded against when they said it.

use crate::text::static_regex;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Utc, Weekday};
use regex::{Captures, Regex};

/// 0001-01-01T00:00:00Z.
pub const MIN_MS: i64 = -62_135_596_800_000;
/// 9999-12-31T23:59:59.999Z.
pub const MAX_MS: i64 = 253_402_300_799_999;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("timestamp {0} is outside years 1–9999 (expected milliseconds since the Unix epoch)")]
pub struct TimestampError(pub i64);

/// Now, in milliseconds since the Unix epoch — the one clock every store and search reads.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `ms` if it is a timestamp MemCC can store and show, else a clear error.
pub fn validate(ms: i64) -> Result<i64, TimestampError> {
    if (MIN_MS..=MAX_MS).contains(&ms) { Ok(ms) } else { Err(TimestampError(ms)) }
}

fn datetime(ms: i64) -> Option<DateTime<Utc>> {
    validate(ms).ok().and_then(DateTime::from_timestamp_millis)
}

/// `YYYY-MM-DD`, or `None` for an invalid timestamp.
pub fn day(ms: i64) -> Option<String> {
    datetime(ms).map(|d| d.format("%Y-%m-%d").to_string())
}

/// `YYYY-MM-DD HH:MM`, or the raw number for an invalid timestamp.
pub fn minute(ms: i64) -> String {
    datetime(ms).map_or_else(|| ms.to_string(), |d| d.format("%Y-%m-%d %H:%M").to_string())
}

/// The `[Date: …]` header of a record spanning `from`–`to`: one day, or a range of days.
pub fn date_header(from: Option<i64>, to: Option<i64>) -> String {
    let (a, b) = (from.and_then(day), to.and_then(day));
    match (a, b) {
        (Some(a), Some(b)) if a != b => format!("[Date: {a} – {b}]"),
        (Some(a), _) | (None, Some(a)) => format!("[Date: {a}]"),
        (None, None) => "[Date: unknown]".into(),
    }
}

fn spoken(d: NaiveDate) -> String {
    d.format("%-d %B %Y").to_string()
}

fn spoken_month(d: NaiveDate) -> String {
    d.format("%B %Y").to_string()
}

fn chinese(d: NaiveDate) -> String {
    format!("{}年{}月{}日", d.year(), d.month(), d.day())
}

pub fn weekday(name: &str) -> Option<Weekday> {
    let n = name.to_lowercase();
    Some(match n.get(..3)? {
        "mon" => Weekday::Mon,
        "tue" => Weekday::Tue,
        "wed" => Weekday::Wed,
        "thu" => Weekday::Thu,
        "fri" => Weekday::Fri,
        "sat" => Weekday::Sat,
        "sun" => Weekday::Sun,
        _ => return None,
    })
}

fn number(word: &str) -> Option<u32> {
    const WORDS: [&str; 12] =
        ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    let w = word.to_lowercase();
    if w == "a" || w == "an" {
        return Some(1);
    }
    w.parse::<u32>()
        .ok()
        .filter(|&n| (1..=100).contains(&n))
        .or_else(|| WORDS.iter().position(|x| *x == w).map(|i| i as u32 + 1))
}

const WEEKDAYS: &str = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?";

static ENGLISH: LazyLock<Regex> = LazyLock::new(|| {
    static_regex(&format!(
        r"(?ix)\b(?:
            (?P<dbyest>the\ day\ before\ yesterday)
          | (?P<yest>yesterday|last\ night)
          | (?P<tmrw>tomorrow)
          | (?P<lastwd>last\ (?P<wd1>{WEEKDAYS}))
          | (?P<nextwd>next\ (?P<wd2>{WEEKDAYS}))
          | (?P<lastwkend>last\ weekend)
          | (?P<lastwk>last\ week)
          | (?P<nextwk>next\ week)
          | (?P<lastmo>last\ month)
          | (?P<nextmo>next\ month)
          | (?P<lastyr>last\ year)
          | (?P<nextyr>next\ year)
          | (?P<ago>(?P<n>\d{{1,3}}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)
               \ (?P<unit>day|week|month|year)s?\ ago)
        )\b"
    ))
});

static CHINESE: LazyLock<Regex> = LazyLock::new(|| {
    static_regex(
        r"(?P<qian>前天)|(?P<zuo>昨天|昨晚)|(?P<ming>明天)|(?P<lastwk>上周|上星期|上个星期)|(?P<nextwk>下周|下星期|下个星期)|(?P<lastmo>上个月)|(?P<nextmo>下个月)|(?P<lastyr>去年)|(?P<nextyr>明年)|(?P<agon>\d{1,3})(?P<agou>天|周|个月|年)前",
    )
});

/// The absolute date an English relative expression stands for, said on `today`.
fn english_date(c: &Captures<'_>, today: NaiveDate) -> Option<String> {
    let back = |days: u64| today.checked_sub_days(Days::new(days));
    let ahead = |days: u64| today.checked_add_days(Days::new(days));
    if c.name("dbyest").is_some() {
        return back(2).map(spoken);
    }
    if c.name("yest").is_some() {
        return back(1).map(spoken);
    }
    if c.name("tmrw").is_some() {
        return ahead(1).map(spoken);
    }
    if let Some(wd) = c.name("wd1").and_then(|m| weekday(m.as_str())) {
        let d = weekday_before(today, wd)?;
        return Some(format!("{}, {}", d.format("%A"), spoken(d)));
    }
    if let Some(wd) = c.name("wd2").and_then(|m| weekday(m.as_str())) {
        let d = weekday_after(today, wd)?;
        return Some(format!("{}, {}", d.format("%A"), spoken(d)));
    }
    if c.name("lastwkend").is_some() {
        return Some(format!("the weekend before {}", spoken(today)));
    }
    if c.name("lastwk").is_some() {
        return Some(format!("the week before {}", spoken(today)));
    }
    if c.name("nextwk").is_some() {
        return Some(format!("the week after {}", spoken(today)));
    }
    if c.name("lastmo").is_some() {
        return today.checked_sub_months(Months::new(1)).map(spoken_month);
    }
    if c.name("nextmo").is_some() {
        return today.checked_add_months(Months::new(1)).map(spoken_month);
    }
    if c.name("lastyr").is_some() {
        return Some((today.year() - 1).to_string());
    }
    if c.name("nextyr").is_some() {
        return Some((today.year() + 1).to_string());
    }
    let n = number(c.name("n")?.as_str())?;
    match c.name("unit")?.as_str().to_lowercase().as_str() {
        "day" => back(u64::from(n)).map(spoken),
        "week" => back(7 * u64::from(n)).map(|d| format!("around {}", spoken(d))),
        "month" => today.checked_sub_months(Months::new(n)).map(|d| format!("around {}", spoken_month(d))),
        "year" => Some(format!("around {}", today.year() - n as i32)),
        _ => None,
    }
}

/// The absolute date a Chinese relative expression stands for, said on `today`.
fn chinese_date(c: &Captures<'_>, today: NaiveDate) -> Option<String> {
    let back = |days: u64| today.checked_sub_days(Days::new(days));
    if c.name("qian").is_some() {
        return back(2).map(chinese);
    }
    if c.name("zuo").is_some() {
        return back(1).map(chinese);
    }
    if c.name("ming").is_some() {
        return today.checked_add_days(Days::new(1)).map(chinese);
    }
    if c.name("lastwk").is_some() {
        return Some(format!("{}之前的一周", chinese(today)));
    }
    if c.name("nextwk").is_some() {
        return Some(format!("{}之后的一周", chinese(today)));
    }
    let month = |d: NaiveDate| format!("{}年{}月", d.year(), d.month());
    if c.name("lastmo").is_some() {
        return today.checked_sub_months(Months::new(1)).map(month);
    }
    if c.name("nextmo").is_some() {
        return today.checked_add_months(Months::new(1)).map(month);
    }
    if c.name("lastyr").is_some() {
        return Some(format!("{}年", today.year() - 1));
    }
    if c.name("nextyr").is_some() {
        return Some(format!("{}年", today.year() + 1));
    }
    let n: u32 = c.name("agon")?.as_str().parse().ok()?;
    match c.name("agou")?.as_str() {
        "天" => back(u64::from(n)).map(chinese),
        "周" => back(7 * u64::from(n)).map(|d| format!("约{}", chinese(d))),
        "个月" => today.checked_sub_months(Months::new(n)).map(|d| format!("约{}", month(d))),
        "年" => Some(format!("约{}年", today.year() - n as i32)),
        _ => None,
    }
}

/// The latest `wd` on or before `today` ("on Friday", asked of the past).
pub fn weekday_at_or_before(today: NaiveDate, wd: Weekday) -> Option<NaiveDate> {
    let diff = (today.weekday().num_days_from_monday() + 7 - wd.num_days_from_monday()) % 7;
    today.checked_sub_days(Days::new(u64::from(diff)))
}

/// The latest `wd` strictly before `today` ("last Friday").
fn weekday_before(today: NaiveDate, wd: Weekday) -> Option<NaiveDate> {
    weekday_at_or_before(today.checked_sub_days(Days::new(1))?, wd)
}

/// The first `wd` strictly after `today` ("next Friday").
fn weekday_after(today: NaiveDate, wd: Weekday) -> Option<NaiveDate> {
    let diff = (wd.num_days_from_monday() + 7 - today.weekday().num_days_from_monday()) % 7;
    today.checked_add_days(Days::new(u64::from(if diff == 0 { 7 } else { diff })))
}

/// Days as a half-open range: the first, and the day after the last.
pub type DayRange = (NaiveDate, NaiveDate);

/// `count` days from `first`.
pub fn days(first: NaiveDate, count: u64) -> Option<DayRange> {
    Some((first, first.checked_add_days(Days::new(count))?))
}

fn months(first_of_month: NaiveDate, count: u32) -> Option<DayRange> {
    Some((first_of_month, first_of_month.checked_add_months(Months::new(count))?))
}

/// The calendar month `d` is in.
pub fn month_of(d: NaiveDate) -> Option<DayRange> {
    months(d.with_day(1)?, 1)
}

/// The calendar year `year`.
pub fn year_of(year: i32) -> Option<DayRange> {
    months(NaiveDate::from_ymd_opt(year, 1, 1)?, 12)
}

/// The days a relative expression covers, said on `today` — the same expressions
/// [`ground_relative_dates`] writes out, as ranges: "last week" is last calendar week and this
/// one so far, "two weeks ago" the week around that day.
fn relative_range(c: &Captures<'_>, today: NaiveDate) -> Option<DayRange> {
    let back = |n: u64| today.checked_sub_days(Days::new(n));
    let ahead = |n: u64| today.checked_add_days(Days::new(n));
    let named = |name: &str| c.name(name).is_some();
    let since_monday = u64::from(today.weekday().num_days_from_monday());
    if named("dbyest") || named("qian") {
        return days(back(2)?, 1);
    }
    if named("yest") || named("zuo") {
        return days(back(1)?, 1);
    }
    if named("tmrw") || named("ming") {
        return days(ahead(1)?, 1);
    }
    if let Some(wd) = c.name("wd1").and_then(|m| weekday(m.as_str())) {
        return days(weekday_before(today, wd)?, 1);
    }
    if let Some(wd) = c.name("wd2").and_then(|m| weekday(m.as_str())) {
        return days(weekday_after(today, wd)?, 1);
    }
    if named("lastwkend") || named("lastwk") {
        return Some((back(since_monday + 7)?, today));
    }
    if named("nextwk") {
        return days(today, 14);
    }
    if named("lastmo") {
        return month_of(today.checked_sub_months(Months::new(1))?);
    }
    if named("nextmo") {
        return month_of(today.checked_add_months(Months::new(1))?);
    }
    if named("lastyr") {
        return year_of(today.year() - 1);
    }
    if named("nextyr") {
        return year_of(today.year() + 1);
    }
    let (n, unit) = match (c.name("n"), c.name("unit"), c.name("agon"), c.name("agou")) {
        (Some(n), Some(u), _, _) => (number(n.as_str())?, u.as_str().to_lowercase()),
        (_, _, Some(n), Some(u)) => (n.as_str().parse().ok()?, u.as_str().to_string()),
        _ => return None,
    };
    match unit.as_str() {
        "day" | "天" => days(back(u64::from(n))?, 1),
        "week" | "周" => days(back(7 * u64::from(n) + 3)?, 7),
        "month" | "个月" => month_of(today.checked_sub_months(Months::new(n))?),
        "year" | "年" => year_of(today.year() - n as i32),
        _ => None,
    }
}

/// The days each relative date expression in `text` covers ("yesterday", "last month", "上周"),
/// said at `ms`, in order.
pub fn relative_ranges(text: &str, ms: i64) -> Vec<DayRange> {
    let Some(today) = datetime(ms).map(|d| d.date_naive()) else { return Vec::new() };
    ENGLISH.captures_iter(text).chain(CHINESE.captures_iter(text)).filter_map(|c| relative_range(&c, today)).collect()
}

/// `text` with each relative date expression followed by the date it means, as said at `ms`:
/// "I went yesterday" → "I went yesterday (7 May 2023)", "我昨天去了" → "我昨天（2023年5月7日）去了".
/// Unchanged without a valid timestamp. Grounded text is never grounded twice.
pub fn ground_relative_dates(text: &str, ms: Option<i64>) -> String {
    let Some(today) = ms.and_then(datetime).map(|d| d.date_naive()) else { return text.to_string() };
    let english = ENGLISH.replace_all(text, |c: &Captures<'_>| {
        let said = &c[0];
        let end = c.get(0).map_or(0, |m| m.end());
        if text[end..].starts_with(" (") {
            return said.to_string();
        }
        match english_date(c, today) {
            Some(date) => format!("{said} ({date})"),
            None => said.to_string(),
        }
    });
    let english = english.into_owned();
    CHINESE
        .replace_all(&english, |c: &Captures<'_>| {
            let said = &c[0];
            let end = c.get(0).map_or(0, |m| m.end());
            if english[end..].starts_with('（') {
                return said.to_string();
            }
            match chinese_date(c, today) {
                Some(date) => format!("{said}（{date}）"),
                None => said.to_string(),
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Monday 8 May 2023, 13:56 UTC.
    const MAY_8: i64 = 1_683_554_160_000;

    #[test]
    fn formatting_never_panics() {
        for ms in [i64::MIN, MIN_MS - 1, -1, 0, MAY_8, MAX_MS, MAX_MS + 1, 1_700_000_000_000_000_000, i64::MAX] {
            let _ =
                (day(ms), minute(ms), date_header(Some(ms), Some(ms)), ground_relative_dates("yesterday", Some(ms)));
        }
        assert_eq!(day(MAY_8).as_deref(), Some("2023-05-08"));
        assert_eq!(day(i64::MAX), None);
        assert_eq!(minute(MAY_8), "2023-05-08 13:56");
        assert!(validate(1_700_000_000_000_000_000).unwrap_err().to_string().contains("milliseconds"));
        assert_eq!(date_header(Some(MAY_8), Some(MAY_8 + 86_400_000)), "[Date: 2023-05-08 – 2023-05-09]");
        assert_eq!(date_header(Some(i64::MAX), None), "[Date: unknown]");
    }

    #[test]
    fn english_relative_dates_are_grounded() {
        let g = |t: &str| ground_relative_dates(t, Some(MAY_8));
        assert_eq!(g("I went to a support group yesterday."), "I went to a support group yesterday (7 May 2023).");
        assert_eq!(g("Last Friday we hiked"), "Last Friday (Friday, 5 May 2023) we hiked");
        assert_eq!(g("last Monday"), "last Monday (Monday, 1 May 2023)", "strictly before today");
        assert_eq!(g("joined last Tues."), "joined last Tues (Tuesday, 2 May 2023).");
        assert_eq!(g("I painted it last year"), "I painted it last year (2022)");
        assert_eq!(g("last week"), "last week (the week before 8 May 2023)");
        assert_eq!(g("last month"), "last month (April 2023)");
        assert_eq!(g("two days ago"), "two days ago (6 May 2023)");
        assert_eq!(g("4 years ago"), "4 years ago (around 2019)");
        assert_eq!(g("the day before yesterday"), "the day before yesterday (6 May 2023)");
        assert_eq!(g("see you next Sunday"), "see you next Sunday (Sunday, 14 May 2023)");
        assert_eq!(g("nothing relative here"), "nothing relative here");
        let once = g("yesterday");
        assert_eq!(ground_relative_dates(&once, Some(MAY_8)), once, "never grounded twice");
        assert_eq!(ground_relative_dates("yesterday", None), "yesterday");
    }

    #[test]
    fn relative_dates_cover_days() {
        let d = |m, day| NaiveDate::from_ymd_opt(2023, m, day).unwrap();
        let r = |t: &str| relative_ranges(t, MAY_8);
        assert_eq!(r("what did I do yesterday?"), [(d(5, 7), d(5, 8))]);
        assert_eq!(r("last Friday"), [(d(5, 5), d(5, 6))]);
        assert_eq!(r("last week"), [(d(5, 1), d(5, 8))], "last calendar week (8 May is a Monday) and this one so far");
        assert_eq!(r("last month"), [(d(4, 1), d(5, 1))]);
        assert_eq!(r("two weeks ago"), [(d(4, 21), d(4, 28))]);
        assert_eq!(r("last year"), [(NaiveDate::from_ymd_opt(2022, 1, 1).unwrap(), d(1, 1))]);
        assert_eq!(r("上个月我们聊了什么"), [(d(4, 1), d(5, 1))]);
        assert_eq!(r("3天前"), [(d(5, 5), d(5, 6))]);
        assert!(r("nothing relative").is_empty() && relative_ranges("yesterday", i64::MAX).is_empty());
    }

    #[test]
    fn chinese_relative_dates_are_grounded() {
        let g = |t: &str| ground_relative_dates(t, Some(MAY_8));
        assert_eq!(g("我昨天去了"), "我昨天（2023年5月7日）去了");
        assert_eq!(g("上周我们开会"), "上周（2023年5月8日之前的一周）我们开会");
        assert_eq!(g("去年搬家"), "去年（2022年）搬家");
        assert_eq!(g("3天前"), "3天前（2023年5月5日）");
        assert_eq!(g(&g("昨天")), g("昨天"));
    }
}
