//! JavaScript bindings: `new IdempotentClient({ endpoint })`, `submit`, `pending`, `resume`.

use std::rc::Rc;

use js_sys::{Array, Function, Object, Promise, Reflect, JSON};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::StorageEvent;

use crate::driver::fetch::{self, Endpoint};
use crate::driver::{lock, now_ms};
use crate::journal::local_storage::{LocalStorageJournal, DEFAULT_PREFIX};
use crate::journal::{Journal, JournalError, Record, RecordState};
use crate::{
    CanonicalPayload, Durability, Failure, KeyUse, Method, Operation, OperationSpec, Outcome,
    OutcomeKind, Persistence, Problem, RandomKeys, RetryPolicy, StartError,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Options of `new IdempotentClient(options)`. */
export interface ClientOptions {
  /** URL every attempt is sent to, e.g. '/api/checkout'. */
  endpoint: string;
  /** HTTP method (default 'POST'). POST and PATCH carry an Idempotency-Key; others only with `alwaysKey`. */
  method?: 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Send an Idempotency-Key whatever the method (default false). */
  alwaysKey?: boolean;
  /** Retry policy; missing fields take their defaults. */
  policy?: Partial<RetryPolicy>;
  /** localStorage key prefix (default 'idem:'). */
  storagePrefix?: string;
  /** If localStorage fails, send with a key kept only in memory (default false: refuse). */
  allowMemoryOnly?: boolean;
  /** Extra headers sent on every attempt. */
  headers?: Record<string, string>;
}

/** Retry policy (all durations in ms). */
export interface RetryPolicy {
  /** First backoff delay (default 500), doubling per failure. */
  initialBackoffMs: number;
  /** Backoff cap (default 5000). */
  maxBackoffMs: number;
  /** Spread delays over [d/2, d] (default true). */
  jitter: boolean;
  /** Per-attempt timeout (default 10000). */
  attemptTimeoutMs: number;
  /** Attempts may be sent until this long after creation (default 86400000, 24 h). */
  retryWindowMs: number;
  /** Optional cap on attempts (default none). */
  maxAttempts: number | null;
}

/** How an operation ended. */
export interface Outcome {
  name: string;
  kind: 'succeeded' | 'replayed' | 'rejected' | 'unknown';
  /** HTTP status of the final answer (absent when unknown). */
  status?: number;
  /** Response body: parsed JSON when it is JSON, else text (absent when unknown). */
  body?: unknown;
  /** Problem details of a rejection, when the body is one. */
  problem?: { type?: string; title?: string; status?: number; detail?: string };
  /** The Idempotency-Key sent, or null for an unkeyed operation. */
  key: string | null;
  /** Attempts sent in total, across reloads. */
  attempts: number;
  /** Where the key lived: 'journaled' (localStorage), 'memoryOnly' or 'unkeyed'. */
  durability: 'journaled' | 'memoryOnly' | 'unkeyed';
  /** The last failure, for an unknown outcome. */
  lastError?: string;
}

/** A journaled operation, as listed by `pending()`. */
export interface PendingOperation {
  name: string;
  /** Absent when the record is unreadable (see `error`). */
  key?: string;
  attempts?: number;
  createdAt?: number;
  /** 'pending', or 'unknown' when the retry window closed without an answer. */
  status?: 'pending' | 'unknown';
  /** The canonical payload, parsed. */
  payload?: unknown;
  /** Why the record cannot be read (corrupt, foreign, newer format). */
  error?: string;
}

/** A record change seen through the `storage` event (another tab's progress). */
export interface JournalChange {
  name: string;
  /** The record now stored, or null when it was removed (the operation finished there). */
  record: PendingOperation | null;
}
"#;

/// What each submit needs, shared by the futures it spawns.
struct Config {
    endpoint: Endpoint,
    method: Method,
    key_use: KeyUse,
    policy: RetryPolicy,
    prefix: String,
    persistence: Persistence,
}

impl Config {
    fn journal(&self) -> LocalStorageJournal {
        LocalStorageJournal::new(self.prefix.clone())
    }
}

/// A client for one endpoint: submits operations with one idempotency key each, persisted in
/// localStorage before the first send.
#[wasm_bindgen]
pub struct IdempotentClient {
    config: Rc<Config>,
}

#[wasm_bindgen]
impl IdempotentClient {
    /// `new IdempotentClient({ endpoint: '/api/checkout' })`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ClientOptions")] options: JsValue,
    ) -> Result<IdempotentClient, JsValue> {
        let config = read_options(&options)
            .and_then(|config| check_endpoint(&config.endpoint).map(|()| config))
            .map_err(|message| error("invalidOptions", &message))?;
        Ok(IdempotentClient {
            config: Rc::new(config),
        })
    }

    /// Runs the operation `name` with `payload` to its outcome, resuming it (same key, same
    /// bytes) if it is pending. Rejects with an `IdempotencyError` (`code`:
    /// `pendingWithDifferentPayload`, `notPersisted`, `unreadable`, `payload`,
    /// `settledElsewhere`) when it cannot start; network and server failures end in an outcome.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn submit(&self, name: String, payload: JsValue) -> Promise {
        let payload = CanonicalPayload::from_js(&payload);
        future_to_promise(run_locked(Rc::clone(&self.config), name, Some(payload)))
    }

    /// Resumes the journaled operation `name` (listed by `pending()`) with its key and bytes.
    /// Resolves to `null` when nothing is journaled under that name.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome | null>")]
    pub fn resume(&self, name: String) -> Promise {
        // One future type for submit and resume: one copy of the driver loop in the binary.
        future_to_promise(run_locked(Rc::clone(&self.config), name, None))
    }

    /// The operations journaled in this origin's localStorage (pending or unknown).
    #[wasm_bindgen(unchecked_return_type = "PendingOperation[]")]
    pub fn pending(&self) -> Result<JsValue, JsValue> {
        let journal = self.config.journal();
        // One listing, each record read under its own name: zipping `journal::pending` with a
        // second `names()` paired records with the wrong names once another tab removed one.
        let names = journal
            .names()
            .map_err(|e| journal_error("unavailable", &e))?;
        let list: Array = names
            .iter()
            .filter_map(|name| {
                let record = journal.load(name).transpose()?;
                Some(pending_object(name, record))
            })
            .collect();
        Ok(list.into())
    }

    /// Forgets the journaled operation `name` (after reconciling an unknown outcome, or to
    /// clear an unreadable record). Returns whether something was there.
    pub fn discard(&self, name: String) -> Result<bool, JsValue> {
        let mut journal = self.config.journal();
        let present = journal
            .names()
            .map_err(|e| journal_error("unavailable", &e))?
            .contains(&name);
        journal
            .remove(&name)
            .map_err(|e| journal_error("unavailable", &e))?;
        Ok(present)
    }

    /// Calls `callback(change)` whenever another tab changes a record of this client (the
    /// `storage` event). Returns a function that stops watching.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn watch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(change: JournalChange) => void")]
        callback: Function,
    ) -> Result<JsValue, JsValue> {
        let window = web_sys::window().ok_or_else(|| error("unavailable", "no window"))?;
        let journal = self.config.journal();
        let listener = Closure::<dyn Fn(StorageEvent)>::new(move |event: StorageEvent| {
            let Some((name, record)) = journal.change_from_event(&event) else {
                return;
            };
            let change = Object::new();
            set(&change, "name", &JsValue::from_str(&name));
            let record = match record {
                Some(record) => pending_object(&name, record).into(),
                None => JsValue::NULL,
            };
            set(&change, "record", &record);
            let _ = callback.call1(&JsValue::NULL, &change);
        })
        .into_js_value();
        let listener: Function = listener.unchecked_into();
        window.add_event_listener_with_callback("storage", &listener)?;
        let stop = Closure::once_into_js(move || {
            let _ = window.remove_event_listener_with_callback("storage", &listener);
        });
        Ok(stop)
    }

    /// Whether the Web Locks API is there to keep two tabs from sending the same operation at
    /// once (see the crate's `driver::lock` docs for the fallback).
    #[wasm_bindgen(js_name = hasWebLocks)]
    pub fn has_web_locks() -> bool {
        lock::available()
    }
}

