//! The world: one event queue, one generator, and the actors (pages, network, server, PayCo).
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the [`World`], its event loop and clock |
//! | `input.rs` | [`Command`], [`Input`], [`World::apply`] (the one way to change a running world) and replay |
//! | `client.rs` | the pages: naive ones, and same-key ones driving idem-client's `Operation` |
//! | `wire.rs` | the network, both ways: requests to the server, answers back as the client's `Reply` |
//! | `server.rs` | the checkout handler on idem-store: claim, order, charge, save |
//! | `bugs.rs` | the classic bugs, one named function each, and the steps they replace |
//! | `recovery.rs` | the handler's recovery points (the order of a key and payload) |
//! | `outbox.rs` | the outbox's relay and the receipts consumer: passes, deliveries, acknowledgements |
//! | `view.rs` | read-only views and the end-of-run checks |
//! | `export.rs` | [`HistoryExport`] and [`World::replay`] |
//!
//! # Call order
//!
//! 1. [`World::new`] with a [`SimConfig`]: schedules the scripted checkouts.
//! 2. Drive it: [`World::step`] (one event), [`World::run_until`] (virtual time), [`World::run`]
//!    (until nothing is pending) or [`World::finish`] (run, stop the faults, reconcile unknown
//!    outcomes, check). Between steps, change it only through [`World::apply`] (or the control
//!    methods that wrap it: [`World::start_checkout`], [`World::drop_next_request`], ...): each
//!    change is recorded as an [`Input`], so [`World::replay`] rebuilds the run.
//! 3. Read: [`World::store`], [`World::payco`], [`World::history`], [`World::counters`],
//!    [`World::verdict`], [`World::history_hash`], [`World::export`].

mod bugs;
mod client;
mod export;
mod input;
mod outbox;
mod recovery;
mod server;
mod slab;
mod view;
mod wire;

use idem_client::{Journal, MemoryJournal, RetryPolicy};
use idem_store::{Store, StoreConfig};

use crate::checker::Checker;
use crate::config::{ClientConfig, HistoryDetail, ServerConfig, SimConfig};
use crate::counters::Counters;
use crate::history::{Fate, History, Message, MessageId, MessageKind, Step, StepKind};
use crate::ids::CheckoutId;
use crate::network::Network;
use crate::outbox::Outbox;
use crate::payco::PayCo;
use crate::queue::EventQueue;
use crate::rng::SimRng;

pub use client::{body_for, op_name};
pub use export::{HistoryExport, FORMAT as EXPORT_FORMAT};
pub use input::{Command, Drive, Input};
pub use outbox::RELAY_INTERVAL_MS;

use bugs::Steps;
use client::Client;
use server::Server;
use slab::Slab;

/// The store scope (tenant) every checkout uses.
pub const SCOPE: &str = "shop";

/// The checkout route's operation, which the store's fingerprint binds with the body.
pub const OPERATION: &str = "POST /api/checkout";

/// What the world does at an instant. Small and `Copy`: payloads live in slabs.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The next scripted checkout starts.
    Script,
    /// A client's timer (timeout or end of backoff); stale unless `epoch` is current.
    Timer(CheckoutId, u32),
    /// A request reaches the server.
    Arrive(u32),
    /// SELECT-then-INSERT bug: the insert, after the gap.
    Insert(u32),
    /// The next step of a handler job.
    Work(u32, server::Phase),
    /// A response reaches its client.
    Reply(u32),
    /// A tab reloads.
    Reload(CheckoutId),
    /// A reloaded tab is back.
    Reloaded(CheckoutId),
    /// The page sends a request again under this checkout's key (`true`: another cart).
    Resend(CheckoutId, bool),
    /// The outbox's relay sends every unsent message.
    RelayPass,
    /// A relay delivery of this outbox message reaches the consumer.
    Deliver(u32),
    /// The consumer's acknowledgement of this outbox message reaches the relay.
    Ack(u32),
}

impl Ev {
    /// The outbox's relay, deliveries and acknowledgements: events [`World::step`] does not
    /// count.
    fn is_outbox(&self) -> bool {
        matches!(self, Ev::RelayPass | Ev::Deliver(_) | Ev::Ack(_))
    }
}

/// A seeded, deterministic world. See the [module docs](self) for the call order.
pub struct World {
    config: SimConfig,
    steps: Steps,
    rng: SimRng,
    now: u64,
    events_run: u64,
    queue: EventQueue<Ev>,
    net: Network,
    server: Server,
    payco: PayCo,
    clients: Vec<Client>,
    requests: Slab<wire::Request>,
    responses: Slab<wire::Response>,
    /// The world's memory journal first, then the host's (see [`World::attach_journal`]).
    journals: Vec<Box<dyn Journal>>,
    policy: RetryPolicy,
    client_cfg: ClientConfig,
    history: History,
    checker: Checker,
    counters: Counters,
    inputs: Vec<Input>,
    scripted_left: u32,
    reported_unknown: Vec<CheckoutId>,
    finished: bool,
    reproduce: Option<String>,
    trace: Option<Vec<StoreOp>>,
    oneshot: OneShots,
    props: crate::properties::Tracker,
    /// The outbox table, the relay's progress and the consumer's books.
    outbox: Outbox,
    /// The outbox's faults' own stream: drawn only when there is a message, so it never shifts
    /// the world's.
    outbox_rng: SimRng,
}

