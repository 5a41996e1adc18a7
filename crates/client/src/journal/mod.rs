//! Where an operation's key lives between attempts (and across reloads).
//!
//! A [`Journal`] maps an operation name to one [`Record`]: the key, the canonical payload bytes
//! and their fingerprint, the attempt count, the creation time and a format version. Records are
//! stored as JSON text (see [`encode`] / [`decode`]), so every implementation reads back the same
//! way and meets the same failures: corrupt or foreign text, and records of another format
//! version.

mod memory;

#[cfg(target_arch = "wasm32")]
pub mod local_storage;

pub use memory::MemoryJournal;

use serde::{Deserialize, Serialize};
use thiserror::Error;
use uuid::Uuid;

use crate::method::Method;
use crate::outcome::Failure;
use crate::payload::fingerprint;

/// The record format this crate writes. Older records are migrated on read when they carry a key
/// and a body; newer ones are left untouched and reported.
pub const FORMAT_VERSION: u32 = 1;

/// Durable storage of pending operations, one [`Record`] per operation name.
///
/// Object-safe, so a caller (the simulator) can hold a `Box<dyn Journal>` per client.
/// Implementations must never panic: every storage failure is a [`JournalError`].
///
/// ```
/// use idem_client::{Journal, MemoryJournal, Operation, OperationSpec, RetryPolicy};
/// use serde_json::json;
///
/// let mut journal: Box<dyn Journal> = Box::new(MemoryJournal::new());
/// let spec = OperationSpec::post("checkout:cart-42", json!({ "amount": 1299 }));
/// let op = Operation::start(spec, RetryPolicy::default(), 0, journal.as_mut(), &mut uuid::Uuid::new_v4)
///     .expect("memory journal accepts writes");
/// let record = journal.load("checkout:cart-42").unwrap().expect("persisted at start");
/// assert_eq!(Some(record.key), op.key());
/// assert_eq!(record.body, r#"{"amount":1299}"#);
/// ```
pub trait Journal {
    /// The record stored under `name`, if any.
    fn load(&self, name: &str) -> Result<Option<Record>, JournalError>;
    /// Writes `record` under `record.name`, replacing what was there.
    fn save(&mut self, record: &Record) -> Result<(), JournalError>;
    /// Removes the record under `name` (absent is fine).
    fn remove(&mut self, name: &str) -> Result<(), JournalError>;
    /// The names of all records (readable or not), in a stable order.
    fn names(&self) -> Result<Vec<String>, JournalError>;
}

/// Every record in `journal`, each read on its own so one unreadable record does not hide the
/// others.
pub fn pending(journal: &dyn Journal) -> Result<Vec<Result<Record, JournalError>>, JournalError> {
    let names = journal.names()?;
    Ok(names
        .into_iter()
        .filter_map(|name| journal.load(&name).transpose())
        .collect())
}

/// One operation's durable state.
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

/// Where a journaled operation stands.
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

/// A journal failure. None of them is a panic.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum JournalError {
    /// Storage cannot be reached at all (e.g. `SecurityError`: storage blocked, no window).
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The write did not fit (`QuotaExceededError`).
    #[error("storage quota exceeded")]
    QuotaExceeded,
    /// Any other write failure.
    #[error("storage write failed: {0}")]
    Write(String),
    /// The value under this name is not a record of ours (corrupt, or written by someone else).
    #[error("record {name} is corrupt or foreign")]
    Corrupt {
        /// The operation name.
        name: String,
    },
    /// The record was written by a newer format version than this crate understands.
    #[error("record {name} has format version {found}, newer than {FORMAT_VERSION}")]
    UnsupportedVersion {
        /// The operation name.
        name: String,
        /// The version found.
        found: u32,
    },
    /// The record has an older format version and lacks what a migration needs (key and body).
    #[error("record {name} has old format version {found} and cannot be migrated")]
    Outdated {
        /// The operation name.
        name: String,
        /// The version found.
        found: u32,
    },
}

/// Serializes `record` as JSON text.
pub fn encode(record: &Record) -> String {
    // Invariant: `Record` holds only strings, integers, a UUID and plain enums, which
    // serde_json always serializes; the fallback is unreachable.
    serde_json::to_string(record).unwrap_or_default()
}

