//! The localStorage journal in real Chromium (`wasm-bindgen-test`, headless).
//!
//! Run: `CHROMEDRIVER=/usr/bin/chromedriver cargo test -p idem-client --target wasm32-unknown-unknown`
#![cfg(target_arch = "wasm32")]

mod common;

use idem_client::journal::local_storage::LocalStorageJournal;
use idem_client::journal::{
    self, encode, Entry, RecordState, KEY_EXPIRED_FORMAT_VERSION, SETTLED_FORMAT_VERSION,
};
use idem_client::{
    Action, CanonicalPayload, Durability, Journal, JournalError, Operation, OperationSpec,
    Persistence, RetryPolicy, StartError,
};
use serde_json::json;
use uuid::Uuid;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
use web_sys::Storage;

use common::rng::Zero;

wasm_bindgen_test_configure!(run_in_browser);

const NAME: &str = "checkout:cart-42";

fn storage() -> Storage {
    web_sys::window().unwrap().local_storage().unwrap().unwrap()
}

/// A journal under a prefix no other test uses, emptied first.
fn fresh(prefix: &str) -> LocalStorageJournal {
    let mut journal = LocalStorageJournal::new(prefix);
    for name in journal.names().unwrap() {
        journal.remove(&name).unwrap();
    }
    journal
}

fn spec() -> OperationSpec {
    OperationSpec::post(NAME, json!({ "amount": 1299, "currency": "EUR" }))
}

