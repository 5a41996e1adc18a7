//! The sans-IO state machine of one logical operation: `spec.rs` says what is asked,
//! `start.rs` how it begins (against the journal), this file how it runs (attempts, replies,
//! backoff, outcome).

mod spec;
mod start;

use rand_core::RngCore;
use uuid::Uuid;

pub use spec::{IntoCanonical, OperationSpec, Persistence};
pub use start::Unconfirmed;

use crate::backoff::retry_delay_ms;
use crate::journal::{Journal, Record, RecordState, SettledRecord, SETTLED_FORMAT_VERSION};
use crate::method::Method;
use crate::outcome::{Durability, Failure, Outcome, OutcomeKind, Problem};
use crate::payload::CanonicalPayload;
use crate::policy::RetryPolicy;
use crate::reconcile::KeyState;
use crate::reply::{Reply, ReplyClass};

/// The problem details an operation finishes with when reconciling finds its key bound to
/// another request: written here because no server answered it, in the words of the 422 that
/// any attempt of this payload would get (RFC 9457; no `type`, so `about:blank`).
const BOUND_TO_ANOTHER_REQUEST: &str = concat!(
    r#"{"title":"Idempotency key bound to another request","status":422,"#,
    r#""detail":"The server's key state names another request (another body or endpoint) "#,
    r#"under this key: this payload never ran under it, and an attempt with it is refused."}"#
);

/// One attempt to send: the same key and the same bytes every time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The idempotency key for the `Idempotency-Key` header (`None`: send without one).
    pub key: Option<Uuid>,
    /// The HTTP method.
    pub method: Method,
    /// The canonical JSON body, identical on every attempt (empty for GET and HEAD).
    pub body: Vec<u8>,
    /// 1-based attempt number, counted across reloads.
    pub number: u32,
    /// When this attempt times out (ms): the driver should abort it then.
    pub deadline: u64,
    /// When the operation was first sent (ms, the caller's clock): its creation, journaled
    /// before the first send, so never later than it (see
    /// [`first_sent_header`](Self::first_sent_header)).
    pub first_sent: u64,
}

impl Attempt {
    /// The `Repeatability-First-Sent` header's value ([`FIRST_SENT_HEADER`](crate::FIRST_SENT_HEADER),
    /// an HTTP-date) for a keyed attempt, `None` for one without a key: every driver sends it
    /// with the key, so a server's expired-key guard refuses a retry that outlived its retention
    /// instead of running it again. The operation's creation stands for its first send: it is
    /// written to the journal just before, so the date errs by those milliseconds toward "older",
    /// the side on which the server refuses rather than runs, and the record needs no field of
    /// its own (records of every format carry `createdAt`).
    pub fn first_sent_header(&self) -> Option<String> {
        self.key
            .map(|_| idem_store::first_sent::header_value(self.first_sent))
    }
}

/// What the operation wants next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send this attempt now, then report its fate with a `handle_*` method.
    Send(Attempt),
    /// Nothing to do before this time (ms); call [`Operation::poll`] again then (or on an input).
    WaitUntil(u64),
    /// The operation is over.
    Finished(Outcome),
}

/// The state of an operation between inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// The next attempt may go out now.
    Ready,
    /// An attempt is out; its reply is awaited until `deadline`.
    AwaitingReply { deadline: u64 },
    /// A retryable failure at `since`; the next attempt waits until `until`, drawn on the next
    /// poll (from `retry_after_ms` if the server gave one, else from the backoff).
    BackingOff {
        since: u64,
        retry_after_ms: Option<u64>,
        until: Option<u64>,
    },
    /// Over; the journal has been updated once `settled` is set.
    Finished { outcome: Outcome, settled: bool },
}

