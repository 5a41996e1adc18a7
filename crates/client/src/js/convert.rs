//! Values crossing into JavaScript: outcomes, listings and errors as the plain objects the
//! TypeScript declarations (`typescript.rs`) describe, built with `Reflect` (no serde).

use js_sys::{Object, Reflect, JSON};
use wasm_bindgen::JsValue;

use crate::journal::{Entry, JournalError, Record, RecordState, SettledRecord};
use crate::operation::key_string;
use crate::{Durability, Failure, KeyState, Outcome, OutcomeKind, Problem, StartError};

/// `target[name] = value` on a fresh plain object (cannot fail).
pub(super) fn set(target: &Object, name: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(name), value);
}

/// `target[name] = value` for a string `value`: one call where each member was three (the
/// string's `JsValue`, the `set`, its drop).
#[inline(never)]
fn set_str(target: &Object, name: &str, value: &str) {
    set(target, name, &JsValue::from_str(value));
}

/// `target[name] = value` for a number (milliseconds since the epoch are exact as a double far
/// beyond any real date).
#[inline(never)]
fn set_number(target: &Object, name: &str, value: f64) {
    set(target, name, &JsValue::from_f64(value));
}

/// `Outcome` as the plain JS object of the TypeScript `Outcome` interface.
pub(super) fn outcome_object(outcome: &Outcome) -> Object {
    let js = Object::new();
    set_str(&js, "name", &outcome.name);
    set_str(&js, "kind", outcome.kind.name());
    match &outcome.kind {
        OutcomeKind::Succeeded { status, body } | OutcomeKind::Replayed { status, body } => {
            set_number(&js, "status", f64::from(*status));
            set(&js, "body", &body_value(body));
        }
        OutcomeKind::Rejected {
            status,
            body,
            problem,
        } => {
            set_number(&js, "status", f64::from(*status));
            set(&js, "body", &body_value(body));
            if let Some(problem) = problem {
                set(&js, "problem", &problem_object(problem));
            }
        }
        OutcomeKind::Unknown { .. } => {}
    }
    let key = match &outcome.key {
        Some(key) => JsValue::from_str(key),
        None => JsValue::NULL,
    };
    set(&js, "key", &key);
    set_number(&js, "attempts", f64::from(outcome.attempts));
    let durability = match outcome.durability {
        Durability::Journaled => "journaled",
        Durability::MemoryOnly => "memoryOnly",
        Durability::Unkeyed => "unkeyed",
    };
    set_str(&js, "durability", durability);
    if let OutcomeKind::Unknown { last_error } = &outcome.kind {
        // None with attempts sent: a record resumed after a reload, whose failures were not kept.
        match last_error {
            Some(failure) => set_str(&js, "lastError", &failure.message()),
            None if outcome.attempts == 0 => set_str(&js, "lastError", "no attempt sent"),
            None => {}
        }
    }
    js
}

/// An outcome reconciled from the server's key `state`, as the TypeScript `Reconciliation`:
/// the outcome's members, `reconciled`, and the lease's age and time left when in flight.
pub(super) fn reconciliation_object(outcome: &Outcome, state: &KeyState) -> Object {
    let js = outcome_object(outcome);
    let how = match state {
        KeyState::Done { .. } => "done",
        KeyState::InFlight {
            lease_age_ms,
            lease_left_ms,
        } => {
            set_number(&js, "leaseAgeMs", *lease_age_ms as f64);
            set_number(&js, "leaseLeftMs", *lease_left_ms as f64);
            "inFlight"
        }
        KeyState::Released => "released",
        // No record of the key, and the server refused to run it again as expired: say so,
        // so the page checks with the business instead of resuming (which is refused again).
        KeyState::NotFound
            if matches!(
                outcome.kind,
                OutcomeKind::Unknown {
                    last_error: Some(Failure::KeyExpired)
                }
            ) =>
        {
            "keyExpired"
        }
        KeyState::NotFound => "notFound",
        KeyState::BoundToAnotherRequest => "anotherRequest",
    };
    set_str(&js, "reconciled", how);
    js
}

/// RFC 9457 problem details as a plain object (absent members left out).
fn problem_object(problem: &Problem) -> Object {
    let js = Object::new();
    let text = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            set_str(&js, name, value);
        }
    };
    text("type", &problem.kind);
    text("title", &problem.title);
    if let Some(status) = problem.status {
        set_number(&js, "status", f64::from(status));
    }
    text("detail", &problem.detail);
    js
}

