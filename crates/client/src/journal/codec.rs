//! The stored text of journal entries: one JSON object per name, written by [`encode`] /
//! [`encode_settled`] and read back by [`decode_entry`], whatever the storage.
//!
//! | `version` | `state.status` | what it is |
//! |---|---|---|
//! | none, or 0 | — | an early record: migrated when it has a `key` and a `body` |
//! | 1 | `pending`, `unknown` | an open [`Record`] (key, canonical body, fingerprint, attempts) |
//! | 2 | `settled` | a [`SettledRecord`]: key and fingerprint, no body |
//! | 3 | `unknown` | an open record as in format 1 whose `last_error` is `{"type":"keyExpired"}` (the server's 412: the key expired) |
//! | 4 and above | — | [`JournalError::UnsupportedVersion`], left untouched |

use uuid::Uuid;

use super::error::JournalError;
use super::record::{
    Entry, Record, RecordState, SettledRecord, FORMAT_VERSION, KEY_EXPIRED_FORMAT_VERSION,
    SETTLED_FORMAT_VERSION,
};
use crate::digest::sha256_hex;
use crate::json::{write_str, write_u64};
use crate::method::Method;
use crate::outcome::Failure;
use crate::Json;

/// Serializes `record` as JSON text (the same bytes `serde_json::to_string` writes for it).
pub fn encode(record: &Record) -> String {
    let mut out = String::with_capacity(160 + record.name.len() + 2 * record.body.len());
    out.push_str("{\"version\":");
    write_u64(&mut out, u64::from(record.version));
    write_identity(&mut out, &record.name, record.key, record.method);
    out.push_str(",\"body\":");
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
                Some(Failure::KeyExpired) => out.push_str("{\"type\":\"keyExpired\"}"),
            }
            out.push_str("}}");
        }
    }
    out
}

/// Serializes a settled entry:
/// `{"version":2,"name":..,"key":..,"method":..,"fingerprint":..,"attempts":..,"createdAt":..,
/// "settledAt":..,"expiresAt":..,"state":{"status":"settled","httpStatus":201}}`.
pub fn encode_settled(settled: &SettledRecord) -> String {
    let mut out = String::with_capacity(300 + settled.name.len());
    out.push_str("{\"version\":");
    write_u64(&mut out, u64::from(settled.version));
    write_identity(&mut out, &settled.name, settled.key, settled.method);
    out.push_str(",\"fingerprint\":");
    write_str(&mut out, &settled.fingerprint);
    for (member, value) in [
        (",\"attempts\":", u64::from(settled.attempts)),
        (",\"createdAt\":", settled.created_at),
        (",\"settledAt\":", settled.settled_at),
        (",\"expiresAt\":", settled.expires_at),
    ] {
        out.push_str(member);
        write_u64(&mut out, value);
    }
    out.push_str(",\"state\":{\"status\":\"settled\",\"httpStatus\":");
    write_u64(&mut out, u64::from(settled.status));
    out.push_str("}}");
    out
}

/// `,"name":..,"key":..,"method":..`, the members every entry starts with.
fn write_identity(out: &mut String, name: &str, key: Uuid, method: Method) {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    out.push_str(",\"name\":");
    write_str(out, name);
    out.push_str(",\"key\":\"");
    out.push_str(key.hyphenated().encode_lower(&mut buf));
    out.push_str("\",\"method\":\"");
    out.push_str(method.as_str());
    out.push('"');
}

