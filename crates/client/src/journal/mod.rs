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
use uuid::Uuid;

use crate::json::{u64_string, Json};
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalError {
    /// Storage cannot be reached at all (e.g. `SecurityError`: storage blocked, no window).
    Unavailable(String),
    /// The write did not fit (`QuotaExceededError`).
    QuotaExceeded,
    /// Any other write failure.
    Write(String),
    /// The value under this name is not a record of ours (corrupt, or written by someone else).
    Corrupt {
        /// The operation name.
        name: String,
    },
    /// The record was written by a newer format version than this crate understands.
    UnsupportedVersion {
        /// The operation name.
        name: String,
        /// The version found.
        found: u32,
    },
    /// The record has an older format version and lacks what a migration needs (key and body).
    Outdated {
        /// The operation name.
        name: String,
        /// The version found.
        found: u32,
    },
}

impl JournalError {
    /// The error in words (what `Display` writes; built without `core::fmt`, which the browser
    /// package avoids).
    pub fn message(&self) -> String {
        match self {
            JournalError::Unavailable(why) => ["storage unavailable: ", why].concat(),
            JournalError::QuotaExceeded => "storage quota exceeded".to_owned(),
            JournalError::Write(why) => ["storage write failed: ", why].concat(),
            JournalError::Corrupt { name } => ["record ", name, " is corrupt or foreign"].concat(),
            JournalError::UnsupportedVersion { name, found } => [
                "record ",
                name,
                " has format version ",
                &u64_string(u64::from(*found)),
                ", newer than ",
                &u64_string(u64::from(FORMAT_VERSION)),
            ]
            .concat(),
            JournalError::Outdated { name, found } => [
                "record ",
                name,
                " has old format version ",
                &u64_string(u64::from(*found)),
                " and cannot be migrated",
            ]
            .concat(),
        }
    }
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for JournalError {}

/// Serializes `record` as JSON text (the same bytes `serde_json::to_string` writes for it).
pub fn encode(record: &Record) -> String {
    use crate::json::{write_str, write_u64};
    let mut key = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let mut out = String::with_capacity(160 + record.name.len() + 2 * record.body.len());
    out.push_str("{\"version\":");
    write_u64(&mut out, u64::from(record.version));
    out.push_str(",\"name\":");
    write_str(&mut out, &record.name);
    out.push_str(",\"key\":\"");
    out.push_str(record.key.hyphenated().encode_lower(&mut key));
    out.push_str("\",\"method\":\"");
    out.push_str(record.method.as_str());
    out.push_str("\",\"body\":");
    write_str(&mut out, &record.body);
    out.push_str(",\"fingerprint\":");
    write_str(&mut out, &record.fingerprint);
    out.push_str(",\"attempts\":");
    write_u64(&mut out, u64::from(record.attempts));
    out.push_str(",\"createdAt\":");
    write_u64(&mut out, record.created_at);
    match &record.state {
        RecordState::Pending => out.push_str(",\"state\":{\"status\":\"pending\"}}"),
        RecordState::Unknown { last_error } => {
            // `last_error`, as serde wrote it (`rename_all` renames the variants, not their fields).
            out.push_str(",\"state\":{\"status\":\"unknown\",\"last_error\":");
            match last_error {
                None => out.push_str("null"),
                Some(Failure::Network { message }) => {
                    out.push_str("{\"type\":\"network\",\"message\":");
                    write_str(&mut out, message);
                    out.push('}');
                }
                Some(Failure::Timeout) => out.push_str("{\"type\":\"timeout\"}"),
                Some(Failure::Status { status }) => {
                    out.push_str("{\"type\":\"status\",\"status\":");
                    write_u64(&mut out, u64::from(*status));
                    out.push('}');
                }
            }
            out.push_str("}}");
        }
    }
    out
}

/// Parses the text stored under `name`, checking version, name and fingerprint.
///
/// - current version: parsed strictly (every field present with its type; unknown members are
///   ignored); a name or fingerprint that does not match is [`JournalError::Corrupt`];
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
    let value = Json::parse(text).ok_or_else(corrupt)?;
    if !value.is_object() {
        return Err(corrupt());
    }
    let version = match value.get("version") {
        // No version at all: an early record if it has a key and a body, else someone else's.
        None => return migrate(name, 0, &value).map_err(|_| corrupt()),
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
        return migrate(name, version, &value);
    }
    let record = strict(version, &value).ok_or_else(corrupt)?;
    if record.name != name || record.fingerprint != fingerprint(record.body.as_bytes()) {
        return Err(corrupt());
    }
    Ok(record)
}