/// Starts (`payload`: `Some`) or resumes (`None`) the operation `name` holding the Web Lock for
/// it, runs it to its outcome and converts that.
///
/// If a record existed before waiting for the lock and is gone once it is held, another tab
/// finished the operation meanwhile: rejecting with `settledElsewhere` beats minting a new key.
async fn run_locked(
    config: Rc<Config>,
    name: String,
    payload: Option<Result<CanonicalPayload, StartError>>,
) -> Result<JsValue, JsValue> {
    let payload = payload.transpose().map_err(start_error)?;
    let mut journal = config.journal();
    let existed_before = matches!(journal.load(&name), Ok(Some(_)));
    let lock_name = ["idem:", name.as_str()].concat();
    lock::with_lock(&lock_name, async move {
        if existed_before && matches!(journal.load(&name), Ok(None)) {
            return Err(error(
                "settledElsewhere",
                &["operation ", name.as_str(), " was settled in another tab"].concat(),
            ));
        }
        let policy = config.policy.clone();
        let opened = match payload {
            Some(payload) => {
                let spec = OperationSpec {
                    name,
                    method: config.method,
                    payload,
                    key_use: config.key_use,
                    persistence: config.persistence,
                };
                Operation::start(spec, policy, now_ms(), &mut journal, &mut RandomKeys).map(Some)
            }
            None => Operation::resume(&name, policy, &journal),
        };
        let Some(mut op) = opened.map_err(start_error)? else {
            return Ok(JsValue::NULL);
        };
        let outcome = fetch::run(&mut op, &config.endpoint, &mut journal).await;
        Ok(outcome_object(&outcome).into())
    })
    .await
}

