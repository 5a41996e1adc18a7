//! The exported class: `new IdempotentClient(options)`, `submit`, `resume`, `pending`,
//! `settled`, `discard`, `watch`. Each call runs the core's [`Operation`] through the fetch
//! driver, under the operation's Web Lock where the browser has one.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::StorageEvent;

use super::convert::{
    change_object, error, outcome_object, pending_object, reconciliation_object, settled_object,
    start_error, unavailable,
};
use super::in_flight::{Found, InFlight};
use super::options::{check_endpoint, read_options, Config};
use crate::driver::{fetch, lock, now_ms, reconcile, timer};
use crate::journal::{self, Journal};
use crate::operation::key_string;
use crate::{CanonicalPayload, Operation, OperationSpec, RandomKeys, StartError};

/// A client for one endpoint: submits operations with one idempotency key each, persisted in
/// localStorage before the first send.
#[wasm_bindgen]
pub struct IdempotentClient {
    config: Rc<Config>,
    in_flight: Rc<RefCell<InFlight>>,
}

#[wasm_bindgen]
impl IdempotentClient {
    /// `new IdempotentClient({ endpoint: '/api/checkout' })`. Removes the settled entries of
    /// this prefix whose window has closed.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ClientOptions")] options: JsValue,
    ) -> Result<IdempotentClient, JsValue> {
        let config = read_options(&options)?;
        check_endpoint(&config)?;
        // Housekeeping only: storage that cannot be reached now fails the first submit clearly.
        let _ = journal::prune_settled(&mut config.journal(), now_ms());
        Ok(IdempotentClient {
            config: Rc::new(config),
            in_flight: Rc::default(),
        })
    }

    /// Runs the operation `name` with `payload` to its outcome: resumes it (same key, same
    /// bytes) if it is pending, re-sends under its key if it settled within the retry window
    /// (the server replays its answer), joins the call already running for it in this page.
    /// Rejects with an `IdempotencyError` (`code`: `pendingWithDifferentPayload`,
    /// `settledWithDifferentPayload`, `notPersisted`, `unreadable`, `payload`) when it cannot
    /// start; network and server failures end in an outcome.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn submit(&self, name: String, payload: JsValue) -> Promise {
        let payload = match CanonicalPayload::from_js(&payload) {
            Ok(payload) => payload,
            Err(e) => return Promise::reject(&start_error(e)),
        };
        match self
            .in_flight
            .borrow()
            .find(&name, Some(&payload.fingerprint))
        {
            Found::Same(promise) => return promise,
            Found::Other => {
                let key = self.journaled_key(&name);
                let e = StartError::PendingWithDifferentPayload { name, key };
                return Promise::reject(&start_error(e));
            }
            Found::Nothing => {}
        }
        let fingerprint = payload.fingerprint.clone();
        self.spawn(name, fingerprint, Some(payload))
    }

    /// Resumes the open operation `name` (listed by `pending()`) with its key and bytes, or
    /// joins the call already running for it. Resolves to `null` when no open operation is
    /// journaled under that name (a settled one is not resumed: `submit` it again).
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome | null>")]
    pub fn resume(&self, name: String) -> Promise {
        if let Found::Same(promise) = self.in_flight.borrow().find(&name, None) {
            return promise;
        }
        match self.config.journal().load(&name) {
            Ok(None) => Promise::resolve(&JsValue::NULL),
            Ok(Some(record)) => self.spawn(name, record.fingerprint, None),
            // Unreadable or unreachable: the run reports it as it would on its own.
            Err(_) => promise(run(Rc::clone(&self.config), name, None)),
        }
    }

    /// The unsettled operations journaled in this origin's localStorage under this client's
    /// prefix (pending, unknown, or unreadable with their error). Settled ones: `settled()`.
    #[wasm_bindgen(unchecked_return_type = "PendingOperation[]")]
    pub fn pending(&self) -> Result<JsValue, JsValue> {
        let journal = self.config.journal();
        // One listing, each record read under its own name: zipping `journal::pending` with a
        // second `names()` paired records with the wrong names once another tab removed one.
        let names = journal.names().map_err(unavailable)?;
        // A loop, not `filter_map(..).collect()`: no iterator adapter instance of its own (−109 B gzip).
        let list = Array::new();
        for name in &names {
            if let Some(record) = journal.load(name).transpose() {
                list.push(&pending_object(name, record));
            }
        }
        Ok(list.into())
    }

    /// The operations that got their final answer and whose key is still reused (until
    /// `expiresAt`): a duplicate `submit` of the same payload re-sends under it, another payload
    /// is refused until `discard(name)`.
    #[wasm_bindgen(unchecked_return_type = "SettledOperation[]")]
    pub fn settled(&self) -> Result<JsValue, JsValue> {
        let listed = journal::settled(&self.config.journal(), now_ms()).map_err(unavailable)?;
        // A loop, as in `pending`: `collect` into an `Array` was an instance of its own.
        let list = Array::new();
        for settled in &listed {
            list.push(&settled_object(settled));
        }
        Ok(list.into())
    }

    /// Forgets the operation `name`, open or settled: after reconciling an unknown outcome, to
    /// clear an unreadable record, or to pay again with another payload (a new operation, a new
    /// key). Returns whether something was there. A call still running for it keeps running and
    /// writes its own entry when it settles.
    pub fn discard(&self, name: String) -> Result<bool, JsValue> {
        let mut journal = self.config.journal();
        let present = journal.names().map_err(unavailable)?.contains(&name);
        journal.remove(&name).map_err(unavailable)?;
        Ok(present)
    }

    /// Asks the server's key-state endpoint (`keyStateUrl`) what became of the open operation
    /// `name` (unknown, or pending after a reload) and settles it from the answer, sending no
    /// attempt: `done` finishes it with the saved answer (`kind` `replayed` or `rejected`,
    /// `reconciled: 'done'`, the record replaced by a settled entry); `inFlight` (with the
    /// lease's age), `released` (the work did not complete and the key is free for this same
    /// payload: `resume(name)` sends it again with the same key and bytes) and `notFound` leave
    /// the record as it is, `kind: 'unknown'`; `anotherRequest` (the server's answer names
    /// another request under the key: this payload never ran under it) settles it as the
    /// refusal an attempt would get (`kind: 'rejected'`, `status: 422`). Resolves to
    /// `null` when no open operation is journaled under `name`; rejects with
    /// `code: 'reconcileFailed'` when the endpoint cannot be asked or answers anything else.
    #[wasm_bindgen(unchecked_return_type = "Promise<Reconciliation | null>")]
    pub fn reconcile(&self, name: String) -> Promise {
        promise(reconcile(Rc::clone(&self.config), name))
    }

    /// Calls `callback(change)` whenever another tab changes an entry of this client (the
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
            let Some((name, entry)) = journal.change_from_event(&event) else {
                return;
            };
            let _ = callback.call1(&JsValue::NULL, &change_object(&name, entry));
        })
        .into_js_value();
        let listener: Function = listener.unchecked_into();
        window.add_event_listener_with_callback("storage", &listener)?;
        let stop = Closure::once_into_js(move || {
            let _ = window.remove_event_listener_with_callback("storage", &listener);
        });
        Ok(stop)
    }

    /// Whether the Web Locks API is there to keep two tabs from starting the same operation at
    /// once (without it, a new operation confirms its key after `settleWithoutLocksMs`).
    #[wasm_bindgen(js_name = hasWebLocks)]
    pub fn has_web_locks() -> bool {
        lock::available()
    }
}

