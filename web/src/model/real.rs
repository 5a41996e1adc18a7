//! Real-server mode as the panels show it: plain data that the controller (`real/`) fills from
//! idem-server's answers and event stream and from the page's own attempts.
//!
//! Two records here are kept whole for whoever draws a run (the sequence diagram): every
//! attempt the page sent and what came back ([`Exchange`]), and every event the server sent for
//! this session's tenant ([`ServerEvent`]). Times are milliseconds since the epoch as the
//! browser (`Date.now()`) and the server (on the same machine) read them.

use std::rc::Rc;

/// Where the page stands with idem-server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Asking `GET /api/demo`.
    Connecting,
    /// The server answered; its event stream is open (or reconnecting by itself).
    Up,
    /// The event stream dropped; the browser reconnects by itself.
    Reconnecting,
    /// The server did not answer, or not as idem-server in demo mode would: why, in words.
    Down(String),
}

/// What the key-state endpoint said when the page reconciled its checkout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reconciled {
    /// The question is out.
    Asking,
    /// The work finished: the saved answer's status (the checkout is settled with it).
    Done(u16),
    /// A worker holds (or held) the claim.
    InFlight {
        /// How long ago the current lease was taken, ms.
        lease_age_ms: u64,
        /// How long until a retry may take the claim over, ms (0: stale).
        lease_left_ms: u64,
    },
    /// Released after a failure that saved no answer: the work did not complete, and the key
    /// is free for this checkout's own request (sent again, same key and body).
    Released,
    /// No live claim under the key.
    NotFound,
    /// The key holds another request (another cart under the same key): this checkout's never
    /// ran under it (settled as the 422 any attempt of it would get).
    AnotherRequest,
    /// Nothing learned: why.
    Failed(String),
}

/// How one attempt ended, as the page saw it. (Serialize: the page keeps its attempts across a
/// reload, `real/seen.rs`, which reads them back.)
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Answer {
    /// Still out.
    Open,
    /// A reply arrived.
    Reply {
        /// When, ms since the epoch.
        at: u64,
        /// The HTTP status.
        status: u16,
        /// `Idempotent-Replayed: true` was there.
        replayed: bool,
        /// `Retry-After`, as the SDK read it (ms).
        retry_after_ms: Option<u64>,
        /// The body, as text (lossy UTF-8).
        body: String,
    },
    /// Aborted at its deadline (no reply within the attempt timeout).
    TimedOut {
        /// When, ms since the epoch.
        at: u64,
    },
    /// `fetch` rejected: the connection closed unanswered, or the server is not there.
    Failed {
        /// When, ms since the epoch.
        at: u64,
        /// The browser's message.
        message: String,
    },
}

/// One attempt the page sent: what went out and what came back.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Exchange {
    /// The checkout (`co_N`).
    pub checkout: String,
    /// Attempt number (1-based, counted across reloads).
    pub number: u32,
    /// The `Idempotency-Key` header sent.
    pub key: String,
    /// When it left, ms since the epoch.
    pub sent_at: u64,
    /// The request body, the same bytes on every attempt.
    pub body: String,
    /// How it ended.
    pub answer: Answer,
}

/// One event of the tenant's stream (`GET /api/events`), as the server sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEvent {
    /// The server's sequence number (global: other tenants' events take numbers too).
    pub seq: u64,
    /// When, ms since the epoch (the server's clock).
    pub at: u64,
    /// The idempotency key concerned (empty when the request had none).
    pub key: String,
    /// What happened.
    pub kind: ServerEventKind,
}

/// What a [`ServerEvent`] says, by the server's `kind.type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerEventKind {
    /// A new claim, lease `token`.
    Claimed(u64),
    /// A stale claim taken over: old and new token.
    TakenOver(u64, u64),
    /// A response saved by lease `token`: its status.
    Saved(u64, u16),
    /// A claim released by lease `token` (the work failed; a retry runs it again).
    Released(u64),
    /// A write by a lost lease refused.
    Fenced(u64),
    /// A saved answer replayed: its status.
    Replayed(u16),
    /// A request refused: 400, 409, 413 or 422.
    Rejected(u16),
    /// A finished record removed after retention.
    Pruned,
    /// Demo mode's notes: `payco: …` (PayCo answered a charge) or `fault: <name>: …`.
    Note(String),
}

/// Where a real checkout stands, as the page knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckoutState {
    /// The SDK is still trying.
    Pending,
    /// A 2xx: paid; `replayed` when the answer was the server's saved one.
    Paid {
        /// `Idempotent-Replayed: true` (or learned by reconciling).
        replayed: bool,
    },
    /// A final refusal (402 declined, 422…): its status.
    Refused(u16),
    /// The retry window closed without a final answer.
    Unknown,
}

impl CheckoutState {
    /// The `data-state` value.
    pub fn value(self) -> &'static str {
        match self {
            CheckoutState::Pending => "pending",
            CheckoutState::Paid { replayed: false } => "paid",
            CheckoutState::Paid { replayed: true } => "replayed",
            CheckoutState::Refused(_) => "refused",
            CheckoutState::Unknown => "unknown",
        }
    }
}

/// A checkout the Pay button started, in real mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealCheckout {
    /// Its name, `co_N`.
    pub name: String,
    /// Its idempotency key.
    pub key: String,
    /// Where it stands.
    pub state: CheckoutState,
    /// What the key-state endpoint said, once asked.
    pub reconciled: Option<Reconciled>,
}

/// Real mode's own part of the view (the tables, feed and ledger use the shared rows).
#[derive(Clone, Debug, PartialEq)]
pub struct RealInfo {
    /// The idem-server the page talks to (`http://127.0.0.1:8000`).
    pub server: String,
    /// This page session's tenant, `demo-<uuid>`: the scope of all its rows.
    pub tenant: String,
    /// When the session started, ms since the epoch (the panels count time from here).
    pub t0: u64,
    /// Where the page stands with the server.
    pub link: Link,
    /// The server's lease length (`GET /api/demo`), once known.
    pub lock_ms: Option<u64>,
    /// Something went wrong that is not the server being down (a refused fault set, a body
    /// the page cannot read): shown, never a panic.
    pub notice: Option<String>,
    /// The last checkout Pay started.
    pub checkout: Option<RealCheckout>,
    /// The next checkout pays with PayCo's declining test card.
    pub decline_next: bool,
    /// Every attempt sent this session, in order.
    pub exchanges: Rc<Vec<Exchange>>,
    /// Every event of the tenant's stream, in order.
    pub events: Rc<Vec<ServerEvent>>,
}