/// Reads `ClientOptions` as serde did (undefined members take their defaults; `null` too where
/// the TypeScript type allows it), field by field, without serde.
fn read_options(options: &JsValue) -> Result<Config, String> {
    if !options.is_object() {
        return Err("options must be an object".into());
    }
    let endpoint = member(options, "endpoint")
        .and_then(|v| v.as_string())
        .ok_or("options.endpoint must be a string")?;
    let method = match member(options, "method").filter(|v| !v.is_null()) {
        None => Method::Post,
        Some(v) => v
            .as_string()
            .and_then(|name| Method::from_name(&name))
            .ok_or("options.method must be one of POST, PATCH, PUT, DELETE, GET, HEAD")?,
    };
    let always_key = boolean(options, "alwaysKey", "options.alwaysKey")?.unwrap_or(false);
    let allow_memory_only =
        boolean(options, "allowMemoryOnly", "options.allowMemoryOnly")?.unwrap_or(false);
    let prefix = match member(options, "storagePrefix").filter(|v| !v.is_null()) {
        None => DEFAULT_PREFIX.to_owned(),
        Some(v) => v
            .as_string()
            .ok_or("options.storagePrefix must be a string")?,
    };
    let mut headers = Vec::new();
    if let Some(object) = member(options, "headers") {
        if !object.is_object() {
            return Err("options.headers must be an object".into());
        }
        for entry in Object::entries(object.unchecked_ref()).iter() {
            let entry: Array = entry.unchecked_into();
            let (Some(name), Some(value)) = (entry.get(0).as_string(), entry.get(1).as_string())
            else {
                return Err("options.headers values must be strings".into());
            };
            headers.push((name, value));
        }
        crate::json::sort_by(&mut headers, |a, b| a.0 < b.0);
    }
    let mut policy = RetryPolicy::default();
    if let Some(p) = member(options, "policy") {
        if !p.is_object() {
            return Err("options.policy must be an object".into());
        }
        let ms = |name: &str, default: u64| -> Result<u64, String> {
            match member(&p, name) {
                None => Ok(default),
                Some(v) => integer(&v, u64::MAX).ok_or_else(|| {
                    ["options.policy.", name, " must be a non-negative integer"].concat()
                }),
            }
        };
        policy.initial_backoff_ms = ms("initialBackoffMs", policy.initial_backoff_ms)?;
        policy.max_backoff_ms = ms("maxBackoffMs", policy.max_backoff_ms)?;
        policy.attempt_timeout_ms = ms("attemptTimeoutMs", policy.attempt_timeout_ms)?;
        policy.retry_window_ms = ms("retryWindowMs", policy.retry_window_ms)?;
        policy.jitter = boolean(&p, "jitter", "options.policy.jitter")?.unwrap_or(policy.jitter);
        policy.max_attempts = match member(&p, "maxAttempts").filter(|v| !v.is_null()) {
            None => None,
            Some(v) => Some(
                integer(&v, u64::from(u32::MAX))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or("options.policy.maxAttempts must be a non-negative integer or null")?,
            ),
        };
    }
    Ok(Config {
        endpoint: Endpoint {
            url: endpoint,
            headers,
        },
        method,
        key_use: if always_key {
            KeyUse::Always
        } else {
            KeyUse::Auto
        },
        policy,
        prefix,
        persistence: if allow_memory_only {
            Persistence::AllowMemoryOnly
        } else {
            Persistence::Required
        },
    })
}