#[wasm_bindgen_test]
fn key_is_in_local_storage_before_the_first_send() {
    let mut journal = fresh("test-persist:");
    let mut op = Operation::start(
        spec(),
        RetryPolicy::default(),
        1,
        &mut journal,
        &mut Uuid::new_v4,
    )
    .unwrap();
    let key = op.key().unwrap();
    // Read the raw value, as a reloaded page would.
    let text = storage()
        .get_item(&format!("test-persist:{NAME}"))
        .unwrap()
        .expect("written by start");
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(raw["key"], json!(key.to_string()));
    assert_eq!(raw["body"], json!(r#"{"amount":1299,"currency":"EUR"}"#));
    assert_eq!(raw["version"], json!(1));
    assert_eq!(key.get_version_num(), 4);
    let Action::Send(attempt) = op.poll(1, &mut journal, &mut Zero) else {
        panic!("expected Send")
    };
    assert_eq!(attempt.key, Some(key));
    assert_eq!(journal.load(NAME).unwrap().unwrap().attempts, 1);
    // A reload: a new journal object over the same storage resumes the same key and bytes.
    let mut reloaded = LocalStorageJournal::new("test-persist:");
    let op2 = Operation::start(
        spec(),
        RetryPolicy::default(),
        99,
        &mut reloaded,
        &mut Uuid::new_v4,
    )
    .unwrap();
    assert_eq!((op2.key(), op2.attempts()), (Some(key), 1));
    reloaded.remove(NAME).unwrap();
}

#[wasm_bindgen_test]
fn quota_exceeded_means_no_send() {
    let mut journal = fresh("test-quota:");
    let storage = storage();
    // Fill localStorage: big chunks first, then smaller ones, until nothing fits.
    let mut fillers = Vec::new();
    let mut chunk = 1 << 20;
    while chunk >= 16 {
        let key = format!("test-fill:{}", fillers.len());
        if storage.set_item(&key, &"x".repeat(chunk)).is_ok() {
            fillers.push(key);
        } else {
            chunk /= 2;
        }
    }
    let result = Operation::start(
        spec(),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    );
    let memory_only = Operation::start(
        spec().with_persistence(Persistence::AllowMemoryOnly),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    );
    for key in &fillers {
        storage.remove_item(key).unwrap();
    }
    assert!(!fillers.is_empty());
    assert!(
        matches!(
            result,
            Err(StartError::NotPersisted(JournalError::QuotaExceeded))
        ),
        "{result:?}"
    );
    assert_eq!(journal.load(NAME).unwrap(), None);
    assert_eq!(memory_only.unwrap().durability(), Durability::MemoryOnly);
}

#[wasm_bindgen_test]
fn blocked_storage_means_no_send_unless_memory_only() {
    let blocked = || -> Result<Option<Storage>, JsValue> {
        let e = web_sys::DomException::new_with_message_and_name(
            "Access is denied for this document.",
            "SecurityError",
        )?;
        Err(e.into())
    };
    let mut journal = LocalStorageJournal::with_storage("test-blocked:", blocked);
    let result = Operation::start(
        spec(),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    );
    match result {
        Err(StartError::NotPersisted(JournalError::Unavailable(message))) => {
            assert!(message.starts_with("SecurityError"), "{message}")
        }
        other => panic!("expected NotPersisted(Unavailable), got {other:?}"),
    }
    assert!(matches!(journal.names(), Err(JournalError::Unavailable(_))));
    let memory_only = spec().with_persistence(Persistence::AllowMemoryOnly);
    let mut op = Operation::start(
        memory_only,
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    )
    .unwrap();
    assert_eq!(op.durability(), Durability::MemoryOnly);
    assert!(matches!(
        op.poll(0, &mut journal, &mut Zero),
        Action::Send(_)
    ));
    // `local_storage()` answering None (no storage at all) is the same failure.
    let mut none = LocalStorageJournal::with_storage("test-blocked:", || Ok(None));
    assert!(matches!(
        Operation::start(
            spec(),
            RetryPolicy::default(),
            0,
            &mut none,
            &mut Uuid::new_v4
        ),
        Err(StartError::NotPersisted(JournalError::Unavailable(_)))
    ));
}

#[wasm_bindgen_test]
fn a_corrupt_value_is_reported_and_left_alone() {
    let mut journal = fresh("test-corrupt:");
    let key = format!("test-corrupt:{NAME}");
    storage().set_item(&key, "{\"someone\":\"else\"}").unwrap();
    let result = Operation::start(
        spec(),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    );
    assert!(
        matches!(
            result,
            Err(StartError::Unreadable(JournalError::Corrupt { .. }))
        ),
        "{result:?}"
    );
    assert_eq!(
        storage().get_item(&key).unwrap().as_deref(),
        Some("{\"someone\":\"else\"}")
    );
    let listed = journal::pending(&journal).unwrap();
    assert_eq!(
        listed,
        vec![Err(JournalError::Corrupt { name: NAME.into() })]
    );
    journal.remove(NAME).unwrap();
}

#[wasm_bindgen_test]
fn an_old_version_is_migrated_and_a_newer_one_reported() {
    let mut journal = fresh("test-version:");
    let key = Uuid::from_u128(0x42);
    let old = format!(
        r#"{{"version":0,"key":"{key}","body":"{{\"amount\":1299,\"currency\":\"EUR\"}}","attempts":2}}"#
    );
    storage()
        .set_item(&format!("test-version:{NAME}"), &old)
        .unwrap();
    let op = Operation::start(
        spec(),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    )
    .unwrap();
    assert_eq!((op.key(), op.attempts()), (Some(key), 2));

    let mut newer = journal.load(NAME).unwrap().unwrap();
    assert_eq!(newer.state, RecordState::Pending);
    newer.version = KEY_EXPIRED_FORMAT_VERSION + 1;
    storage()
        .set_item(&format!("test-version:{NAME}"), &encode(&newer))
        .unwrap();
    let result = Operation::start(
        spec(),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut Uuid::new_v4,
    );
    assert!(
        matches!(
            result,
            Err(StartError::Unreadable(JournalError::UnsupportedVersion {
                found: 4,
                ..
            }))
        ),
        "{result:?}"
    );
    journal.remove(NAME).unwrap();
}

/// In the real localStorage: the answer replaces the record by a settled entry without the
/// payload, a reload's start of the same payload continues under its key, another payload is
/// refused, and pruning past the window removes it.
#[wasm_bindgen_test]
fn a_settled_entry_lives_in_local_storage_without_the_payload() {
    let mut journal = fresh("test-settled:");
    let policy = RetryPolicy::default();
    let mut op = Operation::start(
        spec(),
        policy.clone(),
        1_000,
        &mut journal,
        &mut Uuid::new_v4,
    )
    .unwrap();
    let key = op.key();
    let Action::Send(_) = op.poll(1_000, &mut journal, &mut Zero) else {
        panic!("expected Send")
    };
    op.handle_reply(1_010, idem_client::Reply::new(201, r#"{"order":"o-1"}"#));
    let Action::Finished(_) = op.poll(1_010, &mut journal, &mut Zero) else {
        panic!("expected Finished")
    };
    let text = storage()
        .get_item(&format!("test-settled:{NAME}"))
        .unwrap()
        .expect("a settled entry");
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(raw["version"], json!(SETTLED_FORMAT_VERSION));
    assert_eq!(
        raw["state"],
        json!({ "status": "settled", "httpStatus": 201 })
    );
    assert!(!text.contains("1299") && !text.contains("o-1"), "{text}");
    assert!(matches!(
        journal.load_entry(NAME),
        Ok(Some(Entry::Settled(_)))
    ));
    // A reload: a new journal object over the same storage.
    let mut reloaded = LocalStorageJournal::new("test-settled:");
    let again = Operation::start(
        spec(),
        policy.clone(),
        5_000,
        &mut reloaded,
        &mut Uuid::new_v4,
    )
    .unwrap();
    assert_eq!(again.key(), key);
    let other = OperationSpec::post(NAME, json!({ "amount": 1 }));
    // `again` rewrote the open record; settle it once more to test the refusal.
    let mut again = again;
    let Action::Send(_) = again.poll(5_000, &mut reloaded, &mut Zero) else {
        panic!()
    };
    again.handle_reply(5_010, idem_client::Reply::new(201, "").replayed());
    let _ = again.poll(5_010, &mut reloaded, &mut Zero);
    assert!(matches!(
        Operation::start(
            other,
            policy.clone(),
            6_000,
            &mut reloaded,
            &mut Uuid::new_v4
        ),
        Err(StartError::SettledWithDifferentPayload { .. })
    ));
    assert_eq!(
        journal::prune_settled(&mut reloaded, 1_000 + policy.retry_window_ms).unwrap(),
        1
    );
    assert_eq!(
        storage().get_item(&format!("test-settled:{NAME}")).unwrap(),
        None
    );
}

/// The JS-side canonicaliser (what `submit` uses) gives the golden RFC 8785 bytes, the same as
/// serde_json_canonicalizer on the same text.
#[wasm_bindgen_test]
fn js_canonicaliser_gives_the_golden_bytes() {
    for (input, expected) in common::canonical::CASES {
        let value = js_sys::JSON::parse(input).unwrap();
        let ours = CanonicalPayload::from_js(&value).unwrap();
        assert_eq!(ours.json, *expected, "{input}");
        let native: serde_json::Value = serde_json::from_str(input).unwrap();
        assert_eq!(ours, CanonicalPayload::new(&native).unwrap(), "{input}");
    }
}

/// JS values with no JSON text of their own map as they did when `submit` went through
/// serde_wasm_bindgen into a `serde_json::Value` and serde_json_canonicalizer.
#[wasm_bindgen_test]
fn js_canonicaliser_reads_js_values_as_serde_wasm_bindgen_did() {
    let make = |source: &str| -> JsValue {
        js_sys::Function::new_no_args(&format!("return ({source});"))
            .call0(&JsValue::NULL)
            .unwrap()
    };
    let old = |value: &JsValue| -> Option<String> {
        let value: serde_json::Value = serde_wasm_bindgen::from_value(value.clone()).ok()?;
        Some(CanonicalPayload::new(&value).ok()?.json)
    };
    for (source, expected) in [
        (
            "{a: undefined, b: NaN, c: -Infinity, d: 10n, e: -(2n ** 63n), f: 2n ** 64n - 1n, g: [undefined, null]}",
            Some(r#"{"a":null,"b":null,"c":null,"d":10,"e":-9223372036854776000,"f":18446744073709552000,"g":[null,null]}"#),
        ),
        (
            "{m: new Map([['y', 1], ['x', {z: 2}]]), d: new Date(0), o: Object.create({inherited: 1})}",
            Some(r#"{"d":{},"m":{"x":{"z":2},"y":1},"o":{}}"#),
        ),
        ("{k: Object.assign(Object.create(null), {b: 1, a: 2})}", Some(r#"{"k":{"a":2,"b":1}}"#)),
        ("undefined", Some("null")),
        ("-0", Some("0")),
        ("2n ** 64n", None),
        ("{f: () => 1}", None),
        ("[Symbol('s')]", None),
        ("{s: new Set([1])}", None),
        ("{b: new Uint8Array(2)}", None),
        ("{b: new ArrayBuffer(2)}", None),
        ("{m: new Map([[1, 'non-string key']])}", None),
    ] {
        let value = make(source);
        let ours = CanonicalPayload::from_js(&value).ok().map(|p| p.json);
        let expected = expected.map(str::to_owned);
        assert_eq!(ours, expected, "{source}");
        assert_eq!(ours, old(&value), "{source} (serde_wasm_bindgen)");
    }
    // Nesting beyond 128 levels is refused rather than overflowing the stack.
    let deep = make(&format!("{}{}", "[".repeat(200), "]".repeat(200)));
    assert!(matches!(
        CanonicalPayload::from_js(&deep),
        Err(StartError::Payload(_))
    ));
}
