//! Store-wide and per-route configuration.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Store-wide settings.
///
/// ## Default values
/// - `lock_ms`: 10 000 (10 s). A claim younger than this answers 409; an older one may be
///   taken over. Long enough for a payment call and its timeouts, short enough that a
///   crashed worker's claim is retaken well inside a client's retry window.
/// - `retention_ms`: 86 400 000 (24 h), counted from the record's last write (claim,
///   takeover or save). Must outlive the client's retry window. The default for routes
///   that declare none ([`RouteConfig::retention_ms`]).
/// - `max_body_bytes`: 65 536 (64 KiB). Larger request bodies answer 413.
/// - `event_capacity`: 4 096. The event log keeps at most this many events, dropping the
///   oldest; 0 turns the log off.
/// - `first_sent_tolerance_ms`: `Some(300 000)` (5 min). The expired-key guard
///   ([`crate::first_sent`]): a request under a key with no row, first sent longer ago than
///   its route's retention plus this, is refused (412) instead of run. It absorbs a client
///   clock running behind and the header's one-second resolution. `None` turns the guard off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreConfig {
    /// How long a claim (lease) stays live, in milliseconds.
    pub lock_ms: u64,
    /// How long a record is kept after its last write, in milliseconds, unless its route
    /// declares its own.
    pub retention_ms: u64,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Most events the log keeps; 0 disables the log.
    pub event_capacity: usize,
    /// The expired-key guard's tolerance, in milliseconds; `None`: the guard is off.
    pub first_sent_tolerance_ms: Option<u64>,
}

impl StoreConfig {
    /// Default claim lifetime: 10 s.
    pub const DEFAULT_LOCK_MS: u64 = 10_000;
    /// Default retention: 24 h.
    pub const DEFAULT_RETENTION_MS: u64 = 24 * 60 * 60 * 1_000;
    /// Default body limit: 64 KiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
    /// Default event log capacity.
    pub const DEFAULT_EVENT_CAPACITY: usize = 4_096;
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            lock_ms: Self::DEFAULT_LOCK_MS,
            retention_ms: Self::DEFAULT_RETENTION_MS,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            event_capacity: Self::DEFAULT_EVENT_CAPACITY,
            first_sent_tolerance_ms: Some(crate::first_sent::DEFAULT_TOLERANCE_MS),
        }
    }
}

/// Whether a route demands an `Idempotency-Key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyRequirement {
    /// A request without a key is rejected with 400.
    Required,
    /// A request without a key runs without idempotency protection ([`crate::Begin::Unkeyed`]).
    Optional,
}

/// What the store does with a claim when the work fails.
///
/// There is deliberately no default: each route chooses. Spelled in kebab-case in JSON
/// (`"release-claim"`, `"save-response"`), like every other enum of the project's configs;
/// the old spellings `"ReleaseClaim"` and `"SaveResponse"` are still read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorPolicy {
    /// Delete the claim so a retry runs the work again (the lab's choice). Safe only when
    /// the work is idempotent downstream, e.g. the payment provider got its own key.
    #[serde(alias = "ReleaseClaim")]
    ReleaseClaim,
    /// Save the error response; retries replay it (Stripe's choice).
    #[serde(alias = "SaveResponse")]
    SaveResponse,
}

impl ErrorPolicy {
    /// The kebab-case name, as in JSON and in a SQL table's `on_error` column.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReleaseClaim => "release-claim",
            Self::SaveResponse => "save-response",
        }
    }

    /// The policy named `name` ([`as_str`](Self::as_str)'s spelling), if any.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::ReleaseClaim, Self::SaveResponse]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

/// Per-route settings: what the route declares, and so what the store enforces.
///
/// `operation` names the endpoint: the method and the route's *template* (`POST /api/checkout`,
/// never the concrete path or the query string), or a name the caller chooses. It goes into
/// the request's [`Fingerprint`](crate::Fingerprint) with the body, so a key reused on another
/// endpoint with the same body is a 422, as Stripe compares "endpoint and parameters".
/// `on_error` is recorded with the claim, and [`Store::fail`](crate::Store::fail) follows it:
/// a caller cannot pick another policy after the fact. So is the effective retention
/// (`retention_ms`, else the store's [`StoreConfig::retention_ms`]): every later write of the
/// row restarts the row's own retention, whatever the store's default is by then.
///
/// ## Default values
/// - `retention_ms`: `None` (the store's default, 24 h unless configured).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RouteConfig {
    /// The operation the fingerprint binds, e.g. `POST /api/checkout`.
    pub operation: Cow<'static, str>,
    /// Whether the key is required.
    pub key: KeyRequirement,
    /// What a work error does to the claim.
    pub on_error: ErrorPolicy,
    /// How long this route's records are kept after their last write, in milliseconds
    /// (`None`: the store's [`StoreConfig::retention_ms`]). Must outlive the client's retry
    /// window; shorten it for routes whose saved responses hold personal data.
    #[serde(default)]
    pub retention_ms: Option<u64>,
}

impl RouteConfig {
    /// A route `operation` that requires a key.
    pub const fn required(operation: &'static str, on_error: ErrorPolicy) -> Self {
        Self {
            operation: Cow::Borrowed(operation),
            key: KeyRequirement::Required,
            on_error,
            retention_ms: None,
        }
    }

    /// A route `operation` where the key is optional.
    pub const fn optional(operation: &'static str, on_error: ErrorPolicy) -> Self {
        Self {
            operation: Cow::Borrowed(operation),
            key: KeyRequirement::Optional,
            on_error,
            retention_ms: None,
        }
    }

    /// A route whose operation name is only known at run time (read from configuration).
    pub fn named(
        operation: impl Into<Cow<'static, str>>,
        key: KeyRequirement,
        on_error: ErrorPolicy,
    ) -> Self {
        Self {
            operation: operation.into(),
            key,
            on_error,
            retention_ms: None,
        }
    }

    /// The same route with its own retention, in milliseconds.
    pub const fn with_retention_ms(mut self, retention_ms: u64) -> Self {
        self.retention_ms = Some(retention_ms);
        self
    }
}
