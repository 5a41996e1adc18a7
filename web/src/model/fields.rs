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

/// A percentage between 0 and 100 inclusive, returned as a probability in `0.0..=1.0`.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("enter a percentage from 0 to 100".into());
    }
    let v: f64 = t
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("“{t}” is not a number"))?;
    if !v.is_finite() {
        return Err("enter a finite number".into());
    }
    if v < 0.0 {
        return Err("a percentage cannot be negative".into());
    }
    if v > 100.0 {
        return Err("at most 100 %".into());
    }
    Ok(v / 100.0)
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
        if t.parse::<f64>().is_ok() {
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
        .map_err(|_| format!("“{t}” is not a whole number from 0 to 18446744073709551615"))
}

/// A count in `min..=max`.
pub fn parse_count(text: &str, min: u32, max: u32) -> Result<u32, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("enter a number from {min} to {max}"));
    }
    let v: i64 = t.parse().map_err(|_| format!("“{t}” is not a whole number"))?;
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
        assert_eq!(parse_percent("0"), Ok(0.0));
        assert_eq!(parse_percent(" 30 "), Ok(0.3));
        assert_eq!(parse_percent("100%"), Ok(1.0));
        assert_eq!(parse_percent("12.5"), Ok(0.125));
    }

    #[test]
    fn percent_refuses_out_of_range_and_garbage() {
        assert!(parse_percent("100.1").unwrap_err().contains("at most 100"));
        assert!(parse_percent("-1").unwrap_err().contains("negative"));
        assert!(parse_percent("abc").unwrap_err().contains("not a number"));
        assert!(parse_percent("").is_err());
        assert!(parse_percent("NaN").is_err());
        assert!(parse_percent("inf").is_err());
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
