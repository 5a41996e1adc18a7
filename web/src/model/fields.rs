//! Input fields: the text the user typed, the last value that parsed, and why the text is refused.
//!
//! Every form field goes through one of the parsers below; a refused text never reaches the world
//! (the last good value stays in force) and is shown under the field instead.

/// A field's text and its last accepted value.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<T> {
    /// Exactly what is in the input box.
    pub text: String,
    /// The last value that passed validation (what the world runs with).
    pub value: T,
    /// Why `text` is refused; `None` when `text` is `value`.
    pub error: Option<String>,
}

impl<T: Clone + ToString> Field<T> {
    /// A valid field holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            text: value.to_string(),
            value,
            error: None,
        }
    }

    /// Take `text`; keep the old value and record the message when `parse` refuses it.
    pub fn edit(&mut self, text: String, parse: impl Fn(&str) -> Result<T, String>) {
        match parse(&text) {
            Ok(value) => {
                self.value = value;
                self.error = None;
            }
            Err(message) => self.error = Some(message),
        }
        self.text = text;
    }

    /// Refuse the current text with `message` (cross-field checks), keeping the value.
    pub fn refuse(&mut self, message: String) {
        self.error = Some(message);
    }
}

/// Basis points in 100 % (a percentage's unit here: 0.01 %).
pub const FULL: u32 = 10_000;

/// A percentage between 0 and 100 inclusive, with at most two decimals, in basis points
/// (`"12.5"` → 1250). Parsed by hand: no float parsing or formatting in the bundle.
pub fn parse_percent(text: &str) -> Result<u32, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("enter a percentage from 0 to 100".into());
    }
    let v = t.trim_end_matches('%').trim();
    if v.starts_with('-') && v.len() > 1 {
        return Err("a percentage cannot be negative".into());
    }
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && frac.is_empty() || !digits(whole) || !digits(frac) {
        return Err(format!("“{t}” is not a number"));
    }
    if frac.len() > 2 {
        return Err("at most two decimals".into());
    }
    let whole: u32 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| "at most 100 %".to_string())?
    };
    let frac: u32 = format!("{frac:0<2}").parse().unwrap_or(0);
    let bp = whole.saturating_mul(100).saturating_add(frac);
    if bp > FULL {
        return Err("at most 100 %".into());
    }
    Ok(bp)
}

/// Basis points as the percentage a user types: 1250 → `"12.5"`, 3000 → `"30"`.
pub fn format_percent(bp: u32) -> String {
    let (whole, frac) = (bp / 100, bp % 100);
    match frac {
        0 => whole.to_string(),
        f if f % 10 == 0 => format!("{whole}.{}", f / 10),
        f => format!("{whole}.{f:02}"),
    }
}

/// Whole milliseconds, `0..=max`.
pub fn parse_ms(text: &str, max: u64) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("enter a number of milliseconds".into());
    }
    if t.starts_with('-') {
        return Err("a duration cannot be negative".into());
    }
    let v: u64 = t.parse().map_err(|_| {
        let (whole, frac) = t.split_once('.').unwrap_or((t, "x"));
        if !whole.is_empty()
            && whole
                .bytes()
                .chain(frac.bytes())
                .all(|b| b.is_ascii_digit())
        {
            "whole milliseconds only".to_string()
        } else {
            format!("“{t}” is not a number")
        }
    })?;
    if v > max {
        return Err(format!("at most {max} ms"));
    }
    Ok(v)
}

/// A seed: any whole number from 0 to 2^64 − 1.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("enter a seed (a whole number)".into());
    }
    if t.starts_with('-') {
        return Err("a seed cannot be negative".into());
    }
    t.parse()
        .map_err(|_| format!("“{t}” is not a whole number (0 to 2^64 − 1)"))
}

/// A count in `min..=max`.
pub fn parse_count(text: &str, min: u32, max: u32) -> Result<u32, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("enter a number from {min} to {max}"));
    }
    let v: i64 = t
        .parse()
        .map_err(|_| format!("“{t}” is not a whole number"))?;
    if v < i64::from(min) || v > i64::from(max) {
        return Err(format!("from {min} to {max}"));
    }
    Ok(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_accepts_the_range_and_a_trailing_sign() {
        assert_eq!(parse_percent("0"), Ok(0));
        assert_eq!(parse_percent(" 30 "), Ok(3_000));
        assert_eq!(parse_percent("100%"), Ok(10_000));
        assert_eq!(parse_percent("12.5"), Ok(1_250));
        assert_eq!(parse_percent("0.05"), Ok(5));
        assert_eq!(parse_percent(".5"), Ok(50));
        assert_eq!(parse_percent("100.00"), Ok(10_000));
    }

    #[test]
    fn percent_formats_back_to_what_was_typed() {
        for (bp, text) in [
            (0, "0"),
            (3_000, "30"),
            (1_250, "12.5"),
            (5, "0.05"),
            (10_000, "100"),
        ] {
            assert_eq!(format_percent(bp), text);
            assert_eq!(parse_percent(text), Ok(bp));
        }
    }

    #[test]
    fn percent_refuses_out_of_range_and_garbage() {
        assert!(parse_percent("100.1").unwrap_err().contains("at most 100"));
        assert!(parse_percent("-1").unwrap_err().contains("negative"));
        assert!(parse_percent("abc").unwrap_err().contains("not a number"));
        assert!(parse_percent("").is_err());
        assert!(parse_percent("NaN").is_err());
        assert!(parse_percent("inf").is_err());
        assert!(parse_percent("1e2").is_err());
        assert!(parse_percent("12.345")
            .unwrap_err()
            .contains("two decimals"));
        assert!(parse_percent("99999999999")
            .unwrap_err()
            .contains("at most 100"));
        assert!(parse_percent(".").is_err());
    }

    #[test]
    fn ms_refuses_negative_fractional_and_huge() {
        assert_eq!(parse_ms("250", 10_000), Ok(250));
        assert!(parse_ms("-5", 10_000).unwrap_err().contains("negative"));
        assert!(parse_ms("1.5", 10_000).unwrap_err().contains("whole"));
        assert!(parse_ms("10001", 10_000).unwrap_err().contains("at most"));
        assert!(parse_ms("x", 10_000).unwrap_err().contains("not a number"));
    }

    #[test]
    fn seed_takes_any_u64_and_nothing_else() {
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_seed("18446744073709551616").is_err());
        assert!(parse_seed("seven").is_err());
        assert!(parse_seed("-1").unwrap_err().contains("negative"));
    }

    #[test]
    fn a_refused_edit_keeps_the_old_value_and_the_new_text() {
        let mut f = Field::new(5u64);
        f.edit("-3".into(), |t| parse_ms(t, 100));
        assert_eq!(f.value, 5);
        assert_eq!(f.text, "-3");
        assert!(f.error.is_some());
        f.edit("7".into(), |t| parse_ms(t, 100));
        assert_eq!((f.value, f.error.clone()), (7, None));
    }

    #[test]
    fn count_is_bounded() {
        assert_eq!(parse_count("50", 1, 2000), Ok(50));
        assert!(parse_count("0", 1, 2000).is_err());
        assert!(parse_count("99999999999999999999", 1, 2000).is_err());
    }
}