/// A current-version record: every field present, with its type.
fn strict(version: u32, value: &Json) -> Option<Record> {
    let string = |field: &str| value.get(field)?.as_str().map(str::to_owned);
    let state = value.get("state")?;
    let state = match state.get("status")?.as_str()? {
        "pending" => RecordState::Pending,
        "unknown" => RecordState::Unknown {
            last_error: match state.get("last_error") {
                None | Some(Json::Null) => None,
                Some(failure) => Some(failure_from_json(failure)?),
            },
        },
        _ => return None,
    };
    Some(Record {
        version,
        name: string("name")?,
        key: Uuid::try_parse(value.get("key")?.as_str()?).ok()?,
        method: Method::from_name(value.get("method")?.as_str()?)?,
        body: string("body")?,
        fingerprint: string("fingerprint")?,
        attempts: u32::try_from(value.get("attempts")?.as_u64()?).ok()?,
        created_at: value.get("createdAt")?.as_u64()?,
        state,
    })
}

/// A [`Failure`] as `encode` writes it (`{"type":"network","message":...}`, ...).
fn failure_from_json(value: &Json) -> Option<Failure> {
    Some(match value.get("type")?.as_str()? {
        "network" => Failure::Network {
            message: value.get("message")?.as_str()?.to_owned(),
        },
        "timeout" => Failure::Timeout,
        "status" => Failure::Status {
            status: u16::try_from(value.get("status")?.as_u64()?).ok()?,
        },
        _ => return None,
    })
}

