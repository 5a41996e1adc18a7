//! The retry policy: backoff, per-attempt timeout and the retry window.

use serde::{Deserialize, Serialize};

/// How an operation retries.
///
/// ## Default values
///
/// - `initial_backoff_ms`: 500 (0.5 s, as Stripe's SDKs)
/// - `max_backoff_ms`: 5 000 (5 s cap)
/// - `jitter`: `true` (each delay is drawn from `[d/2, d]`, never below `initial_backoff_ms`)
/// - `attempt_timeout_ms`: 10 000 (an attempt without a reply after 10 s counts as a timeout)
/// - `retry_window_ms`: 86 400 000 (24 h from the operation's creation; must stay shorter than
///   the server's retention, or a late retry would find no record and run the work again)
/// - `max_attempts`: `None` (no limit besides the window)
///
/// Deserializes from partial input: missing fields take their defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RetryPolicy {
    /// Delay after the first retryable failure, in ms; doubles per failure.
    pub initial_backoff_ms: u64,
    /// Upper bound of the backoff delay, in ms.
    pub max_backoff_ms: u64,
    /// Whether to spread delays randomly over `[d/2, d]` (so clients do not retry in lockstep).
    pub jitter: bool,
    /// How long one attempt may wait for its reply, in ms, before it counts as a timeout.
    pub attempt_timeout_ms: u64,
    /// How long after creation attempts may still be sent, in ms; after it, the outcome is
    /// unknown.
    pub retry_window_ms: u64,
    /// Optional cap on the number of attempts; reaching it also ends in an unknown outcome.
    pub max_attempts: Option<u32>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial_backoff_ms: 500,
            max_backoff_ms: 5_000,
            jitter: true,
            attempt_timeout_ms: 10_000,
            retry_window_ms: 24 * 60 * 60 * 1000,
            max_attempts: None,
        }
    }
}
