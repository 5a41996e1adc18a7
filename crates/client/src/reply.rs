//! A server reply as the operation sees it: the one conversion from an HTTP response
//! ([`Reply::from_http`], used by the `fetch` driver and by the simulator's network) and the one
//! status table ([`Reply::class`], used by [`Operation`](crate::Operation) and the simulator's
//! naive pages).

use serde::{Deserialize, Serialize};

use idem_store::http_date;

/// Request header carrying the idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
/// Response header the server sets (`true`) when it replays a saved response.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";
/// Response header with the number of seconds to wait before retrying (409, 429).
pub const RETRY_AFTER_HEADER: &str = "Retry-After";
/// Request header with when the operation was first sent, an HTTP-date, on every keyed
/// attempt ([`Attempt::first_sent_header`](crate::Attempt::first_sent_header)): the server's
/// expired-key guard (`idem_store::first_sent`) reads it.
pub const FIRST_SENT_HEADER: &str = idem_store::first_sent::HEADER;

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

/// What a reply means for the attempt it answers: the client's status table, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyClass {
    /// 2xx: the operation succeeded (`replayed`: the server answered from its table).
    Succeeded {
        /// `Idempotent-Replayed: true`.
        replayed: bool,
    },
    /// 409, 429 or 5xx: nothing final; retry with the same key and bytes, after `Retry-After`
    /// (in milliseconds) when the server gave one.
    RetryAfter(Option<u64>),
    /// 412: the server holds no record of the key any more and the request was first sent
    /// longer ago than it keeps keys (its expired-key guard): it may have run, so it was not
    /// run again. Final, never retried, and never a new key: the outcome is unknown
    /// ([`Failure::KeyExpired`](crate::Failure::KeyExpired)); reconcile before paying again.
    /// (The SDK sends no other precondition, so a 412 can only be about its first-sent time.)
    KeyExpired,
    /// Any other status (400, 402, 404, 422, ...): final, never retried.
    Rejected,
}

impl Reply {
    /// The reply an HTTP response makes: its status and body, `Retry-After` read by
    /// [`retry_after_ms`] at `now_ms` (delay-seconds need no clock; an HTTP-date is read against
    /// it), and `Idempotent-Replayed` by [`is_replayed_header`]. `header` looks a response
    /// header up by name. Every driver converts through here: the `fetch` driver with the
    /// page's wall clock, the simulator's network with its virtual one.
    pub fn from_http<S: AsRef<str>>(
        status: u16,
        header: impl Fn(&str) -> Option<S>,
        body: Vec<u8>,
        now_ms: u64,
    ) -> Reply {
        let retry_after_ms =
            header(RETRY_AFTER_HEADER).and_then(|value| retry_after_ms(value.as_ref(), now_ms));
        let replayed =
            header(REPLAYED_HEADER).is_some_and(|value| is_replayed_header(value.as_ref()));
        Reply {
            status,
            retry_after_ms,
            replayed,
            body,
        }
    }