/// A record as the TypeScript `PendingOperation`.
pub(super) fn pending_object(name: &str, record: Result<Record, JournalError>) -> Object {
    let js = Object::new();
    set_str(&js, "name", name);
    match record {
        Ok(record) => {
            set_str(&js, "key", &key_string(record.key));
            set_number(&js, "attempts", f64::from(record.attempts));
            set_number(&js, "createdAt", record.created_at as f64);
            let status = match record.state {
                RecordState::Pending => "pending",
                RecordState::Unknown { .. } => "unknown",
            };
            set_str(&js, "status", status);
            set(&js, "payload", &body_value(record.body.as_bytes()));
        }
        Err(e) => set_str(&js, "error", &e.message()),
    }
    js
}

/// A settled entry as the TypeScript `SettledOperation`.
pub(super) fn settled_object(settled: &SettledRecord) -> Object {
    let js = Object::new();
    set_str(&js, "name", &settled.name);
    set_str(&js, "key", &key_string(settled.key));
    set_number(&js, "status", f64::from(settled.status));
    set_number(&js, "attempts", f64::from(settled.attempts));
    set_number(&js, "createdAt", settled.created_at as f64);
    set_number(&js, "settledAt", settled.settled_at as f64);
    set_number(&js, "expiresAt", settled.expires_at as f64);
    js
}

/// An entry change from the `storage` event as the TypeScript `JournalChange`.
pub(super) fn change_object(name: &str, entry: Option<Result<Entry, JournalError>>) -> Object {
    let js = Object::new();
    set_str(&js, "name", name);
    let (record, settled) = match entry {
        None => (JsValue::NULL, JsValue::NULL),
        Some(Ok(Entry::Settled(s))) => (JsValue::NULL, settled_object(&s).into()),
        Some(Ok(Entry::Open(r))) => (pending_object(name, Ok(r)).into(), JsValue::NULL),
        Some(Err(e)) => (pending_object(name, Err(e)).into(), JsValue::NULL),
    };
    set(&js, "record", &record);
    set(&js, "settled", &settled);
    js
}

/// A body as JSON when it parses (`JSON.parse`), else as text.
fn body_value(body: &[u8]) -> JsValue {
    match core::str::from_utf8(body) {
        Ok(text) => JSON::parse(text).unwrap_or_else(|_| JsValue::from_str(text)),
        Err(_) => JsValue::from_str(&lossy(body)),
    }
}

/// `bytes` as text with each invalid sequence replaced by U+FFFD, as
/// `String::from_utf8_lossy` does, from the positions `str::from_utf8` reports (already in the
/// package; the `Utf8Chunks` iterator behind `from_utf8_lossy` is not).
fn lossy(mut bytes: &[u8]) -> String {
    let mut text = String::new();
    loop {
        match core::str::from_utf8(bytes) {
            Ok(valid) => {
                text.push_str(valid);
                return text;
            }
            Err(e) => {
                let (valid, rest) = bytes.split_at_checked(e.valid_up_to()).unwrap_or_default();
                text.push_str(core::str::from_utf8(valid).unwrap_or_default());
                text.push('\u{FFFD}');
                // `None`: the bytes end inside a sequence, which is one replacement too.
                match e.error_len() {
                    Some(len) => bytes = rest.get(len..).unwrap_or_default(),
                    None => return text,
                }
            }
        }
    }
}

/// An `Error` named `IdempotencyError` with a machine-readable `code`.
pub(super) fn error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // `name` set as any member (`error.name = ...`, what `Error::set_name` does), one import fewer.
    set_str(&error, "name", "IdempotencyError");
    set_str(&error, "code", code);
    error.into()
}

/// A journal that cannot be listed, as the `unavailable` error (one function every listing's
/// `map_err` shares, where a closure each was a copy each).
pub(super) fn unavailable(e: JournalError) -> JsValue {
    error("unavailable", &e.message())
}

pub(super) fn start_error(e: StartError) -> JsValue {
    let code = match &e {
        StartError::Payload(_) => "payload",
        StartError::PendingWithDifferentPayload { .. } => "pendingWithDifferentPayload",
        StartError::SettledWithDifferentPayload { .. } => "settledWithDifferentPayload",
        StartError::NotPersisted(_) => "notPersisted",
        StartError::Unreadable(_) => "unreadable",
    };
    error(code, &e.message())
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::lossy;

    #[test]
    fn invalid_utf8_is_replaced_as_from_utf8_lossy_does() {
        for bytes in [
            &b""[..],
            b"plain",
            b"caf\xc3\xa9",
            b"\xff",
            b"a\xffb\xfe",
            b"\xc3",
            b"ab\xe2\x82",
            b"\xe2\x82x\xf0\x9f\x98",
            b"\xed\xa0\x80 surrogate",
            b"\xf4\x90\x80\x80 past U+10FFFF",
            b"\xc0\xaf overlong",
            b"\x80\x80\x80",
            "\u{1F600} ok".as_bytes(),
        ] {
            assert_eq!(lossy(bytes), String::from_utf8_lossy(bytes), "{bytes:?}");
        }
    }
}