/// Checks that `fetch` can send to `endpoint` at all: a URL the `Request` constructor parses
/// and headers it accepts. Otherwise every attempt would fail the same way, be reported as a
/// network error and be retried until the window closes.
fn check_endpoint(endpoint: &Endpoint) -> Result<(), String> {
    let headers = web_sys::Headers::new().map_err(|_| "cannot build request headers")?;
    for (name, value) in &endpoint.headers {
        headers
            .append(name, value)
            .map_err(|_| ["options.headers has an invalid header: ", name.as_str()].concat())?;
    }
    let init = web_sys::RequestInit::new();
    init.set_headers(&headers);
    web_sys::Request::new_with_str_and_init(&endpoint.url, &init)
        .map_err(|_| "options.endpoint is not a URL fetch accepts")?;
    Ok(())
}

/// `object[name]`, `None` when it is `undefined` (or cannot be read).
fn member(object: &JsValue, name: &str) -> Option<JsValue> {
    Reflect::get(object, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined())
}

/// An optional boolean member.
fn boolean(object: &JsValue, name: &str, path: &str) -> Result<Option<bool>, String> {
    match member(object, name) {
        None => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| [path, " must be a boolean"].concat()),
    }
}

/// A JS number that is an integer in `0..=max` (and a safe integer), as serde read a `u64`.
fn integer(value: &JsValue, max: u64) -> Option<u64> {
    let n = value.as_f64()?;
    let safe = (0.0..=9_007_199_254_740_991.0).contains(&n) && n.trunc() == n;
    // In range and integral: the cast is exact.
    (safe && n as u64 <= max).then_some(n as u64)
}

/// `target[name] = value` on a fresh plain object (cannot fail).
fn set(target: &Object, name: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(name), value);
}

/// `Outcome` as the plain JS object of the TypeScript `Outcome` interface.
fn outcome_object(outcome: &Outcome) -> Object {
    let js = Object::new();
    set(&js, "name", &JsValue::from_str(&outcome.name));
    set(&js, "kind", &JsValue::from_str(outcome.kind.name()));
    match &outcome.kind {
        OutcomeKind::Succeeded { status, body } | OutcomeKind::Replayed { status, body } => {
            set(&js, "status", &JsValue::from(*status));
            set(&js, "body", &body_value(body));
        }
        OutcomeKind::Rejected {
            status,
            body,
            problem,
        } => {
            set(&js, "status", &JsValue::from(*status));
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
    set(&js, "attempts", &JsValue::from(outcome.attempts));
    let durability = match outcome.durability {
        Durability::Journaled => "journaled",
        Durability::MemoryOnly => "memoryOnly",
        Durability::Unkeyed => "unkeyed",
    };
    set(&js, "durability", &JsValue::from_str(durability));
    if let OutcomeKind::Unknown { last_error } = &outcome.kind {
        let text = last_error
            .as_ref()
            .map_or_else(|| "no attempt sent".to_owned(), Failure::message);
        set(&js, "lastError", &JsValue::from_str(&text));
    }
    js
}

/// RFC 9457 problem details as a plain object (absent members left out).
fn problem_object(problem: &Problem) -> Object {
    let js = Object::new();
    let text = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            set(&js, name, &JsValue::from_str(value));
        }
    };
    text("type", &problem.kind);
    text("title", &problem.title);
    if let Some(status) = problem.status {
        set(&js, "status", &JsValue::from(status));
    }
    text("detail", &problem.detail);
    js
}

/// A record as the TypeScript `PendingOperation`.
fn pending_object(name: &str, record: Result<Record, JournalError>) -> Object {
    let js = Object::new();
    set(&js, "name", &JsValue::from_str(name));
    match record {
        Ok(record) => {
            let mut key = [0u8; uuid::fmt::Hyphenated::LENGTH];
            set(
                &js,
                "key",
                &JsValue::from_str(record.key.hyphenated().encode_lower(&mut key)),
            );
            set(&js, "attempts", &JsValue::from(record.attempts));
            // ms since the epoch: exact as a double far beyond any real date.
            set(
                &js,
                "createdAt",
                &JsValue::from_f64(record.created_at as f64),
            );
            let status = match record.state {
                RecordState::Pending => "pending",
                RecordState::Unknown { .. } => "unknown",
            };
            set(&js, "status", &JsValue::from_str(status));
            set(&js, "payload", &body_value(record.body.as_bytes()));
        }
        Err(e) => set(&js, "error", &JsValue::from_str(&e.message())),
    }
    js
}