impl IdempotentClient {
    /// Runs a call in the background and records it so concurrent calls join it.
    fn spawn(
        &self,
        name: String,
        fingerprint: String,
        payload: Option<CanonicalPayload>,
    ) -> Promise {
        let id = self.in_flight.borrow_mut().next_id();
        let in_flight = Rc::clone(&self.in_flight);
        let work = run(Rc::clone(&self.config), name.clone(), payload);
        // The future first runs in a later microtask, so `insert` below precedes its `remove`.
        let call = promise(async move {
            let result = work.await;
            in_flight.borrow_mut().remove(id);
            result
        });
        self.in_flight
            .borrow_mut()
            .insert(id, name, fingerprint, call.clone());
        call
    }

    /// The key journaled under `name`, for an error message (empty when there is none).
    fn journaled_key(&self, name: &str) -> String {
        match self.config.journal().load_entry(name) {
            Ok(Some(entry)) => crate::operation::key_string(entry.key()),
            _ => String::new(),
        }
    }
}

/// `future_to_promise` of `work`, boxed: one instance of it for every call, where each future
/// type would instantiate a copy of its own (kilobytes of the package).
fn promise(work: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let work: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>> = Box::pin(work);
    future_to_promise(work)
}

/// Starts (`payload`: `Some`) or resumes (`None`) the operation `name`, runs it to its outcome
/// and converts that.
///
/// The start happens holding the Web Lock named after the record's storage key: another tab's
/// call for the same name waits, then reads the journal afresh (a pending record resumes, a
/// settled one re-sends under its key); the lock is kept `settleWithoutLocksMs` after the work,
/// so that tab's read comes after this tab's writes reach it. Without Web Locks (or where the browser refuses the
/// lock), a freshly minted key is written, left to settle `settleWithoutLocksMs`, and confirmed
/// (see `Operation::start_unlocked`), so two tabs starting at the same instant adopt one key.
async fn run(
    config: Rc<Config>,
    name: String,
    payload: Option<CanonicalPayload>,
) -> Result<JsValue, JsValue> {
    let mut journal = config.journal();
    let lock_name = config.lock_name(&name);
    // Held a settle time past the work, so the next tab reads what this one wrote.
    let hold_after_ms = config.settle_without_locks_ms;
    lock::with_lock(&lock_name, hold_after_ms, |held| async move {
        let policy = config.policy.clone();
        let mut op = match payload {
            Some(payload) => {
                let spec = OperationSpec {
                    name,
                    method: config.method,
                    payload,
                    key_use: config.key_use,
                    persistence: config.persistence,
                };
                // Under the lock the start is already exclusive: confirm at once.
                let settle_ms = if held {
                    0
                } else {
                    config.settle_without_locks_ms
                };
                let (now, keys) = (now_ms(), &mut RandomKeys);
                let unconfirmed =
                    Operation::start_unlocked(spec, policy, now, &mut journal, keys, settle_ms)
                        .map_err(start_error)?;
                if let Some(at) = unconfirmed.confirm_at() {
                    timer::sleep_until(at).await;
                }
                unconfirmed
                    .confirm(now_ms(), &mut journal)
                    .map_err(start_error)?
            }
            None => match Operation::resume(&name, policy, &journal).map_err(start_error)? {
                Some(op) => op,
                None => return Ok(JsValue::NULL),
            },
        };
        let outcome = fetch::run(&mut op, &config.endpoint, &mut journal).await;
        Ok(outcome_object(&outcome).into())
    })
    .await
}