/// Reads a pre-version-1 record: whatever it was, its key and body are what matter.
fn migrate(name: &str, found: u32, object: &Json) -> Result<Record, JournalError> {
    let outdated = || JournalError::Outdated {
        name: name.to_owned(),
        found,
    };
    let key = object
        .get("key")
        .and_then(Json::as_str)
        .and_then(|k| Uuid::try_parse(k).ok())
        .ok_or_else(outdated)?;
    let body = object
        .get("body")
        .and_then(Json::as_str)
        .ok_or_else(outdated)?
        .to_owned();
    let number = |field: &str| object.get(field).and_then(Json::as_u64).unwrap_or(0);
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

    /// The decoder this crate had before its own JSON reader: serde_json, strictly typed.
    fn serde_decode(name: &str, text: &str) -> Result<Record, JournalError> {
        let corrupt = || JournalError::Corrupt {
            name: name.to_owned(),
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(|_| corrupt())?;
        let object = value.as_object().ok_or_else(corrupt)?;
        let version = match object.get("version") {
            None => {
                let key = object.get("key").and_then(|k| k.as_str());
                let body = object.get("body").and_then(|b| b.as_str());
                return match (key.and_then(|k| Uuid::parse_str(k).ok()), body) {
                    (Some(_), Some(_)) => decode(name, text), // the migration is shared
                    _ => Err(corrupt()),
                };
            }
            Some(v) => v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(corrupt)?,
        };
        if version != FORMAT_VERSION {
            return decode(name, text);
        }
        let record: Record = serde_json::from_value(value).map_err(|_| corrupt())?;
        if record.name != name || record.fingerprint != fingerprint(record.body.as_bytes()) {
            return Err(corrupt());
        }
        Ok(record)
    }

    fn records() -> Vec<Record> {
        let base = record();
        let mut out = vec![base.clone()];
        for last_error in [
            None,
            Some(Failure::Timeout),
            Some(Failure::Status { status: 503 }),
            Some(Failure::Network {
                message: "reset \"by\" peer\n\u{1}é😀".into(),
            }),
        ] {
            let mut r = base.clone();
            r.state = RecordState::Unknown { last_error };
            out.push(r);
        }
        let mut tricky = base.clone();
        tricky.name = "checkout:\"q\"\\/\t€😀".into();
        tricky.body = r#"{"a":"\u0000\"é","b":[1.5e300,-0]}"#.into();
        tricky.fingerprint = fingerprint(tricky.body.as_bytes());
        tricky.key = Uuid::from_u128(u128::MAX);
        tricky.method = Method::Delete;
        tricky.attempts = u32::MAX;
        tricky.created_at = u64::MAX;
        out.push(tricky);
        out
    }

    #[test]
    fn encode_writes_what_serde_json_wrote() {
        for r in records() {
            let ours = encode(&r);
            assert_eq!(ours, serde_json::to_string(&r).unwrap());
            assert_eq!(decode(&r.name, &ours), Ok(r.clone()));
        }
    }

    #[test]
    fn decode_agrees_with_serde_json() {
        let good = encode(&record());
        let key = Uuid::from_u128(7);
        let fp = fingerprint(br#"{"amount":1299}"#);
        let with = |extra: &str| good.replacen('{', &format!("{{{extra},"), 1);
        let mut texts: Vec<String> = records().iter().map(encode).collect();
        texts.extend([
            with(r#""extra":[1,{"x":null}]"#),
            with(r#""attempts":"2""#).replace(r#","attempts":2"#, ""),
            good.replace(r#""attempts":2"#, r#""attempts":4294967296"#),
            good.replace(r#""attempts":2"#, r#""attempts":2.0"#),
            good.replace(r#""attempts":2"#, r#""attempts":-1"#),
            good.replace(r#""createdAt":1000"#, r#""createdAt":1e3"#),
            good.replace(r#","createdAt":1000"#, ""),
            good.replace(r#""method":"POST""#, r#""method":"post""#),
            good.replace(r#""method":"POST""#, r#""method":"HEAD""#),
            good.replace(&key.to_string(), &key.simple().to_string()),
            good.replace(&key.to_string(), &key.braced().to_string()),
            good.replace(&key.to_string(), &key.urn().to_string()),
            good.replace(&key.to_string(), "not-a-uuid"),
            good.replace(r#"{"status":"pending"}"#, r#"{"status":"pending","x":1}"#),
            good.replace(r#"{"status":"pending"}"#, r#"{"status":"done"}"#),
            good.replace(r#"{"status":"pending"}"#, r#"{"status":"unknown"}"#),
            good.replace(
                r#"{"status":"pending"}"#,
                r#"{"status":"unknown","last_error":{"type":"status","status":70000}}"#,
            ),
            good.replace(
                r#"{"status":"pending"}"#,
                r#"{"status":"unknown","last_error":{"type":"network"}}"#,
            ),
            good.replace(
                r#"{"status":"pending"}"#,
                r#"{"status":"unknown","last_error":{"type":"other"}}"#,
            ),
            good.replace(r#"{"status":"pending"}"#, r#""pending""#),
            good.replace(
                r#"{"status":"pending"}"#,
                r#"{"status":"unknown","lastError":{"type":"timeout"}}"#,
            ),
            good.replace(r#""version":1"#, r#""version":1,"version":2"#),
            good.replace(r#""version":1"#, r#""version":2,"version":1"#),
            good.replace(r#""version":1"#, r#""version":"1""#),
            good.replace(r#""version":1"#, r#""version":0"#),
            good.replace(&fp, "0"),
            format!("  {good}\n"),
            format!("{good}x"),
            format!(r#"{{"key":"{key}","body":"x"}}"#),
            format!(r#"{{"key":"{key}"}}"#),
            "[]".into(),
            "null".into(),
        ]);
        for text in &texts {
            assert_eq!(
                decode("checkout:cart-42", text),
                serde_decode("checkout:cart-42", text),
                "{text}"
            );
        }
    }
}