/// Armed one-shot worker and PayCo faults.
#[derive(Clone, Copy, Debug, Default)]
struct OneShots {
    crash: bool,
    slow: bool,
    decline: bool,
    payco_timeout: bool,
}

/// One store operation the handler performed, recorded (when asked) so the benchmark can replay
/// the same store work without the rest of the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// Fingerprint the body and `begin` under `key`.
    Begin {
        /// Virtual time.
        at: u64,
        /// The checkout (the body is rebuilt from it and `amount`).
        checkout: CheckoutId,
        /// The amount sent.
        amount: u32,
        /// The key.
        key: uuid::Uuid,
    },
    /// The fenced one-step commit of the response.
    Commit {
        /// Virtual time.
        at: u64,
        /// The key.
        key: uuid::Uuid,
    },
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("seed", &self.config.seed)
            .field("now", &self.now)
            .field("events_run", &self.events_run)
            .field("checkouts", &self.clients.len())
            .finish_non_exhaustive()
    }
}

fn retry_policy(c: &ClientConfig) -> RetryPolicy {
    RetryPolicy {
        initial_backoff_ms: c.backoff_base_ms,
        max_backoff_ms: c.backoff_cap_ms,
        jitter: true,
        attempt_timeout_ms: c.timeout_ms,
        retry_window_ms: c.retry_window_ms,
        max_attempts: None,
    }
}

/// Mixed into the seed for the outbox's stream (any constant other than the swarm's).
const OUTBOX_STREAM: u64 = 0x0b0c_0b0c_0b0c_0b0c;

/// Retention the short-retention bug uses: well under one client timeout plus backoff.
pub const SHORT_RETENTION_MS: u64 = 500;

fn store_config(s: &ServerConfig, steps: &Steps, detail: HistoryDetail) -> StoreConfig {
    StoreConfig {
        lock_ms: s.lock_ms,
        retention_ms: (steps.retention)(s.retention_ms),
        event_capacity: match detail {
            HistoryDetail::Full => StoreConfig::DEFAULT_EVENT_CAPACITY,
            HistoryDetail::Outcomes => 0,
        },
        first_sent_tolerance_ms: s.expired_key_guard.then_some(0),
        ..StoreConfig::default()
    }
}

impl World {
    /// A world at time 0 with its scripted checkouts scheduled.
    pub fn new(config: SimConfig) -> World {
        let steps = Steps::for_bugs(&config.bugs);
        let store = Store::new(store_config(&config.server, &steps, config.history));
        let mut world = World {
            steps,
            rng: SimRng::new(config.seed),
            now: 0,
            events_run: 0,
            queue: EventQueue::default(),
            net: Network::new(config.faults.clone()),
            server: Server::new(store, config.server.clone()),
            payco: PayCo::default(),
            clients: Vec::new(),
            requests: Slab::default(),
            responses: Slab::default(),
            journals: vec![Box::new(MemoryJournal::new())],
            policy: retry_policy(&config.client),
            client_cfg: config.client.clone(),
            history: History::default(),
            checker: Checker::new(),
            counters: Counters::default(),
            inputs: Vec::new(),
            scripted_left: config.workload.orders,
            reported_unknown: Vec::new(),
            finished: false,
            reproduce: None,
            trace: None,
            oneshot: OneShots::default(),
            props: crate::properties::Tracker::default(),
            outbox: Outbox::default(),
            outbox_rng: SimRng::new(config.seed ^ OUTBOX_STREAM),
            config,
        };
        if world.scripted_left > 0 {
            world.queue.push(0, Ev::Script);
        }
        world
    }

    /// The config the world was built with (interactive changes not included).
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Virtual time, in milliseconds.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Events run so far, the outbox's left out (see [`step`](Self::step)).
    pub fn events_run(&self) -> u64 {
        self.events_run
    }

    /// When the next event is due, if any.
    pub fn next_event_at(&self) -> Option<u64> {
        self.queue.peek_time()
    }

