//! HTTP-dates (RFC 9110 §5.6.7), read and written without a clock: a client's `Retry-After`
//! may carry one, and the expired-key guard's `Repeatability-First-Sent` ([`crate::first_sent`])
//! is one. Here once, so the SDK that writes the header and the server that reads it agree.
//!
//! Why not the `httpdate` crate: it is the reference the tests below compare with, but in the
//! browser package it cost 4.9 KB gzip (its conversions go through `SystemTime` and panic
//! messages, which pull in `core::fmt`). This reads the same three forms with the same rules
//! in integer arithmetic, writes the IMF-fixdate without `format!`, and never panics.

/// An HTTP-date as milliseconds since the Unix epoch, or `None` if `value` is not one.
///
/// Accepts what recipients must (RFC 9110 §5.6.7): the IMF-fixdate
/// `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`
/// (two-digit years below 70 are 20xx, as `httpdate` reads them) and asctime
/// `Sun Nov  6 08:49:37 1994` forms. The day name must be the date's; years 1970 to 9999; no
/// leap second.
pub fn parse_ms(value: &str) -> Option<u64> {
    let b = value.as_bytes();
    let date = imf_fixdate(b)
        .or_else(|| rfc850(b))
        .or_else(|| asctime(b))?;
    date.millis()
}

/// The latest instant an HTTP-date can name: 9999-12-31 23:59:59 (ms since the epoch).
pub const MAX_MS: u64 = 253_402_300_799_000;

/// `ms` (since the Unix epoch) as an IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`: the form
/// senders must use. The milliseconds are dropped (an HTTP-date has seconds); an instant past
/// [`MAX_MS`] is written as `MAX_MS`.
pub fn format_ms(ms: u64) -> String {
    let secs = ms.min(MAX_MS) / 1_000;
    let days = secs / 86_400;
    let (year, month, day) = civil_from_days(days);
    let of_day = secs % 86_400;
    let mut out = String::with_capacity(29);
    // 1970-01-01 was a Thursday (3 when Monday is 0).
    push_ascii(&mut out, DAYS[((days + 3) % 7) as usize]);
    out.push_str(", ");
    push_digits(&mut out, day, 2);
    out.push(' ');
    push_ascii(&mut out, MONTHS[(month - 1) as usize]);
    out.push(' ');
    push_digits(&mut out, year, 4);
    out.push(' ');
    push_digits(&mut out, of_day / 3_600, 2);
    out.push(':');
    push_digits(&mut out, of_day / 60 % 60, 2);
    out.push(':');
    push_digits(&mut out, of_day % 60, 2);
    out.push_str(" GMT");
    out
}

fn push_ascii(out: &mut String, name: &[u8]) {
    out.extend(name.iter().map(|&b| char::from(b)));
}

/// `n` in decimal, zero-padded to `width` digits (`n` has at most `width` digits).
fn push_digits(out: &mut String, n: u64, width: u32) {
    for place in (0..width).rev() {
        let digit = (n / 10u64.pow(place) % 10) as u8;
        out.push(char::from(b'0' + digit));
    }
}

/// The (year, month 1..=12, day 1..=31) of the day `days` after 1970-01-01: the inverse of
/// [`days_since_epoch`], walking whole years and then months (at most 8,030 years, so a
/// few thousand steps for the dates a request carries; the tests check it against `httpdate`).
fn civil_from_days(mut days: u64) -> (u64, u64, u64) {
    let mut year = 1970;
    loop {
        let in_year = if is_leap(year) { 366 } else { 365 };
        if days < in_year {
            break;
        }
        days -= in_year;
        year += 1;
    }
    let mut month = 1;
    while days >= days_in_month(year, month) {
        days -= days_in_month(year, month);
        month += 1;
    }
    (year, month, days + 1)
}

const DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
const LONG_DAYS: [&[u8]; 7] = [
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
    b"Sunday",
];
const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The fields of a date as written, before any check.
struct Fields {
    /// 0 = Monday ... 6 = Sunday.
    weekday: u64,
    year: u64,
    /// 1 ..= 12.
    month: u64,
    day: u64,
    hour: u64,
    minute: u64,
    second: u64,
}