/// One logical operation (a checkout): its key, its bytes, its retries, its outcome.
///
/// Sans-IO: it never reads a clock, touches the network or draws randomness on its own. Methods
/// fall in three groups, as in quinn's `Connection`:
///
/// - getters (`&self`): [`name`](Self::name), [`key`](Self::key), [`attempts`](Self::attempts),
///   [`payload`](Self::payload), [`outcome`](Self::outcome), ...
/// - inputs (`handle_*`): [`handle_reply`](Self::handle_reply),
///   [`handle_network_error`](Self::handle_network_error),
///   [`handle_timeout`](Self::handle_timeout);
/// - output: [`poll`](Self::poll), which returns the next [`Action`].
///
/// # Call order
///
/// 1. [`Operation::start`] (or [`Operation::resume`]): mints or reloads the key and, for a new
///    operation, writes it to the journal. No `Send` can exist before that write succeeded.
///    Where other writers share the journal without a lock, [`Operation::start_unlocked`] and
///    [`Unconfirmed::confirm`] instead.
/// 2. Call [`poll`](Self::poll) with the current time:
///    - [`Action::Send`]: send it; when its fate is known call exactly one `handle_*`, then poll
///      again. (Polling while it is out returns `WaitUntil(deadline)`; polling at or past the
///      deadline counts the attempt as timed out, so a driver may skip `handle_timeout`.)
///    - [`Action::WaitUntil`]: sleep until then (or until an input arrives), then poll again.
///    - [`Action::Finished`]: done; the journal record has been replaced by a settled entry
///      (final outcomes: key and fingerprint, kept for the rest of the retry window) or marked
///      unknown. Further polls return the same outcome.
///
/// A reply that arrives late (after its attempt timed out) is still used when it is final
/// (2xx or a rejection): it is an answer for the same key. Late retryable replies are ignored.
///
/// ```
/// use idem_client::{Action, MemoryJournal, Operation, OperationSpec, OutcomeKind, Reply, RetryPolicy};
/// use serde_json::json;
///
/// let mut journal = MemoryJournal::new();
/// // Any `rand_core::RngCore` (the simulator passes its seeded ChaCha8Rng).
/// # struct Zero; impl rand_core::RngCore for Zero {
/// #   fn next_u32(&mut self) -> u32 { 0 } fn next_u64(&mut self) -> u64 { 0 }
/// #   fn fill_bytes(&mut self, d: &mut [u8]) { d.fill(0) } }
/// let mut rng = Zero;
/// let spec = OperationSpec::post("checkout:cart-42", json!({ "amount": 1299, "currency": "EUR" }));
/// let mut op = Operation::start(spec, RetryPolicy::default(), 0, &mut journal, &mut uuid::Uuid::new_v4)?;
///
/// let Action::Send(first) = op.poll(0, &mut journal, &mut rng) else { unreachable!() };
/// op.handle_reply(10, Reply::new(503, ""));
/// assert_eq!(op.poll(10, &mut journal, &mut rng), Action::WaitUntil(510));
/// let Action::Send(second) = op.poll(510, &mut journal, &mut rng) else { unreachable!() };
/// assert_eq!((first.key, &first.body), (second.key, &second.body));
/// op.handle_reply(520, Reply::new(201, r#"{"order":1}"#));
/// let Action::Finished(outcome) = op.poll(520, &mut journal, &mut rng) else { unreachable!() };
/// assert!(matches!(outcome.kind, OutcomeKind::Succeeded { status: 201, .. }));
/// assert_eq!(outcome.attempts, 2);
/// # Ok::<(), idem_client::StartError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Operation {
    name: String,
    key: Option<Uuid>,
    method: Method,
    payload: CanonicalPayload,
    created_at: u64,
    attempts: u32,
    failures: u32,
    policy: RetryPolicy,
    durability: Durability,
    last_error: Option<Failure>,
    state: State,
}

impl Operation {
    fn new(
        name: String,
        key: Option<Uuid>,
        method: Method,
        payload: CanonicalPayload,
        now: u64,
        policy: RetryPolicy,
        durability: Durability,
    ) -> Self {
        Operation {
            name,
            key,
            method,
            payload,
            created_at: now,
            attempts: 0,
            failures: 0,
            policy,
            durability,
            last_error: None,
            state: State::Ready,
        }
    }