/// Parses the text stored under `name`, checking version, name and fingerprint.
///
/// - current version: parsed strictly; a name or fingerprint that does not match is
///   [`JournalError::Corrupt`];
/// - older version (or none): migrated when it has a `key` (UUID) and a `body` (string): the
///   fingerprint is recomputed, missing `attempts` / `createdAt` become 0, the method POST;
///   otherwise [`JournalError::Outdated`] (or [`JournalError::Corrupt`] when there is no
///   version at all: then it is most likely not ours);
/// - newer version: [`JournalError::UnsupportedVersion`];
/// - anything else (not JSON, not an object, wrong types): [`JournalError::Corrupt`].
pub fn decode(name: &str, text: &str) -> Result<Record, JournalError> {
    let corrupt = || JournalError::Corrupt {
        name: name.to_owned(),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|_| corrupt())?;
    let object = value.as_object().ok_or_else(corrupt)?;
    let version = match object.get("version") {
        // No version at all: an early record if it has a key and a body, else someone else's.
        None => return migrate(name, 0, object).map_err(|_| corrupt()),
        Some(v) => v
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(corrupt)?,
    };
    if version > FORMAT_VERSION {
        return Err(JournalError::UnsupportedVersion {
            name: name.to_owned(),
            found: version,
        });
    }
    if version < FORMAT_VERSION {
        return migrate(name, version, object);
    }
    let record: Record = serde_json::from_value(value).map_err(|_| corrupt())?;
    if record.name != name || record.fingerprint != fingerprint(record.body.as_bytes()) {
        return Err(corrupt());
    }
    Ok(record)
}

/// Reads a pre-version-1 record: whatever it was, its key and body are what matter.
fn migrate(
    name: &str,
    found: u32,
    object: &serde_json::Map<String, serde_json::Value>,
) -> Result<Record, JournalError> {
    let outdated = || JournalError::Outdated {
        name: name.to_owned(),
        found,
    };
    let key = object
        .get("key")
        .and_then(|k| k.as_str())
        .and_then(|k| Uuid::parse_str(k).ok())
        .ok_or_else(outdated)?;
    let body = object
        .get("body")
        .and_then(|b| b.as_str())
        .ok_or_else(outdated)?
        .to_owned();
    let number = |field: &str| object.get(field).and_then(|v| v.as_u64()).unwrap_or(0);
    Ok(Record {
        version: FORMAT_VERSION,
        name: name.to_owned(),
        key,
        method: Method::Post,
        fingerprint: fingerprint(body.as_bytes()),
        body,
        attempts: u32::try_from(number("attempts")).unwrap_or(u32::MAX),
        created_at: number("createdAt"),
        state: RecordState::Pending,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        let body = r#"{"amount":1299}"#.to_owned();
        Record {
            version: FORMAT_VERSION,
            name: "checkout:cart-42".into(),
            key: Uuid::from_u128(7),
            method: Method::Post,
            fingerprint: fingerprint(body.as_bytes()),
            body,
            attempts: 2,
            created_at: 1000,
            state: RecordState::Pending,
        }
    }

    #[test]
    fn round_trip() {
        let r = record();
        assert_eq!(decode(&r.name, &encode(&r)), Ok(r));
    }

    #[test]
    fn corrupt_and_foreign_values() {
        for text in [
            "",
            "not json",
            "[1,2]",
            "42",
            r#"{"version":1,"name":"x"}"#,
            r#"{"someone":"else"}"#,
        ] {
            assert_eq!(
                decode("checkout:cart-42", text),
                Err(JournalError::Corrupt {
                    name: "checkout:cart-42".into()
                }),
                "{text:?}"
            );
        }
        // A record copied under another name is foreign too.
        assert!(matches!(
            decode("other", &encode(&record())),
            Err(JournalError::Corrupt { .. })
        ));
        // A tampered body no longer matches its fingerprint.
        let mut r = record();
        r.body = r#"{"amount":1}"#.into();
        assert!(matches!(
            decode(&r.name, &encode(&r)),
            Err(JournalError::Corrupt { .. })
        ));
    }

    #[test]
    fn newer_version_is_reported_not_read() {
        let mut r = record();
        r.version = FORMAT_VERSION + 1;
        assert_eq!(
            decode(&r.name, &encode(&r)),
            Err(JournalError::UnsupportedVersion {
                name: r.name.clone(),
                found: 2
            })
        );
    }

    #[test]
    fn older_version_migrates_when_key_and_body_are_there() {
        let key = Uuid::from_u128(9);
        let text = format!(r#"{{"version":0,"key":"{key}","body":"{{\"a\":1}}","attempts":3}}"#);
        let r = decode("n", &text).unwrap();
        assert_eq!(
            (r.key, r.body.as_str(), r.attempts, r.version),
            (key, r#"{"a":1}"#, 3, 1)
        );
        assert_eq!(r.fingerprint, fingerprint(br#"{"a":1}"#));
        assert_eq!(
            decode("n", r#"{"version":0,"token":"abc"}"#),
            Err(JournalError::Outdated {
                name: "n".into(),
                found: 0
            })
        );
    }
}
