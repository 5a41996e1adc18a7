//! Records: what the table stores per (scope, key).

use serde::{Deserialize, Serialize};

use crate::{ErrorPolicy, Fingerprint, Lease, StoreConfig};

/// The response saved for replay, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SavedResponse {
    /// HTTP status code.
    pub status: u16,
    /// Value of the `Content-Type` header.
    pub content_type: String,
    /// Further headers to replay, in order (name, value). The store keeps what it is given:
    /// which headers may be replayed (`Location`, never `Set-Cookie`) is the HTTP layer's
    /// allow-list, applied before saving.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body, exactly as first sent.
    pub body: Vec<u8>,
}

impl SavedResponse {
    /// A response with `Content-Type: application/json` and no further headers.
    pub fn json(status: u16, body: Vec<u8>) -> Self {
        Self {
            status,
            content_type: "application/json".to_owned(),
            headers: Vec::new(),
            body,
        }
    }

    /// The same response with one more header to replay.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// Where the operation behind a record stands.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Status {
    /// Claimed; a worker holding `lease` is running the work.
    InFlight {
        /// The current holder's lease.
        lease: Lease,
    },
    /// Given back by the worker holding `lease` after a failure that saved no answer (the
    /// route's `release-claim` policy, or an outcome the worker could not know). The lease is
    /// over, not the key: the key stays bound to the record's fingerprint for its retention,
    /// so the same request claims it again (compare-and-set on `lease`: one winner) and
    /// resumes the recovery point the released worker left, and another request is 422.
    Released {
        /// The lease that released the claim; no write is fenced by it any more.
        lease: Lease,
    },
    /// Finished; retries replay `response`.
    Done {
        /// The response to replay.
        response: SavedResponse,
    },
}

/// One row of the claim table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Record {
    /// Fingerprint of the request that claimed the key (its operation and body).
    pub fingerprint: Fingerprint,
    /// The claiming route's [`RouteConfig::on_error`](crate::RouteConfig::on_error), which
    /// [`Store::fail`](crate::Store::fail) follows.
    pub on_error: ErrorPolicy,
    /// In flight, released or done.
    pub status: Status,
    /// When the key was first claimed, in milliseconds.
    pub created_at: u64,
    /// When retention ends, in milliseconds.
    pub expires_at: u64,
    /// How long the record is kept after each write: the claiming route's retention
    /// ([`rules::retention_ms`](crate::rules::retention_ms)), fixed at the claim, so every later write
    /// restarts the same span ([`rules::expires_at`](crate::rules::expires_at)). Records
    /// written before it existed read as the old store default, 24 h.
    #[serde(default = "default_retention_ms")]
    pub retention_ms: u64,
}

fn default_retention_ms() -> u64 {
    StoreConfig::DEFAULT_RETENTION_MS
}

impl Record {
    /// The lease, while in flight (a released record's lease holds nothing).
    pub fn lease(&self) -> Option<&Lease> {
        match &self.status {
            Status::InFlight { lease } => Some(lease),
            Status::Released { .. } | Status::Done { .. } => None,
        }
    }

    /// Whether the record was released by exactly `lease` (and not claimed again since).
    pub fn is_released_by(&self, lease: &Lease) -> bool {
        matches!(&self.status, Status::Released { lease: l } if l == lease)
    }

    /// Whether the record is in flight under exactly `lease`.
    pub fn is_held_by(&self, lease: &Lease) -> bool {
        self.lease() == Some(lease)
    }

    /// Whether the record is an in-flight claim whose lease is live at `now`.
    pub fn is_live_claim(&self, now: u64, lock_ms: u64) -> bool {
        self.lease().is_some_and(|l| l.is_live(now, lock_ms))
    }

    /// Whether the record is past retention at `now` and not a live claim. Such a record
    /// counts as absent and may be pruned; a live in-flight claim never expires. A released
    /// record expires at its `expires_at` like a done one: the release freed the lease.
    pub fn is_expired(&self, now: u64, lock_ms: u64) -> bool {
        now >= self.expires_at && !self.is_live_claim(now, lock_ms)
    }
}