    /// True when no event is pending.
    pub fn is_idle(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether the next event is the outbox's and due at or before `at` (uncounted: see
    /// [`step`](Self::step)).
    pub(super) fn outbox_event_due(&self, at: u64) -> bool {
        self.queue
            .peek()
            .is_some_and(|(t, ev)| t <= at && ev.is_outbox())
    }

    /// Run the next event; false when nothing was pending.
    pub fn step(&mut self) -> bool {
        let Some((at, ev)) = self.queue.pop() else {
            return false;
        };
        self.now = self.now.max(at);
        // The outbox's events (the relay, its deliveries and acks) are not counted: inputs are
        // placed by this count (`Input::after_events`), and links and exports recorded before
        // the outbox existed must replay their inputs at the same moments. The outbox draws
        // from a stream of its own, so the counted events' order is what it was.
        if !ev.is_outbox() {
            self.events_run += 1;
        }
        match ev {
            Ev::Script => self.script_next(),
            Ev::Timer(c, epoch) => self.on_timer(c, epoch),
            Ev::Arrive(slot) => self.on_arrive(slot),
            Ev::Insert(job) => self.on_insert(job),
            Ev::Work(job, phase) => self.on_work(job, phase),
            Ev::Reply(slot) => self.on_reply(slot),
            Ev::Reload(c) => self.on_reload(c),
            Ev::Reloaded(c) => self.on_reloaded(c),
            Ev::Resend(c, other_cart) => self.send_extra(c, u32::from(other_cart)),
            Ev::RelayPass => self.on_relay_pass(),
            Ev::Deliver(m) => self.on_deliver(m),
            Ev::Ack(m) => self.on_ack(m),
        }
        self.track_properties();
        true
    }

    /// Run every event due at or before `t`, then set the clock to `t`.
    pub fn run_until(&mut self, t: u64) {
        while self.queue.peek_time().is_some_and(|at| at <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Run until nothing is pending.
    pub fn run(&mut self) {
        while self.step() {}
    }

    /// Run to the end, then stop the faults, let every lease go stale, reconcile each unknown
    /// same-key checkout from its journal, run again, and check. Returns the verdict.
    pub fn finish(&mut self) -> crate::Verdict {
        self.run();
        if !self.finished {
            self.finished = true;
            let calm = self.net.faults().calm();
            self.net.set_faults(calm);
            self.now += self.server.config().lock_ms + 1;
            self.reconcile();
            self.run();
            self.end_checks();
            self.track_properties();
        }
        self.verdict()
    }

    fn schedule(&mut self, at: u64, ev: Ev) {
        self.queue.push(at, ev);
    }

    fn script_next(&mut self) {
        if self.scripted_left == 0 {
            return;
        }
        self.scripted_left -= 1;
        let strategy = self.config.workload.strategy;
        let amount = self.draw_amount();
        let journal = 0;
        // A memory journal accepts every write, so this start cannot fail.
        let _ = self.begin_checkout(strategy, amount, journal);
        if self.scripted_left > 0 {
            let gap = self.rng.upto(2 * self.config.workload.spacing_ms);
            self.schedule(self.now + gap, Ev::Script);
        }
    }

    fn draw_amount(&mut self) -> u32 {
        let w = &self.config.workload;
        let (lo, hi) = (u64::from(w.min_amount), u64::from(w.max_amount));
        self.rng.between(lo, hi) as u32
    }

    /// A request reaches the server: the store decides (`server.rs`).
    fn on_arrive(&mut self, slot: u32) {
        let Some(arrival) = self.take_request(slot) else {
            return;
        };
        if self.arrives_late(&arrival.origin) {
            self.mark_late(arrival.origin.message);
        }
        self.handle_request(arrival);
    }

    /// A response reaches its page (`client.rs`).
    fn on_reply(&mut self, slot: u32) {
        if let Some(delivery) = self.take_response(slot) {
            self.handle_reply(delivery);
        }
    }

    /// Whether the history records attempts, messages and steps (not only outcomes).
    fn records_in_full(&self) -> bool {
        self.config.history == HistoryDetail::Full
    }

    /// Record a message sent now; its id (meaningless when the history keeps outcomes only).
    fn record_message(
        &mut self,
        checkout: CheckoutId,
        attempt: u32,
        kind: MessageKind,
        fate: Fate,
    ) -> MessageId {
        let id = self.history.messages.len() as MessageId;
        if self.records_in_full() {
            self.history.messages.push(Message {
                checkout,
                attempt,
                kind,
                sent_at: self.now,
                fate,
                late: false,
            });
        }
        id
    }

    /// Record what a party did now.
    fn record_step(&mut self, checkout: CheckoutId, kind: StepKind) {
        if self.records_in_full() {
            let at = self.now;
            self.history.steps.push(Step { at, checkout, kind });
        }
    }

    /// A copy of message `id` arrived after its receiver stopped waiting for it.
    fn mark_late(&mut self, id: MessageId) {
        if let Some(m) = self.history.messages.get_mut(id as usize) {
            m.late = true;
        }
    }

    /// Record every store operation from now on (see [`World::take_trace`]).
    pub fn record_store_ops(&mut self) {
        self.trace = Some(Vec::new());
    }

    /// The store operations recorded so far.
    pub fn take_trace(&mut self) -> Vec<StoreOp> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Use `command` in the reproduction line the verdict prints.
    pub fn set_reproduce(&mut self, command: String) {
        self.reproduce = Some(command);
    }
}