/// A body as JSON when it parses (`JSON.parse`), else as text.
fn body_value(body: &[u8]) -> JsValue {
    match core::str::from_utf8(body) {
        Ok(text) => JSON::parse(text).unwrap_or_else(|_| JsValue::from_str(text)),
        Err(_) => JsValue::from_str(&String::from_utf8_lossy(body)),
    }
}

/// An `Error` named `IdempotencyError` with a machine-readable `code`.
fn error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("IdempotencyError");
    let _ = Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

fn journal_error(code: &str, e: &JournalError) -> JsValue {
    error(code, &e.message())
}

fn start_error(e: StartError) -> JsValue {
    let code = match &e {
        StartError::Payload(_) => "payload",
        StartError::PendingWithDifferentPayload { .. } => "pendingWithDifferentPayload",
        StartError::NotPersisted(_) => "notPersisted",
        StartError::Unreadable(_) => "unreadable",
    };
    error(code, &e.message())
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::{wasm_bindgen_test as test, wasm_bindgen_test_configure};

    use super::*;
    use crate::journal::{encode, FORMAT_VERSION};

    wasm_bindgen_test_configure!(run_in_browser);

    fn options(endpoint: &str, headers: &[(&str, &str)], prefix: &str) -> JsValue {
        let object = Object::new();
        set(&object, "endpoint", &JsValue::from_str(endpoint));
        set(&object, "storagePrefix", &JsValue::from_str(prefix));
        let h = Object::new();
        for (name, value) in headers {
            set(&h, name, &JsValue::from_str(value));
        }
        set(&object, "headers", &h);
        object.into()
    }

    fn code(error: &JsValue) -> Option<String> {
        Reflect::get(error, &JsValue::from_str("code"))
            .ok()?
            .as_string()
    }

    #[test]
    fn options_fetch_would_refuse_are_rejected_at_construction() {
        let good = options("/api/checkout", &[("Authorization", "Bearer x")], "t:");
        assert!(IdempotentClient::new(good).is_ok());
        for bad in [
            options("/api/checkout", &[("bad header", "x")], "t:"),
            options("/api/checkout", &[("X-Note", "a\nb")], "t:"),
            options("http://[::1/api", &[], "t:"),
        ] {
            let e = IdempotentClient::new(bad).err().expect("refused");
            assert_eq!(code(&e).as_deref(), Some("invalidOptions"));
        }
    }

    #[test]
    fn pending_lists_each_record_under_its_own_name() {
        let prefix = "test-js-pending:";
        let storage = web_sys::window().unwrap().local_storage().unwrap().unwrap();
        let body = r#"{"amount":1}"#.to_owned();
        let record = Record {
            version: FORMAT_VERSION,
            name: "a".into(),
            key: uuid::Uuid::from_u128(7),
            method: Method::Post,
            fingerprint: crate::payload::fingerprint(body.as_bytes()),
            body,
            attempts: 1,
            created_at: 5,
            state: RecordState::Pending,
        };
        storage
            .set_item(&[prefix, "a"].concat(), &encode(&record))
            .unwrap();
        storage
            .set_item(&[prefix, "b"].concat(), "not json")
            .unwrap();
        let client = IdempotentClient::new(options("/api", &[], prefix)).unwrap();
        let list: Array = client.pending().unwrap().unchecked_into();
        let field =
            |i: u32, name: &str| Reflect::get(&list.get(i), &JsValue::from_str(name)).unwrap();
        assert_eq!(list.length(), 2);
        assert_eq!(field(0, "name").as_string().as_deref(), Some("a"));
        assert_eq!(
            field(0, "key").as_string().as_deref(),
            Some("00000000-0000-0000-0000-000000000007")
        );
        assert_eq!(field(1, "name").as_string().as_deref(), Some("b"));
        assert!(field(1, "error").as_string().is_some());
        assert!(field(1, "key").is_undefined());
        storage.remove_item(&[prefix, "a"].concat()).unwrap();
        storage.remove_item(&[prefix, "b"].concat()).unwrap();
    }
}
