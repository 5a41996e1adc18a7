//! JavaScript bindings: `new IdempotentClient({ endpoint })`, `submit`, `pending`, `resume`.

use std::collections::BTreeMap;
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::StorageEvent;

use crate::driver::fetch::{self, Endpoint};
use crate::driver::{lock, now_ms};
use crate::journal::local_storage::{LocalStorageJournal, DEFAULT_PREFIX};
use crate::journal::{self, Journal, JournalError, Record, RecordState};
use crate::{
    KeyUse, Method, Operation, OperationSpec, Outcome, OutcomeKind, Persistence, RandomKeys,
    RetryPolicy, StartError,
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

/// `ClientOptions`, as deserialized from JS.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientOptions {
    endpoint: String,
    #[serde(default)]
    method: Option<Method>,
    #[serde(default)]
    always_key: bool,
    #[serde(default)]
    policy: RetryPolicy,
    #[serde(default)]
    storage_prefix: Option<String>,
    #[serde(default)]
    allow_memory_only: bool,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

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
        let options: ClientOptions = serde_wasm_bindgen::from_value(options)
            .map_err(|e| error("invalidOptions", &e.to_string()))?;
        let config = Config {
            endpoint: Endpoint {
                url: options.endpoint,
                headers: options.headers.into_iter().collect(),
            },
            method: options.method.unwrap_or(Method::Post),
            key_use: if options.always_key {
                KeyUse::Always
            } else {
                KeyUse::Auto
            },
            policy: options.policy,
            prefix: options
                .storage_prefix
                .unwrap_or_else(|| DEFAULT_PREFIX.to_owned()),
            persistence: if options.allow_memory_only {
                Persistence::AllowMemoryOnly
            } else {
                Persistence::Required
            },
        };
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
        let config = Rc::clone(&self.config);
        let payload: Result<serde_json::Value, _> = serde_wasm_bindgen::from_value(payload);
        future_to_promise(async move {
            let payload = payload.map_err(|e| error("payload", &e.to_string()))?;
            let spec = OperationSpec {
                name,
                method: config.method,
                payload,
                key_use: config.key_use,
                persistence: config.persistence,
            };
            let policy = config.policy.clone();
            run_locked(&config, spec.name.clone(), move |journal| {
                Operation::start(spec, policy, now_ms(), journal, &mut RandomKeys).map(Some)
            })
            .await
        })
    }

    /// Resumes the journaled operation `name` (listed by `pending()`) with its key and bytes.
    /// Resolves to `null` when nothing is journaled under that name.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome | null>")]
    pub fn resume(&self, name: String) -> Promise {
        let config = Rc::clone(&self.config);
        future_to_promise(async move {
            let policy = config.policy.clone();
            run_locked(&config, name.clone(), move |journal| {
                Operation::resume(&name, policy, journal)
            })
            .await
        })
    }

    /// The operations journaled in this origin's localStorage (pending or unknown).
    #[wasm_bindgen(unchecked_return_type = "PendingOperation[]")]
    pub fn pending(&self) -> Result<JsValue, JsValue> {
        let journal = self.config.journal();
        let records = journal::pending(&journal).map_err(|e| journal_error("unavailable", &e))?;
        let names = journal.names().unwrap_or_default();
        let list: Vec<JsPending> = records
            .into_iter()
            .zip(names)
            .map(|(record, name)| JsPending::new(name, record))
            .collect();
        to_js(&list)
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
            let change = JsChange {
                record: record.map(|r| JsPending::new(name.clone(), r)),
                name,
            };
            if let Ok(value) = to_js(&change) {
                let _ = callback.call1(&JsValue::NULL, &value);
            }
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

/// Runs the operation `open` yields, holding the Web Lock for `name`, and converts its outcome.
///
/// If a record existed before waiting for the lock and is gone once it is held, another tab
/// finished the operation meanwhile: rejecting with `settledElsewhere` beats minting a new key.
async fn run_locked(
    config: &Config,
    name: String,
    open: impl FnOnce(&mut LocalStorageJournal) -> Result<Option<Operation>, StartError>,
) -> Result<JsValue, JsValue> {
    let mut journal = config.journal();
    let existed_before = matches!(journal.load(&name), Ok(Some(_)));
    let lock_name = format!("idem:{name}");
    lock::with_lock(&lock_name, async move {
        if existed_before && matches!(journal.load(&name), Ok(None)) {
            return Err(error(
                "settledElsewhere",
                &format!("operation {name} was settled in another tab"),
            ));
        }
        let Some(mut op) = open(&mut journal).map_err(start_error)? else {
            return Ok(JsValue::NULL);
        };
        let outcome = fetch::run(&mut op, &config.endpoint, &mut journal).await;
        to_js(&JsOutcome::from(&outcome))
    })
    .await
}

/// `Outcome` as the plain JS object of the TypeScript `Outcome` interface.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsOutcome {
    name: String,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<crate::Problem>,
    key: Option<String>,
    attempts: u32,
    durability: crate::Durability,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_error: Option<String>,
}

impl From<&Outcome> for JsOutcome {
    fn from(outcome: &Outcome) -> Self {
        let mut js = JsOutcome {
            name: outcome.name.clone(),
            kind: outcome.kind.name(),
            status: None,
            body: None,
            problem: None,
            key: outcome.key.clone(),
            attempts: outcome.attempts,
            durability: outcome.durability,
            last_error: None,
        };
        match &outcome.kind {
            OutcomeKind::Succeeded { status, body } | OutcomeKind::Replayed { status, body } => {
                js.status = Some(*status);
                js.body = Some(body_value(body));
            }
            OutcomeKind::Rejected {
                status,
                body,
                problem,
            } => {
                js.status = Some(*status);
                js.body = Some(body_value(body));
                js.problem = problem.clone();
            }
            OutcomeKind::Unknown { last_error } => {
                js.last_error = Some(
                    last_error
                        .as_ref()
                        .map_or("no attempt sent".into(), |e| e.to_string()),
                );
            }
        }
        js
    }
}

/// A record as the TypeScript `PendingOperation`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsPending {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl JsPending {
    fn new(name: String, record: Result<Record, JournalError>) -> Self {
        match record {
            Ok(record) => JsPending {
                name,
                key: Some(record.key.to_string()),
                attempts: Some(record.attempts),
                created_at: Some(record.created_at),
                status: Some(match record.state {
                    RecordState::Pending => "pending",
                    RecordState::Unknown { .. } => "unknown",
                }),
                payload: Some(body_value(record.body.as_bytes())),
                error: None,
            },
            Err(e) => JsPending {
                name,
                key: None,
                attempts: None,
                created_at: None,
                status: None,
                payload: None,
                error: Some(e.to_string()),
            },
        }
    }
}

/// A record change as the TypeScript `JournalChange`.
#[derive(Serialize)]
struct JsChange {
    name: String,
    record: Option<JsPending>,
}

/// A body as JSON when it parses, else as text.
fn body_value(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(body).into_owned()))
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| error("internal", &e.to_string()))
}

/// An `Error` named `IdempotencyError` with a machine-readable `code`.
fn error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("IdempotencyError");
    let _ = Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

fn journal_error(code: &str, e: &JournalError) -> JsValue {
    error(code, &e.to_string())
}

fn start_error(e: StartError) -> JsValue {
    let code = match &e {
        StartError::Payload(_) => "payload",
        StartError::PendingWithDifferentPayload { .. } => "pendingWithDifferentPayload",
        StartError::NotPersisted(_) => "notPersisted",
        StartError::Unreadable(_) => "unreadable",
    };
    error(code, &e.to_string())
}
