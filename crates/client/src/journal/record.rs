//! What the journal holds under one operation name: an open [`Record`] or a [`SettledRecord`].

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::method::Method;
use crate::outcome::Failure;

/// The format of open records (pending or unknown). Older records are migrated on read when they
/// carry a key and a body; newer ones are left untouched and reported.
///
/// Open records are still written in format 1, which an SDK of the previous release reads: a
/// rollback resumes them with their keys. Only settled entries, which that release cannot
/// express, carry [`SETTLED_FORMAT_VERSION`].
pub const FORMAT_VERSION: u32 = 1;

/// The format of settled entries ([`SettledRecord`]): format 1 plus the settled state, without
/// the payload body.
pub const SETTLED_FORMAT_VERSION: u32 = 2;

/// The format of an open record given up on because the server refused it as expired (its
/// `last_error` is [`Failure::KeyExpired`], 412): format 1 with a failure type that a reader of
/// format 1 cannot express, so a previous release reports the record as a newer format and
/// leaves it untouched instead of taking it for corrupt. Every other open record is still
/// written in format 1 ([`Record::format_for`]).
pub const KEY_EXPIRED_FORMAT_VERSION: u32 = 3;

/// One open operation's durable state: everything a reload needs to resume it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Format version ([`FORMAT_VERSION`] when written by this crate).
    pub version: u32,
    /// The operation's name.
    pub name: String,
    /// The idempotency key, minted once.
    pub key: Uuid,
    /// The HTTP method.
    pub method: Method,
    /// The canonical JSON payload, sent byte for byte on every attempt.
    pub body: String,
    /// SHA-256 hex of `body`.
    pub fingerprint: String,
    /// Attempts sent so far.
    pub attempts: u32,
    /// When the operation was created (ms, the caller's clock); the retry window counts from here.
    pub created_at: u64,
    /// Pending, or given up on with an unknown outcome.
    pub state: RecordState,
}

impl Record {
    /// The format a record in `state` is written in: [`KEY_EXPIRED_FORMAT_VERSION`] for an
    /// unknown outcome the server refused as expired, else [`FORMAT_VERSION`].
    pub fn format_for(state: &RecordState) -> u32 {
        match state {
            RecordState::Unknown {
                last_error: Some(Failure::KeyExpired),
            } => KEY_EXPIRED_FORMAT_VERSION,
            _ => FORMAT_VERSION,
        }
    }
}

/// Where an open operation stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum RecordState {
    /// Attempts may still be (or are being) sent.
    Pending,
    /// The retry window closed without a final answer; kept so the caller can reconcile.
    Unknown {
        /// The last failure seen.
        last_error: Option<Failure>,
    },
}

/// An operation that got its final answer: its key and fingerprint, kept until `expires_at` so
/// that a duplicate submit of the same payload re-sends under the same key (the server replays
/// its saved answer) and a different payload under the name is refused. The payload body and
/// the response are not kept: no personal data lingers in storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettledRecord {
    /// Format version ([`SETTLED_FORMAT_VERSION`] when written by this crate).
    pub version: u32,
    /// The operation's name.
    pub name: String,
    /// The idempotency key the final answer came under.
    pub key: Uuid,
    /// The HTTP method.
    pub method: Method,
    /// SHA-256 hex of the canonical payload.
    pub fingerprint: String,
    /// Attempts sent under this key in total.
    pub attempts: u32,
    /// When the operation was created (ms).
    pub created_at: u64,
    /// When the final answer arrived (ms).
    pub settled_at: u64,
    /// Until when (ms, exclusive) the key is reused: `created_at` plus the retry window, which
    /// must not outlive the server's retention, or a re-send would find no record and run the
    /// work again.
    pub expires_at: u64,
    /// The final answer's HTTP status (2xx, or the rejection's 4xx).
    pub status: u16,
}

impl SettledRecord {
    /// Whether the key is still reused at `now`.
    pub fn is_live(&self, now: u64) -> bool {
        now < self.expires_at
    }
}

/// Everything the journal can hold under one name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// An operation still pending, or given up on as unknown.
    Open(Record),
    /// An operation that got its final answer (kept until it expires).
    Settled(SettledRecord),
}

impl Entry {
    /// The key stored in the entry.
    pub fn key(&self) -> Uuid {
        match self {
            Entry::Open(record) => record.key,
            Entry::Settled(settled) => settled.key,
        }
    }

    /// Whether the entry describes a request with this method and payload fingerprint: the
    /// one test of "the same operation" that start, confirmation and the bindings share.
    pub fn is_same_request(&self, method: Method, fingerprint: &str) -> bool {
        let (m, f) = match self {
            Entry::Open(record) => (record.method, record.fingerprint.as_str()),
            Entry::Settled(settled) => (settled.method, settled.fingerprint.as_str()),
        };
        m == method && f == fingerprint
    }
}