/// Parses the text stored under `name`, checking version, name and fingerprint.
///
/// - format 1: an open record, parsed strictly (every field present with its type; unknown
///   members are ignored); a name or fingerprint that does not match is
///   [`JournalError::Corrupt`];
/// - format 3: an open record as format 1 (its `last_error` may be `keyExpired`);
/// - format 2: a settled entry, parsed as strictly (`state.status` must be `settled`, the
///   fingerprint 64 lowercase hex digits);
/// - older version (or none): migrated when it has a `key` (UUID) and a `body` (string): the
///   fingerprint is recomputed, missing `attempts` / `createdAt` become 0, the method POST;
///   otherwise [`JournalError::Outdated`] (or [`JournalError::Corrupt`] when there is no
///   version at all: then it is most likely not ours);
/// - newer version: [`JournalError::UnsupportedVersion`];
/// - anything else (not JSON, not an object, wrong types): [`JournalError::Corrupt`].
pub fn decode_entry(name: &str, text: &str) -> Result<Entry, JournalError> {
    let corrupt = || JournalError::Corrupt {
        name: name.to_owned(),
    };
    let value = Json::parse(text).ok_or_else(corrupt)?;
    if !value.is_object() {
        return Err(corrupt());
    }
    let version = match value.get("version") {
        // No version at all: an early record if it has a key and a body, else someone else's.
        None => {
            return migrate(name, 0, &value)
                .map(Entry::Open)
                .map_err(|_| corrupt())
        }
        Some(v) => v
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(corrupt)?,
    };
    match version {
        v if v > KEY_EXPIRED_FORMAT_VERSION => Err(JournalError::UnsupportedVersion {
            name: name.to_owned(),
            found: v,
        }),
        SETTLED_FORMAT_VERSION => {
            let settled = settled_strict(version, &value).ok_or_else(corrupt)?;
            if settled.name != name || !is_fingerprint(&settled.fingerprint) {
                return Err(corrupt());
            }
            Ok(Entry::Settled(settled))
        }
        FORMAT_VERSION | KEY_EXPIRED_FORMAT_VERSION => {
            let record = strict(version, &value).ok_or_else(corrupt)?;
            if record.name != name || record.fingerprint != sha256_hex(record.body.as_bytes()) {
                return Err(corrupt());
            }
            Ok(Entry::Open(record))
        }
        older => migrate(name, older, &value).map(Entry::Open),
    }
}

/// Parses the open record stored under `name` (see [`decode_entry`]). A settled entry is
/// [`JournalError::UnsupportedVersion`] here, as it is for a reader of format 1 only.
pub fn decode(name: &str, text: &str) -> Result<Record, JournalError> {
    match decode_entry(name, text)? {
        Entry::Open(record) => Ok(record),
        Entry::Settled(settled) => Err(JournalError::UnsupportedVersion {
            name: name.to_owned(),
            found: settled.version,
        }),
    }
}

/// The members every entry of format 1 to 3 has, each present with its type: name, key,
/// method, fingerprint, attempts, createdAt (read once for both kinds of entry).
struct Identity {
    name: String,
    key: Uuid,
    method: Method,
    fingerprint: String,
    attempts: u32,
    created_at: u64,
}

fn identity(value: &Json) -> Option<Identity> {
    let text = |field: &str| value.get(field)?.as_str();
    Some(Identity {
        name: text("name")?.to_owned(),
        key: Uuid::try_parse(text("key")?).ok()?,
        method: Method::from_name(text("method")?)?,
        fingerprint: text("fingerprint")?.to_owned(),
        attempts: u32::try_from(value.get("attempts")?.as_u64()?).ok()?,
        created_at: value.get("createdAt")?.as_u64()?,
    })
}

/// A format-1 record: every field present, with its type.
fn strict(version: u32, value: &Json) -> Option<Record> {
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
    let body = value.get("body")?.as_str()?.to_owned();
    let id = identity(value)?;
    Some(Record {
        version,
        name: id.name,
        key: id.key,
        method: id.method,
        body,
        fingerprint: id.fingerprint,
        attempts: id.attempts,
        created_at: id.created_at,
        state,
    })
}

/// A format-2 settled entry: every field present, with its type.
fn settled_strict(version: u32, value: &Json) -> Option<SettledRecord> {
    let number = |field: &str| value.get(field)?.as_u64();
    let state = value.get("state")?;
    if state.get("status")?.as_str()? != "settled" {
        return None;
    }
    let status = u16::try_from(state.get("httpStatus")?.as_u64()?).ok()?;
    let (settled_at, expires_at) = (number("settledAt")?, number("expiresAt")?);
    let id = identity(value)?;
    Some(SettledRecord {
        version,
        name: id.name,
        key: id.key,
        method: id.method,
        fingerprint: id.fingerprint,
        attempts: id.attempts,
        created_at: id.created_at,
        settled_at,
        expires_at,
        status,
    })
}