impl Fields {
    /// Milliseconds since the epoch, if the fields name a real instant whose weekday is the one
    /// written.
    fn millis(&self) -> Option<u64> {
        let valid = (1970..=9999).contains(&self.year)
            && (1..=12).contains(&self.month)
            && (1..=days_in_month(self.year, self.month)).contains(&self.day)
            && self.hour < 24
            && self.minute < 60
            && self.second < 60;
        if !valid {
            return None;
        }
        let days = days_since_epoch(self.year, self.month, self.day);
        // 1970-01-01 was a Thursday (3 when Monday is 0).
        if (days + 3) % 7 != self.weekday {
            return None;
        }
        let seconds = days * 86_400 + self.hour * 3_600 + self.minute * 60 + self.second;
        Some(seconds * 1_000)
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(b: &[u8]) -> Option<Fields> {
    if b.len() != 29 || b.get(3..5)? != b", " || b.get(25..)? != b" GMT" {
        return None;
    }
    let spaced = [7, 11, 16].iter().all(|&i| b.get(i) == Some(&b' '));
    if !spaced {
        return None;
    }
    Some(Fields {
        weekday: index_of(&DAYS, b.get(0..3)?)?,
        day: number(b, 5..7)?,
        month: index_of(&MONTHS, b.get(8..11)?)? + 1,
        year: number(b, 12..16)?,
        ..time_of_day(b, 17)?
    })
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn rfc850(b: &[u8]) -> Option<Fields> {
    let comma = b.iter().position(|&c| c == b',')?;
    let weekday = index_of(&LONG_DAYS, b.get(..comma)?)?;
    let r = b.get(comma..)?;
    // ", 06-Nov-94 08:49:37 GMT"
    if r.len() != 24 || r.get(..2)? != b", " || r.get(20..)? != b" GMT" {
        return None;
    }
    let marks = [(4, b'-'), (8, b'-'), (11, b' ')];
    if !marks.iter().all(|&(i, c)| r.get(i) == Some(&c)) {
        return None;
    }
    let yy = number(r, 9..11)?;
    Some(Fields {
        weekday,
        day: number(r, 2..4)?,
        month: index_of(&MONTHS, r.get(5..8)?)? + 1,
        year: if yy < 70 { 2000 + yy } else { 1900 + yy },
        ..time_of_day(r, 12)?
    })
}

/// `Sun Nov  6 08:49:37 1994`
fn asctime(b: &[u8]) -> Option<Fields> {
    if b.len() != 24 {
        return None;
    }
    let spaced = [3, 7, 10, 19].iter().all(|&i| b.get(i) == Some(&b' '));
    if !spaced {
        return None;
    }
    // The day is two digits, or a space and one digit.
    let day = match b.get(8)? {
        b' ' => number(b, 9..10)?,
        _ => number(b, 8..10)?,
    };
    Some(Fields {
        weekday: index_of(&DAYS, b.get(0..3)?)?,
        day,
        month: index_of(&MONTHS, b.get(4..7)?)? + 1,
        year: number(b, 20..24)?,
        ..time_of_day(b, 11)?
    })
}

/// `08:49:37` at `at` (the date fields are filled in by the caller).
fn time_of_day(b: &[u8], at: usize) -> Option<Fields> {
    if b.get(at + 2) != Some(&b':') || b.get(at + 5) != Some(&b':') {
        return None;
    }
    Some(Fields {
        weekday: 0,
        year: 0,
        month: 0,
        day: 0,
        hour: number(b, at..at + 2)?,
        minute: number(b, at + 3..at + 5)?,
        second: number(b, at + 6..at + 8)?,
    })
}

/// The decimal number in `b[range]`: ASCII digits only.
fn number(b: &[u8], range: core::ops::Range<usize>) -> Option<u64> {
    let digits = b.get(range)?;
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

/// The position of `name` in `names`.
fn index_of(names: &[&[u8]], name: &[u8]) -> Option<u64> {
    names.iter().position(|n| *n == name).map(|i| i as u64)
}

fn is_leap(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date (a valid one, year ≥ 1970).
fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    let years = year - 1970;
    // Leap days in the years before `year`, counted from 1970.
    let leap_days = (year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400 - 477;
    let before_month: u64 = (1..month).map(|m| days_in_month(year, m)).sum();
    years * 365 + leap_days + before_month + day - 1
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    /// `httpdate`'s reading, in ms since the epoch: the reference (a dev-dependency only).
    fn reference(value: &str) -> Option<u64> {
        let at = httpdate::parse_http_date(value).ok()?;
        u64::try_from(at.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()
    }

    /// The three forms of the instant `secs` after the epoch, as a server writes them.
    fn forms(secs: u64) -> [String; 3] {
        let imf = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs));
        // "Sun, 06 Nov 1994 08:49:37 GMT" → the obsolete forms of the same instant.
        let (day, month, year, time) = (&imf[5..7], &imf[8..11], &imf[12..16], &imf[17..25]);
        let weekday = LONG_DAYS[DAYS
            .iter()
            .position(|d| *d == &imf.as_bytes()[..3])
            .unwrap()];
        let long = std::str::from_utf8(weekday).unwrap();
        let rfc850 = format!("{long}, {day}-{month}-{} {time} GMT", &year[2..]);
        let spaced_day = format!("{:>2}", day.trim_start_matches('0'));
        let asctime = format!("{} {month} {spaced_day} {time} {year}", &imf[..3]);
        [imf, rfc850, asctime]
    }

    #[test]
    fn known_dates() {
        for (text, secs) in [
            ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
            ("Sun Nov  6 08:49:37 1994", 784_111_777),
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Thu, 29 Feb 2024 12:00:00 GMT", 1_709_208_000),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ] {
            assert_eq!(parse_ms(text), Some(secs * 1000), "{text}");
        }
    }

    #[test]
    fn agrees_with_httpdate_over_four_centuries_and_every_form() {
        // A walk with an odd step through 1970..2400, so leap years, century rules, every
        // weekday and every second-of-day field get hit.
        let mut secs = 0u64;
        let mut checked = 0;
        while secs < 13_569_465_600 {
            for text in forms(secs) {
                let two_digit_year = text.contains('-');
                let year = &httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs))[12..16];
                // RFC 850 years are two digits: only 1970..2069 read back as themselves.
                if two_digit_year && !("1970".."2070").contains(&year) {
                    continue;
                }
                assert_eq!(parse_ms(&text), Some(secs * 1000), "{text}");
                assert_eq!(parse_ms(&text), reference(&text), "{text}");
                checked += 1;
            }
            secs += 9_876_543;
        }
        assert!(checked > 2_500, "{checked}");
    }

    #[test]
    fn agrees_with_httpdate_on_every_one_byte_change() {
        // Each position of each form replaced by characters that matter to the grammar: the
        // two readers accept and reject the same texts, with the same instants. One known
        // difference: httpdate 1.0.3 never looks at the byte between an RFC 850 date's year and
        // its hour ("06-Nov-94x08:49:37"); the grammar wants a space there, and so do we.
        let mut seen_none = 0;
        for secs in [784_111_777u64, 951_782_400, 1_709_208_000, 4_107_542_399] {
            for text in forms(secs) {
                let unchecked_by_httpdate = text.find('-').map(|dash| dash + 7);
                for i in 0..text.len() {
                    for c in ["0", "1", "3", "9", " ", ",", ":", "-", "A", "x", "é"] {
                        let mut changed = text.clone();
                        changed.replace_range(i..i + 1, c);
                        let ours = parse_ms(changed.trim());
                        if Some(i) == unchecked_by_httpdate && c != " " {
                            assert_eq!(ours, None, "{changed:?}");
                            continue;
                        }
                        assert_eq!(ours, reference(changed.trim()), "{changed:?}");
                        seen_none += usize::from(ours.is_none());
                    }
                }
            }
        }
        assert!(seen_none > 1_000);
    }

    #[test]
    fn writes_the_imf_fixdate_httpdate_writes_and_reads_it_back() {
        // The same odd-step walk through 1970..2400, plus the edges; milliseconds dropped.
        let mut secs = 0u64;
        let mut checked = 0;
        while secs < 13_569_465_600 {
            for ms in [secs * 1_000, secs * 1_000 + 999] {
                let ours = format_ms(ms);
                let theirs = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs));
                assert_eq!(ours, theirs, "{ms}");
                assert_eq!(parse_ms(&ours), Some(secs * 1_000), "{ours}");
            }
            checked += 1;
            secs += 9_876_543;
        }
        assert!(checked > 1_000, "{checked}");
        assert_eq!(format_ms(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(format_ms(784_111_777_123), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(format_ms(MAX_MS), "Fri, 31 Dec 9999 23:59:59 GMT");
        assert_eq!(format_ms(u64::MAX), "Fri, 31 Dec 9999 23:59:59 GMT");
    }

    #[test]
    fn the_wrong_weekday_or_an_impossible_date_is_not_a_date() {
        for text in [
            "Mon, 06 Nov 1994 08:49:37 GMT", // a Sunday
            "Sun, 31 Nov 1994 08:49:37 GMT", // November has 30 days
            "Sat, 29 Feb 2025 00:00:00 GMT", // not a leap year
            "Wed, 31 Dec 1969 23:59:59 GMT", // before the epoch
            "Sun, 06 Nov 1994 08:49:60 GMT", // leap second
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "sun, 06 nov 1994 08:49:37 gmt",
            "",
            "0",
        ] {
            assert_eq!(parse_ms(text), None, "{text}");
            assert_eq!(reference(text), None, "{text}");
        }
    }
}