/// Asks for the key state of the open operation `name` and settles it when the server says
/// done (see [`IdempotentClient::reconcile`]).
async fn reconcile(config: Rc<Config>, name: String) -> Result<JsValue, JsValue> {
    let mut journal = config.journal();
    let policy = config.policy.clone();
    let Some(mut op) = Operation::resume(&name, policy.clone(), &journal).map_err(start_error)?
    else {
        return Ok(JsValue::NULL);
    };
    let key = op.key().map(key_string).unwrap_or_default();
    let deadline = now_ms().saturating_add(policy.attempt_timeout_ms);
    let state = reconcile::reconcile(
        &mut op,
        &config.key_state_url(&key),
        &config.endpoint.headers,
        &mut journal,
        deadline,
    )
    .await
    .map_err(|why| {
        error(
            "reconcileFailed",
            &["key state of ", &key, ": ", &why].concat(),
        )
    })?;
    if let Some(outcome) = op.outcome() {
        return Ok(reconciliation_object(outcome, &state).into());
    }
    let outcome = crate::Outcome {
        name,
        kind: crate::OutcomeKind::Unknown {
            last_error: op.last_error().cloned(),
        },
        key: Some(key),
        attempts: op.attempts(),
        durability: op.durability(),
    };
    Ok(reconciliation_object(&outcome, &state).into())
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::{wasm_bindgen_test as test, wasm_bindgen_test_configure};

    use js_sys::{Object, Reflect};

    use super::super::convert::set;
    use super::*;
    use crate::journal::{encode, Record, RecordState, FORMAT_VERSION};
    use crate::Method;

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
            fingerprint: crate::digest::sha256_hex(body.as_bytes()),
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