    fn from_record(record: Record, policy: RetryPolicy) -> Self {
        let last_error = match record.state {
            RecordState::Pending => None,
            RecordState::Unknown { last_error } => last_error,
        };
        Operation {
            name: record.name,
            key: Some(record.key),
            method: record.method,
            payload: CanonicalPayload {
                json: record.body,
                fingerprint: record.fingerprint,
            },
            created_at: record.created_at,
            attempts: record.attempts,
            failures: 0,
            policy,
            durability: Durability::Journaled,
            last_error,
            state: State::Ready,
        }
    }

    /// The operation continuing a settled entry with the request's own payload (the entry
    /// keeps no body): same key, creation time and attempt count.
    fn from_settled(
        settled: SettledRecord,
        payload: CanonicalPayload,
        policy: RetryPolicy,
    ) -> Self {
        let mut op = Operation::new(
            settled.name,
            Some(settled.key),
            settled.method,
            payload,
            settled.created_at,
            policy,
            Durability::Journaled,
        );
        op.attempts = settled.attempts;
        op
    }

    fn in_memory_only(mut self) -> Self {
        self.durability = Durability::MemoryOnly;
        self
    }

    /// The journal record describing this operation now (an unkeyed one shows the nil key).
    pub fn record(&self) -> Record {
        let state = match &self.state {
            State::Finished {
                outcome:
                    Outcome {
                        kind: OutcomeKind::Unknown { last_error },
                        ..
                    },
                ..
            } => RecordState::Unknown {
                last_error: last_error.clone(),
            },
            _ => RecordState::Pending,
        };
        Record {
            version: Record::format_for(&state),
            name: self.name.clone(),
            key: self.key.unwrap_or_default(),
            method: self.method,
            body: self.payload.json.clone(),
            fingerprint: self.payload.fingerprint.clone(),
            attempts: self.attempts,
            created_at: self.created_at,
            state,
        }
    }

    /// The operation's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The idempotency key (`None` when sent without one).
    pub fn key(&self) -> Option<Uuid> {
        self.key
    }

    /// The HTTP method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The canonical payload and its fingerprint.
    pub fn payload(&self) -> &CanonicalPayload {
        &self.payload
    }

    /// Attempts sent so far, across reloads.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// When the operation was created (ms).
    pub fn created_at(&self) -> u64 {
        self.created_at
    }

    /// Where the key lives.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The last retryable failure seen.
    pub fn last_error(&self) -> Option<&Failure> {
        self.last_error.as_ref()
    }