    /// What this reply means: 2xx succeeded (a replay when marked), 409, 429 and 5xx retry
    /// (after `Retry-After` when given), 412 is a key the server no longer remembers
    /// ([`ReplyClass::KeyExpired`]), every other status is a final rejection.
    pub fn class(&self) -> ReplyClass {
        match self.status {
            200..=299 => ReplyClass::Succeeded {
                replayed: self.replayed,
            },
            409 | 429 | 500..=599 => ReplyClass::RetryAfter(self.retry_after_ms),
            412 => ReplyClass::KeyExpired,
            _ => ReplyClass::Rejected,
        }
    }

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
/// The HTTP-date form needs a wall clock, which the sans-IO core does not read: see
/// [`retry_after_ms`], which a driver with a clock calls. A delay too large for a `u64`
/// saturates: the server asked for longer than any retry window, so the operation gives up
/// (unknown outcome) rather than retry sooner than asked.
///
/// The value is trimmed of ASCII whitespace only, as every header reader here does: HTTP's
/// whitespace around a field value is space and tab (RFC 9110 §5.5), and a byte such as 0xA0
/// (U+00A0 once `fetch` has read it) is part of the value, not space around it (Unicode-aware
/// `str::trim` cost the package 421 B gzip).
pub fn parse_retry_after(value: &str) -> Option<u64> {
    let value = value.trim_ascii();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Only digits are left, so the parse fails on overflow alone.
    let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
    Some(seconds.saturating_mul(1000))
}

/// A `Retry-After` header value as the wait it asks for at `now_ms` (milliseconds since the Unix
/// epoch, the caller's wall clock): delay-seconds as [`parse_retry_after`] reads them, or an
/// HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`, and the obsolete RFC 850 and asctime forms
/// recipients must accept), as the time left until it, 0 once it has passed. `None` for
/// anything else. How a wait shorter than the policy's floor is treated is
/// [`retry_delay_ms`](crate::retry_delay_ms)'s business, not this parser's.
pub fn retry_after_ms(value: &str, now_ms: u64) -> Option<u64> {
    if let Some(ms) = parse_retry_after(value) {
        return Some(ms);
    }
    let at = http_date::parse_ms(value.trim_ascii())?;
    Some(at.saturating_sub(now_ms))
}

/// Whether an `Idempotent-Replayed` header value means "replayed".
pub fn is_replayed_header(value: &str) -> bool {
    let value = value.trim_ascii();
    value.eq_ignore_ascii_case("true") || value == "?1"
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
        assert_eq!(parse_retry_after("\t3\r\n"), Some(3000));
        // Not HTTP whitespace: part of the value, which is then no number.
        assert_eq!(parse_retry_after("\u{a0}3"), None);
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

    /// 2015-10-21T07:28:00Z in ms since the epoch (`date -u -d 2015-10-21T07:28:00Z +%s`).
    const OCT_21_2015: u64 = 1_445_412_480_000;

    #[test]
    fn retry_after_as_an_http_date_is_the_time_left_until_it() {
        let now = OCT_21_2015 - 90_000;
        for date in [
            "Wed, 21 Oct 2015 07:28:00 GMT",     // IMF-fixdate
            "Wednesday, 21-Oct-15 07:28:00 GMT", // obsolete RFC 850
            "Wed Oct 21 07:28:00 2015",          // obsolete asctime
            " Wed, 21 Oct 2015 07:28:00 GMT ",   // header whitespace
        ] {
            assert_eq!(retry_after_ms(date, now), Some(90_000), "{date:?}");
        }
        // Past (or right now): no wait left; the operation's floor applies then.
        assert_eq!(
            retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT", OCT_21_2015),
            Some(0)
        );
        assert_eq!(
            retry_after_ms("Thu, 01 Jan 1970 00:00:00 GMT", OCT_21_2015),
            Some(0)
        );
        // Far ahead: the whole wait, which a retry window then judges.
        assert_eq!(
            retry_after_ms("Fri, 31 Dec 9999 23:59:59 GMT", 0),
            Some(253_402_300_799_000)
        );
    }

    #[test]
    fn retry_after_delay_seconds_need_no_clock() {
        assert_eq!(retry_after_ms("3", 0), Some(3000));
        assert_eq!(retry_after_ms("3", u64::MAX), Some(3000));
        assert_eq!(retry_after_ms(" 0 ", OCT_21_2015), Some(0));
    }

    #[test]
    fn retry_after_that_is_neither_is_ignored() {
        for bad in [
            "",
            "soon",
            "-1",
            "1.5",
            "Wed, 21 Oct 2015 07:28:00",      // no zone
            "Wed, 21 Oct 2015 07:28:00 CEST", // not GMT
            "Wed, 32 Oct 2015 07:28:00 GMT",  // no such day
            "Wed, 21 Oct 2015 25:28:00 GMT",
            "2015-10-21T07:28:00Z", // ISO 8601 is not an HTTP-date
        ] {
            assert_eq!(retry_after_ms(bad, OCT_21_2015), None, "{bad:?}");
        }
    }

    #[test]
    fn the_status_table() {
        for (status, class) in [
            (200, ReplyClass::Succeeded { replayed: false }),
            (201, ReplyClass::Succeeded { replayed: false }),
            (299, ReplyClass::Succeeded { replayed: false }),
            (409, ReplyClass::RetryAfter(None)),
            (429, ReplyClass::RetryAfter(None)),
            (500, ReplyClass::RetryAfter(None)),
            (504, ReplyClass::RetryAfter(None)),
            (599, ReplyClass::RetryAfter(None)),
            (100, ReplyClass::Rejected),
            (304, ReplyClass::Rejected),
            (400, ReplyClass::Rejected),
            (402, ReplyClass::Rejected),
            (408, ReplyClass::Rejected),
            (422, ReplyClass::Rejected),
            (600, ReplyClass::Rejected),
        ] {
            assert_eq!(Reply::new(status, "").class(), class, "{status}");
        }
        let replay = Reply::new(201, "").replayed();
        assert_eq!(replay.class(), ReplyClass::Succeeded { replayed: true });
        let wait = Reply::new(409, "").with_retry_after_ms(3_000);
        assert_eq!(wait.class(), ReplyClass::RetryAfter(Some(3_000)));
    }

    #[test]
    fn from_http_reads_the_headers_by_name_in_any_case() {
        let headers = [
            ("content-type", "application/problem+json"),
            ("retry-after", "2"),
            ("IDEMPOTENT-REPLAYED", "true"),
        ];
        let lookup = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        };
        let reply = Reply::from_http(409, lookup, b"{}".to_vec(), 0);
        assert_eq!(
            reply,
            Reply::new(409, "{}").with_retry_after_ms(2_000).replayed()
        );
        // An HTTP-date is the time left until it at `now_ms`.
        let dated =
            |name: &str| (name == RETRY_AFTER_HEADER).then_some("Wed, 21 Oct 2015 07:28:00 GMT");
        let reply = Reply::from_http(503, dated, Vec::new(), OCT_21_2015 - 4_000);
        assert_eq!(reply.retry_after_ms, Some(4_000));
        assert!(!reply.replayed);
        let none = |_: &str| None::<String>;
        assert_eq!(
            Reply::from_http(201, none, Vec::new(), 0),
            Reply::new(201, "")
        );
    }

    #[test]
    fn replayed_header_values() {
        assert!(is_replayed_header("true"));
        assert!(is_replayed_header("True"));
        assert!(is_replayed_header("?1"));
        assert!(!is_replayed_header("false"));
    }
}
