//! A server reply, as the operation needs to see it.

use serde::{Deserialize, Serialize};

/// What came back for one attempt: the parts of an HTTP response the retry rules read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// `Retry-After`, converted to milliseconds (see [`parse_retry_after`]).
    pub retry_after_ms: Option<u64>,
    /// Whether the server set `Idempotent-Replayed: true`.
    pub replayed: bool,
    /// The response body (problem details JSON on errors).
    pub body: Vec<u8>,
}

impl Reply {
    /// A reply with `status` and `body`, no `Retry-After`, not replayed.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status,
            retry_after_ms: None,
            replayed: false,
            body: body.into(),
        }
    }

    /// Sets `Retry-After` in milliseconds.
    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// Marks the reply as a replay (`Idempotent-Replayed: true`).
    pub fn replayed(mut self) -> Self {
        self.replayed = true;
        self
    }
}

/// Parses a `Retry-After` value given in delay-seconds (`"3"`) into milliseconds.
///
/// The HTTP-date form is not parsed: it needs a wall clock, which this crate does not read; a
/// date yields `None` and the operation falls back to its backoff. A delay too large for a
/// `u64` saturates: the server asked for longer than any retry window, so the operation gives
/// up (unknown outcome) rather than retry sooner than asked.
pub fn parse_retry_after(value: &str) -> Option<u64> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Only digits are left, so the parse fails on overflow alone.
    let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
    Some(seconds.saturating_mul(1000))
}

/// Whether an `Idempotent-Replayed` header value means "replayed".
pub fn is_replayed_header(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("true") || value.trim() == "?1"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after("3"), Some(3000));
        assert_eq!(parse_retry_after(" 0 "), Some(0));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after(""), None);
        assert_eq!(parse_retry_after("1.5"), None);
        assert_eq!(parse_retry_after("+3"), None);
    }

    #[test]
    fn retry_after_too_large_saturates() {
        assert_eq!(
            parse_retry_after("18446744073709551"),
            Some(18_446_744_073_709_551_000)
        );
        assert_eq!(parse_retry_after("18446744073709552"), Some(u64::MAX));
        assert_eq!(parse_retry_after("99999999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn replayed_header_values() {
        assert!(is_replayed_header("true"));
        assert!(is_replayed_header("True"));
        assert!(is_replayed_header("?1"));
        assert!(!is_replayed_header("false"));
    }
}