    /// The outcome, once finished.
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.state {
            State::Finished { outcome, .. } => Some(outcome),
            _ => None,
        }
    }

    /// Whether an attempt is out awaiting its reply.
    pub fn is_awaiting_reply(&self) -> bool {
        matches!(self.state, State::AwaitingReply { .. })
    }

    /// Input: the reply to the attempt that is out.
    ///
    /// As [`Reply::class`] says: 2xx finishes as succeeded (replayed if `reply.replayed`); 409,
    /// 429 and 5xx back off (waiting `Retry-After` when given) and retry with the same key;
    /// 412 (the server's expired-key guard) finishes as unknown
    /// ([`Failure::KeyExpired`]); every other status (422, 400, 404, ...) finishes as rejected.
    /// Neither is ever retried, and no new key is minted.
    pub fn handle_reply(&mut self, now: u64, reply: Reply) {
        let awaiting = matches!(self.state, State::AwaitingReply { .. });
        if matches!(self.state, State::Finished { .. }) {
            return;
        }
        let status = reply.status;
        let kind = match reply.class() {
            ReplyClass::Succeeded { replayed: true } => OutcomeKind::Replayed {
                status,
                body: reply.body,
            },
            ReplyClass::Succeeded { replayed: false } => OutcomeKind::Succeeded {
                status,
                body: reply.body,
            },
            ReplyClass::RetryAfter(retry_after_ms) => {
                if awaiting {
                    self.fail(now, Failure::Status { status }, retry_after_ms);
                }
                return;
            }
            ReplyClass::KeyExpired => {
                self.last_error = Some(Failure::KeyExpired);
                OutcomeKind::Unknown {
                    last_error: self.last_error.clone(),
                }
            }
            ReplyClass::Rejected => {
                let problem = Problem::parse(&reply.body);
                OutcomeKind::Rejected {
                    status,
                    body: reply.body,
                    problem,
                }
            }
        };
        self.finish(kind);
    }

    /// Input: the attempt that is out got no reply within its deadline (the driver aborted it).
    /// Ignored when no attempt is out.
    pub fn handle_timeout(&mut self, now: u64) {
        if matches!(self.state, State::AwaitingReply { .. }) {
            self.fail(now, Failure::Timeout, None);
        }
    }

    /// Input: the attempt that is out failed in transport (request or response lost). Ignored
    /// when no attempt is out.
    pub fn handle_network_error(&mut self, now: u64, message: impl Into<String>) {
        if matches!(self.state, State::AwaitingReply { .. }) {
            self.fail(
                now,
                Failure::Network {
                    message: message.into(),
                },
                None,
            );
        }
    }

    /// Input: what the server's key-state endpoint said about this operation's key, asked to
    /// reconcile an unknown outcome (or a pending one, say after a reload). [`KeyState::Done`]
    /// finishes the operation with the saved answer, read as a reply under this key would be
    /// (a 2xx is [`OutcomeKind::Replayed`], a rejection [`OutcomeKind::Rejected`]), and the next
    /// [`poll`](Self::poll) settles the journal; the other states change nothing. After
    /// [`KeyState::Released`] the work did not complete and the key is free for this payload
    /// alone: the caller sends again (a resumed operation, same key and bytes) while the retry
    /// window is open. [`KeyState::BoundToAnotherRequest`] finishes it as the refusal any
    /// attempt of this payload would get under the key ([`OutcomeKind::Rejected`], 422, with
    /// problem details saying why): the payload never ran under it. Returns whether the
    /// operation is finished.
    pub fn handle_key_state(&mut self, now: u64, state: &KeyState) -> bool {
        match state {
            KeyState::Done { status, body } => {
                // No attempt is out, so a retryable status (which no server saves) changes
                // nothing.
                self.handle_reply(now, Reply::new(*status, body.clone()).replayed());
            }
            KeyState::BoundToAnotherRequest => {
                self.handle_reply(now, Reply::new(422, BOUND_TO_ANOTHER_REQUEST));
            }
            KeyState::InFlight { .. } | KeyState::Released | KeyState::NotFound => {}
        }
        matches!(self.state, State::Finished { .. })
    }

    /// Output: the next action at `now`.
    ///
    /// Before each `Send` the attempt count is written to `journal` (a failure there is
    /// tolerated: the key itself is already persisted). Once finished, the record is replaced by
    /// a settled entry (final outcomes) or marked unknown, once; a failure there is tolerated
    /// too, since a leftover record only resumes under the same key, which the server replays.
    /// The wait after a retryable failure is [`retry_delay_ms`](crate::retry_delay_ms) (a
    /// `Retry-After` below the backoff floor is not trusted); backoff jitter is drawn from `rng`.
    pub fn poll(&mut self, now: u64, journal: &mut dyn Journal, rng: &mut dyn RngCore) -> Action {
        loop {
            match &mut self.state {
                State::Finished { outcome, settled } => {
                    // One clone for both cases (each `Outcome::clone` call is code of its own).
                    let first = !core::mem::replace(settled, true);
                    let outcome = outcome.clone();
                    if first {
                        self.settle(now, journal, &outcome);
                    }
                    return Action::Finished(outcome);
                }
                State::AwaitingReply { deadline } => {
                    if now < *deadline {
                        return Action::WaitUntil(*deadline);
                    }
                    self.fail(now, Failure::Timeout, None);
                }
                State::BackingOff {
                    since,
                    retry_after_ms,
                    until: None,
                } => {
                    let (since, retry_after_ms) = (*since, *retry_after_ms);
                    let delay = retry_delay_ms(&self.policy, self.failures, retry_after_ms, rng);
                    let at = since.saturating_add(delay);
                    if at >= self.window_end() {
                        self.give_up();
                    } else {
                        self.state = State::BackingOff {
                            since,
                            retry_after_ms,
                            until: Some(at),
                        };
                    }
                }
                State::BackingOff {
                    until: Some(at), ..
                } => {
                    if now < *at {
                        return Action::WaitUntil(*at);
                    }
                    self.state = State::Ready;
                }
                State::Ready => {
                    let out_of_attempts = self
                        .policy
                        .max_attempts
                        .is_some_and(|max| self.attempts >= max);
                    if out_of_attempts || now >= self.window_end() {
                        self.give_up();
                        continue;
                    }
                    return Action::Send(self.send(now, journal));
                }
            }
        }
    }

    /// The first instant at which no attempt may be sent any more.
    fn window_end(&self) -> u64 {
        self.created_at.saturating_add(self.policy.retry_window_ms)
    }

    fn send(&mut self, now: u64, journal: &mut dyn Journal) -> Attempt {
        self.attempts = self.attempts.saturating_add(1);
        if self.durability == Durability::Journaled {
            // Tolerated: the key and bytes are already journaled; only the count would be stale.
            let _ = journal.save(&self.record());
        }
        let deadline = now.saturating_add(self.policy.attempt_timeout_ms);
        self.state = State::AwaitingReply { deadline };
        let body = if self.method.has_body() {
            self.payload.json.clone().into_bytes()
        } else {
            Vec::new()
        };
        Attempt {
            key: self.key,
            method: self.method,
            body,
            number: self.attempts,
            deadline,
            first_sent: self.created_at,
        }
    }

    fn fail(&mut self, now: u64, failure: Failure, retry_after_ms: Option<u64>) {
        self.failures = self.failures.saturating_add(1);
        self.last_error = Some(failure);
        self.state = State::BackingOff {
            since: now,
            retry_after_ms,
            until: None,
        };
    }

    fn give_up(&mut self) {
        self.finish(OutcomeKind::Unknown {
            last_error: self.last_error.clone(),
        });
    }

    fn finish(&mut self, kind: OutcomeKind) {
        let outcome = Outcome {
            name: self.name.clone(),
            kind,
            key: self.key.map(key_string),
            attempts: self.attempts,
            durability: self.durability,
        };
        self.state = State::Finished {
            outcome,
            settled: false,
        };
    }

    /// Writes the outcome to the journal: an unknown one keeps the open record (to reconcile);
    /// a final one replaces it with a settled entry (key and fingerprint, no body), kept until
    /// the retry window that began at the operation's creation closes.
    fn settle(&self, now: u64, journal: &mut dyn Journal, outcome: &Outcome) {
        if self.durability != Durability::Journaled {
            return;
        }
        let status = match &outcome.kind {
            OutcomeKind::Unknown { .. } => {
                // Failures tolerated, see `poll`.
                let _ = journal.save(&self.record());
                return;
            }
            OutcomeKind::Succeeded { status, .. }
            | OutcomeKind::Replayed { status, .. }
            | OutcomeKind::Rejected { status, .. } => *status,
        };
        let settled = SettledRecord {
            version: SETTLED_FORMAT_VERSION,
            name: self.name.clone(),
            key: self.key.unwrap_or_default(),
            method: self.method,
            fingerprint: self.payload.fingerprint.clone(),
            attempts: self.attempts,
            created_at: self.created_at,
            settled_at: now,
            expires_at: self.window_end(),
            status,
        };
        // Tolerated too: a leftover open record only resumes under the same key.
        let _ = journal.save_settled(&settled);
    }
}

/// A key as the hyphenated lowercase text the header carries (without `core::fmt`).
pub(crate) fn key_string(key: Uuid) -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    key.hyphenated().encode_lower(&mut buf).to_owned()
}
