//! The expired-key guard: a retry must not run again just because its key outlived retention.
//!
//! After retention a key's row is pruned, and a request under that key looks new: every
//! idempotency layer runs it again. A client whose retries outlive the server's retention (a
//! misconfiguration, a laptop asleep for two days) pays twice without anyone noticing. So a
//! client says, on every attempt, when the operation was first sent ([`HEADER`], an HTTP-date,
//! the precedent of OASIS Repeatable Requests and Azure's REST guidelines), and for a key the
//! table holds **no row** for, a request first sent longer ago than the route's retention plus
//! a tolerance is refused instead of run ([`FirstSent::refuses`], applied by
//! [`rules::Deciding`](crate::rules::Deciding)): 412 Precondition Failed,
//! [`problem::KEY_EXPIRED`](crate::http::problem::KEY_EXPIRED), "reconcile before paying
//! again". Why 412: the header is the request's precondition ("my first attempt is recent
//! enough for you to remember it") and it does not hold; Azure answers it so; and no client
//! retries a 412 blindly (a 409 or 5xx would be retried, a 422 means another payload).
//!
//! Nothing changes within retention, nor for a key that still has a row (its row decides:
//! replay, 409, 422), nor for a request without the header. Why the rule is safe: a row is
//! kept at least `retention` after its claim, and its claim came after the first send, so while
//! `now < first sent + retention` a request with no row never reached the server before.
//!
//! The tolerance ([`StoreConfig::first_sent_tolerance_ms`](crate::StoreConfig), default
//! 5 minutes) absorbs the client's clock running behind the server's and the header's
//! one-second resolution: a clock behind by more than the tolerance may get an honest refusal
//! for a request that never reached the server (the client reports the outcome unknown and
//! reconciles: no double charge). A clock ahead by `d` delays the guard by `d`.

use crate::{http_date, RequestError};

/// The request header: when the operation was first sent, an HTTP-date (IMF-fixdate when
/// written, `Sun, 06 Nov 1994 08:49:37 GMT`; the obsolete forms are read too).
pub const HEADER: &str = "Repeatability-First-Sent";

/// Default tolerance for clock skew and the header's one-second resolution: 5 minutes.
pub const DEFAULT_TOLERANCE_MS: u64 = 5 * 60 * 1_000;

/// The header's value for an operation first sent at `ms` (since the Unix epoch).
pub fn header_value(ms: u64) -> String {
    http_date::format_ms(ms)
}

/// The header's value as milliseconds since the Unix epoch, or
/// [`RequestError::MalformedFirstSent`] (400: a client that sends the header must send a date).
pub fn parse(value: &str) -> Result<u64, RequestError> {
    http_date::parse_ms(value.trim()).ok_or(RequestError::MalformedFirstSent)
}

/// A request's first-sent time, with what the guard compares it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstSent {
    /// When the client says the operation was first sent (ms since the Unix epoch).
    pub at_ms: u64,
    /// The retention of the route the request is for (a new row's; the rows it would find
    /// carry their own).
    pub retention_ms: u64,
    /// [`StoreConfig::first_sent_tolerance_ms`](crate::StoreConfig).
    pub tolerance_ms: u64,
}

impl FirstSent {
    /// Whether a request under a key with no row (or a row past retention) must be refused at
    /// `now`: first sent at least retention plus the tolerance ago (the instant a row written
    /// at the first send stops counting, [`Record::is_expired`](crate::Record::is_expired)'s
    /// `expires_at <= now`, with the tolerance on top).
    pub fn refuses(&self, now: u64) -> bool {
        now >= self
            .at_ms
            .saturating_add(self.retention_ms)
            .saturating_add(self.tolerance_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 3_600_000;

    fn sent(at_ms: u64) -> FirstSent {
        FirstSent {
            at_ms,
            retention_ms: 24 * HOUR,
            tolerance_ms: DEFAULT_TOLERANCE_MS,
        }
    }

    #[test]
    fn refuses_only_past_retention_plus_the_tolerance() {
        let first = 1_000 * HOUR;
        let limit = first + 24 * HOUR + DEFAULT_TOLERANCE_MS;
        assert!(!sent(first).refuses(first));
        assert!(!sent(first).refuses(first + 24 * HOUR));
        assert!(!sent(first).refuses(limit - 1));
        assert!(sent(first).refuses(limit));
        assert!(sent(first).refuses(first + 48 * HOUR));
        // A date in the future (a clock ahead) refuses nothing; no overflow near the top.
        assert!(!sent(first + HOUR).refuses(first));
        assert!(!sent(u64::MAX).refuses(u64::MAX - 1));
    }

    #[test]
    fn a_client_clock_behind_by_less_than_the_tolerance_is_never_refused_within_retention() {
        // The true first send and the server's clock agree; the client's clock runs behind by
        // `skew`, and its header drops the milliseconds too.
        let true_first = 1_000 * HOUR + 999;
        let last_moment = true_first + 24 * HOUR;
        for skew in [0, 1_000, 60_000, DEFAULT_TOLERANCE_MS - 1_000] {
            let written = parse(&header_value(true_first - skew)).unwrap();
            assert!(!sent(written).refuses(last_moment), "skew {skew}");
        }
        // Behind by more than the tolerance: refused within retention (an honest unknown).
        let written = parse(&header_value(true_first - DEFAULT_TOLERANCE_MS - 2_000)).unwrap();
        assert!(sent(written).refuses(last_moment));
    }

    #[test]
    fn the_header_is_an_http_date() {
        assert_eq!(
            header_value(784_111_777_000),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            parse(" Sun, 06 Nov 1994 08:49:37 GMT "),
            Ok(784_111_777_000)
        );
        for bad in [
            "",
            "784111777",
            "yesterday",
            "Sun, 06 Nov 1994 08:49:37 UTC",
        ] {
            assert_eq!(parse(bad), Err(RequestError::MalformedFirstSent), "{bad}");
        }
    }
}