/// Whether `text` looks like a SHA-256 as [`sha256_hex`] writes it: 64 lowercase hex digits.
fn is_fingerprint(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
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
        "keyExpired" => Failure::KeyExpired,
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
        fingerprint: sha256_hex(body.as_bytes()),
        body,
        attempts: u32::try_from(number("attempts")).unwrap_or(u32::MAX),
        created_at: number("createdAt"),
        state: RecordState::Pending,
    })
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::digest::sha256_hex as fingerprint;

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

    fn settled() -> SettledRecord {
        SettledRecord {
            version: SETTLED_FORMAT_VERSION,
            name: "checkout:cart-42".into(),
            key: Uuid::from_u128(7),
            method: Method::Post,
            fingerprint: fingerprint(br#"{"amount":1299}"#),
            attempts: 3,
            created_at: 1000,
            settled_at: 1500,
            expires_at: 86_401_000,
            status: 201,
        }
    }

    #[test]
    fn round_trip() {
        let r = record();
        assert_eq!(decode(&r.name, &encode(&r)), Ok(r.clone()));
        assert_eq!(decode_entry(&r.name, &encode(&r)), Ok(Entry::Open(r)));
        let s = settled();
        assert_eq!(
            decode_entry(&s.name, &encode_settled(&s)),
            Ok(Entry::Settled(s))
        );
    }

    #[test]
    fn settled_entries_keep_no_body() {
        let text = encode_settled(&settled());
        assert!(!text.contains("body"), "{text}");
        assert!(!text.contains("amount"), "{text}");
        // The open-record reader reports it as a format it does not read, as format-1 readers do.
        assert_eq!(
            decode("checkout:cart-42", &text),
            Err(JournalError::UnsupportedVersion {
                name: "checkout:cart-42".into(),
                found: SETTLED_FORMAT_VERSION
            })
        );
    }

    #[test]
    fn corrupt_and_foreign_values() {
        for text in [
            "",
            "not json",
            "[1,2]",
            "42",
            r#"{"version":1,"name":"x"}"#,
            r#"{"version":2,"name":"x"}"#,
            r#"{"someone":"else"}"#,
        ] {
            assert_eq!(
                decode_entry("checkout:cart-42", text),
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
        assert!(matches!(
            decode_entry("other", &encode_settled(&settled())),
            Err(JournalError::Corrupt { .. })
        ));
        // A tampered body no longer matches its fingerprint.
        let mut r = record();
        r.body = r#"{"amount":1}"#.into();
        assert!(matches!(
            decode(&r.name, &encode(&r)),
            Err(JournalError::Corrupt { .. })
        ));
        // A settled fingerprint that is not a SHA-256 in hex.
        let mut s = settled();
        s.fingerprint = s.fingerprint.to_uppercase();
        assert!(matches!(
            decode_entry(&s.name, &encode_settled(&s)),
            Err(JournalError::Corrupt { .. })
        ));
    }

    #[test]
    fn newer_version_is_reported_not_read() {
        let mut r = record();
        r.version = KEY_EXPIRED_FORMAT_VERSION + 1;
        assert_eq!(
            decode_entry(&r.name, &encode(&r)),
            Err(JournalError::UnsupportedVersion {
                name: r.name.clone(),
                found: 4
            })
        );
    }

    #[test]
    fn a_key_expired_record_is_format_3_and_every_other_open_record_format_1() {
        let mut r = record();
        assert_eq!(Record::format_for(&r.state), FORMAT_VERSION);
        r.state = RecordState::Unknown {
            last_error: Some(Failure::Timeout),
        };
        assert_eq!(Record::format_for(&r.state), FORMAT_VERSION);
        r.state = RecordState::Unknown {
            last_error: Some(Failure::KeyExpired),
        };
        r.version = Record::format_for(&r.state);
        assert_eq!(r.version, KEY_EXPIRED_FORMAT_VERSION);
        let text = encode(&r);
        assert!(
            text.contains(r#""version":3"#) && text.contains(r#"{"type":"keyExpired"}"#),
            "{text}"
        );
        assert_eq!(decode(&r.name, &text), Ok(r));
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

    /// SHA-256 hex through sha2's own `LowerHex`, not the crate's `digest::sha256_hex` (imported as `fingerprint`).
    fn sha256_hex(bytes: &[u8]) -> String {
        format!("{:x}", Sha256::digest(bytes))
    }

    /// A settled entry's text as serde sees it (the shape `encode_settled` writes).
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct SettledText {
        version: u32,
        name: String,
        key: Uuid,
        method: Method,
        fingerprint: String,
        attempts: u32,
        created_at: u64,
        settled_at: u64,
        expires_at: u64,
        state: SettledStateText,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(tag = "status", rename_all = "camelCase")]
    enum SettledStateText {
        Settled {
            #[serde(rename = "httpStatus")]
            http_status: u16,
        },
    }

    impl From<&SettledRecord> for SettledText {
        fn from(s: &SettledRecord) -> Self {
            SettledText {
                version: s.version,
                name: s.name.clone(),
                key: s.key,
                method: s.method,
                fingerprint: s.fingerprint.clone(),
                attempts: s.attempts,
                created_at: s.created_at,
                settled_at: s.settled_at,
                expires_at: s.expires_at,
                state: SettledStateText::Settled {
                    http_status: s.status,
                },
            }
        }
    }

    /// An independent reading of every rule of [`decode_entry`], written with serde_json (the
    /// decoder this crate had before its own JSON reader) and sha2's hex: it never calls the
    /// code under test, so migration and version rules are checked too, not only format 1.
    fn reference_decode(name: &str, text: &str) -> Result<Entry, JournalError> {
        use serde_json::Value;
        let corrupt = || JournalError::Corrupt {
            name: name.to_owned(),
        };
        let value: Value = serde_json::from_str(text).map_err(|_| corrupt())?;
        let object = value.as_object().ok_or_else(corrupt)?;
        // Before format 1: the key and the body are what matter; the rest defaults.
        let legacy = |found: u32| -> Result<Entry, JournalError> {
            let outdated = || JournalError::Outdated {
                name: name.to_owned(),
                found,
            };
            let key = object
                .get("key")
                .and_then(Value::as_str)
                .and_then(|k| Uuid::parse_str(k).ok())
                .ok_or_else(outdated)?;
            let body = object
                .get("body")
                .and_then(Value::as_str)
                .ok_or_else(outdated)?;
            let number = |field: &str| object.get(field).and_then(Value::as_u64).unwrap_or(0);
            Ok(Entry::Open(Record {
                version: 1,
                name: name.to_owned(),
                key,
                method: Method::Post,
                body: body.to_owned(),
                fingerprint: sha256_hex(body.as_bytes()),
                attempts: u32::try_from(number("attempts")).unwrap_or(u32::MAX),
                created_at: number("createdAt"),
                state: RecordState::Pending,
            }))
        };
        let version = match object.get("version") {
            None => return legacy(0).map_err(|_| corrupt()),
            Some(v) => v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(corrupt)?,
        };
        match version {
            0 => legacy(0),
            1 | 3 => {
                let record: Record =
                    serde_json::from_value(value.clone()).map_err(|_| corrupt())?;
                if record.name != name || record.fingerprint != sha256_hex(record.body.as_bytes()) {
                    return Err(corrupt());
                }
                Ok(Entry::Open(record))
            }
            2 => {
                let s: SettledText =
                    serde_json::from_value(value.clone()).map_err(|_| corrupt())?;
                let hex = s.fingerprint.len() == 64
                    && s.fingerprint
                        .chars()
                        .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
                if s.name != name || !hex {
                    return Err(corrupt());
                }
                let SettledStateText::Settled { http_status } = s.state;
                Ok(Entry::Settled(SettledRecord {
                    version: s.version,
                    name: s.name,
                    key: s.key,
                    method: s.method,
                    fingerprint: s.fingerprint,
                    attempts: s.attempts,
                    created_at: s.created_at,
                    settled_at: s.settled_at,
                    expires_at: s.expires_at,
                    status: http_status,
                }))
            }
            found => Err(JournalError::UnsupportedVersion {
                name: name.to_owned(),
                found,
            }),
        }
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
            Some(Failure::KeyExpired),
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

    fn settled_records() -> Vec<SettledRecord> {
        let mut tricky = settled();
        tricky.name = "checkout:\"q\"\\/\t€😀".into();
        tricky.key = Uuid::from_u128(u128::MAX);
        tricky.method = Method::Patch;
        tricky.attempts = u32::MAX;
        (tricky.created_at, tricky.settled_at, tricky.expires_at) = (u64::MAX, u64::MAX, u64::MAX);
        tricky.status = 422;
        vec![settled(), tricky]
    }

    #[test]
    fn encode_writes_what_serde_json_wrote() {
        for r in records() {
            let ours = encode(&r);
            assert_eq!(ours, serde_json::to_string(&r).unwrap());
            assert_eq!(decode(&r.name, &ours), Ok(r.clone()));
        }
        for s in settled_records() {
            let ours = encode_settled(&s);
            assert_eq!(ours, serde_json::to_string(&SettledText::from(&s)).unwrap());
            assert_eq!(decode_entry(&s.name, &ours), Ok(Entry::Settled(s.clone())));
        }
    }

    /// Texts around each format: members added, removed, retyped, duplicated, renamed.
    fn variations() -> Vec<String> {
        let good = encode(&record());
        let settled_text = encode_settled(&settled());
        let key = Uuid::from_u128(7);
        let fp = fingerprint(br#"{"amount":1299}"#);
        let with = |text: &str, extra: &str| text.replacen('{', &format!("{{{extra},"), 1);
        let mut texts: Vec<String> = records().iter().map(encode).collect();
        texts.extend(settled_records().iter().map(encode_settled));
        texts.extend([
            with(&good, r#""extra":[1,{"x":null}]"#),
            with(&good, r#""attempts":"2""#).replace(r#","attempts":2"#, ""),
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
            good.replace(r#"{"status":"pending"}"#, r#"{"status":"settled"}"#),
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
            good.replace(r#""version":1"#, r#""version":2"#),
            good.replace(r#""version":1"#, r#""version":3"#),
            good.replace(r#""version":1"#, r#""version":4"#),
            good.replace(r#""version":1"#, r#""version":4294967296"#),
            good.replace(&fp, "0"),
            format!("  {good}\n"),
            format!("{good}x"),
            // Settled entries: each member missing or mistyped, the state renamed.
            settled_text.replace(r#""version":2"#, r#""version":1"#),
            settled_text.replace(r#""version":2"#, r#""version":0"#),
            settled_text.replace(r#""settled""#, r#""pending""#),
            settled_text.replace(r#","httpStatus":201"#, ""),
            settled_text.replace(r#""httpStatus":201"#, r#""httpStatus":70000"#),
            settled_text.replace(r#""httpStatus":201"#, r#""httpStatus":"201""#),
            settled_text.replace(r#","expiresAt":86401000"#, ""),
            settled_text.replace(r#""settledAt":1500"#, r#""settledAt":1.5e3"#),
            settled_text.replace(r#","attempts":3"#, ""),
            settled_text.replace(&fp, &fp[..63]),
            settled_text.replace(&fp, &format!("{}g", &fp[..63])),
            settled_text.replace(&key.to_string(), &key.braced().to_string()),
            with(&settled_text, r#""body":"{}""#),
            // Before format 1: migrated with defaults, or outdated, or (no version) foreign.
            format!(r#"{{"key":"{key}","body":"x"}}"#),
            format!(r#"{{"key":"{key}","body":"x","attempts":5,"createdAt":9}}"#),
            format!(r#"{{"key":"{key}","body":"x","attempts":"5","createdAt":-1}}"#),
            format!(r#"{{"key":"{key}","body":"x","attempts":4294967296}}"#),
            format!(r#"{{"key":"{key}","body":"x","attempts":2.0,"method":"PUT"}}"#),
            format!(r#"{{"key":"{}","body":"x"}}"#, key.simple()),
            format!(r#"{{"key":"{key}","body":7}}"#),
            format!(r#"{{"key":"{key}"}}"#),
            format!(r#"{{"version":0,"key":"{key}","body":"{{\"a\":1}}","attempts":3}}"#),
            format!(r#"{{"version":0,"key":"{key}","body":"y","state":{{"status":"unknown"}}}}"#),
            r#"{"version":0,"key":"bad","body":"y"}"#.into(),
            r#"{"version":0,"token":"abc"}"#.into(),
            r#"{"version":0}"#.into(),
            "[]".into(),
            "null".into(),
        ]);
        texts
    }

    #[test]
    fn decode_agrees_with_serde_json() {
        for text in variations() {
            assert_eq!(
                decode_entry("checkout:cart-42", &text),
                reference_decode("checkout:cart-42", &text),
                "{text}"
            );
        }
    }

    #[test]
    fn the_variations_reach_every_kind_of_answer() {
        // So the agreement above is not vacuous: each outcome of the reader occurs.
        let answers: Vec<_> = variations()
            .iter()
            .map(|t| decode_entry("checkout:cart-42", t))
            .collect();
        let migrated = |e: &Result<Entry, JournalError>| matches!(e, Ok(Entry::Open(r)) if r.state == RecordState::Pending && r.attempts != 2);
        assert!(answers.iter().any(|a| matches!(a, Ok(Entry::Open(_)))));
        assert!(answers.iter().any(|a| matches!(a, Ok(Entry::Settled(_)))));
        assert!(answers.iter().any(migrated));
        for error in [
            JournalError::Corrupt {
                name: "checkout:cart-42".into(),
            },
            JournalError::Outdated {
                name: "checkout:cart-42".into(),
                found: 0,
            },
            JournalError::UnsupportedVersion {
                name: "checkout:cart-42".into(),
                found: 4,
            },
        ] {
            assert!(answers.contains(&Err(error.clone())), "{error:?}");
        }
    }
}
