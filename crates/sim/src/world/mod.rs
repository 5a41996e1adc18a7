//! The world: one event queue, one generator, and the actors (clients, network, server, PayCo).
//!
//! # Call order
//!
//! 1. [`World::new`] with a [`SimConfig`]: schedules the scripted checkouts.
//! 2. Drive it: [`World::step`] (one event), [`World::run_until`] (virtual time), [`World::run`]
//!    (until nothing is pending) or [`World::finish`] (run, stop the faults, reconcile unknown
//!    outcomes, check). Between steps, interactive controls ([`World::start_checkout`],
//!    [`World::reload`], [`World::drop_next_request`], [`World::set_faults`], ...) are recorded
//!    as [`Input`]s so a run can be replayed.
//! 3. Read: [`World::store`], [`World::payco`], [`World::history`], [`World::counters`],
//!    [`World::verdict`], [`World::history_hash`], [`World::export`].

mod client;
mod server;
mod slab;
mod view;

use serde::{Deserialize, Serialize};

use idem_client::{Journal, MemoryJournal, RetryPolicy};
use idem_store::{Store, StoreConfig};

use crate::bug::BugFlags;
use crate::checker::Checker;
use crate::config::{ClientConfig, Faults, HistoryDetail, ServerConfig, SimConfig, Strategy};
use crate::counters::Counters;
use crate::history::History;
use crate::ids::CheckoutId;
use crate::network::Network;
use crate::payco::PayCo;
use crate::queue::EventQueue;
use crate::rng::SimRng;
use crate::SimError;

pub use client::{body_for, op_name};
pub use view::HistoryExport;

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
    /// A buggy page sends another cart under this checkout's key.
    OtherCart(CheckoutId),
}

/// An interactive control, as recorded for replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Command {
    /// Start one checkout.
    StartCheckout {
        /// Its strategy.
        strategy: Strategy,
        /// Its amount (drawn when `None`).
        amount: Option<u32>,
        /// Whether the host supplied the journal (a replay uses a memory journal instead).
        host_journal: bool,
    },
    /// Reload a checkout's tab.
    Reload {
        /// Which.
        checkout: CheckoutId,
    },
    /// Lose the next request.
    DropNextRequest,
    /// Lose the next response.
    DropNextResponse,
    /// New fault rates.
    SetFaults(Faults),
    /// New server knobs.
    SetServer(ServerConfig),
    /// New client policy (for checkouts started from now on).
    SetClient(ClientConfig),
    /// The next worker dies after its charge, before its save.
    CrashNextAfterCharge,
    /// The next worker is slow: its charge comes after its lease went stale.
    SlowNextWorker,
    /// PayCo declines the next charge: the work fails.
    DeclineNextCharge,
    /// The page sends a request again under a checkout's key, now.
    Resend {
        /// Which checkout's key.
        checkout: CheckoutId,
        /// With a different cart (amount + 1): the store must answer 422.
        other_cart: bool,
    },
}

/// A control applied at virtual time `at`, after `after_events` events had run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Virtual time.
    pub at: u64,
    /// Events run before it.
    pub after_events: u64,
    /// What.
    pub command: Command,
}

/// A seeded, deterministic world. See the [module docs](self) for the call order.
pub struct World {
    config: SimConfig,
    bugs: BugFlags,
    rng: SimRng,
    now: u64,
    events_run: u64,
    queue: EventQueue<Ev>,
    net: Network,
    server: Server,
    payco: PayCo,
    clients: Vec<Client>,
    requests: Slab<client::Request>,
    responses: Slab<client::Response>,
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
}

/// Armed one-shot worker and PayCo faults.
#[derive(Clone, Copy, Debug, Default)]
struct OneShots {
    crash: bool,
    slow: bool,
    decline: bool,
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

/// Retention the short-retention bug uses: well under one client timeout plus backoff.
pub const SHORT_RETENTION_MS: u64 = 500;

fn store_config(s: &ServerConfig, bugs: BugFlags, detail: HistoryDetail) -> StoreConfig {
    StoreConfig {
        lock_ms: s.lock_ms,
        retention_ms: if bugs.short_retention {
            s.retention_ms.min(SHORT_RETENTION_MS)
        } else {
            s.retention_ms
        },
        event_capacity: match detail {
            HistoryDetail::Full => StoreConfig::DEFAULT_EVENT_CAPACITY,
            HistoryDetail::Outcomes => 0,
        },
        ..StoreConfig::default()
    }
}

impl World {
    /// A world at time 0 with its scripted checkouts scheduled.
    pub fn new(config: SimConfig) -> World {
        let bugs = BugFlags::from_list(&config.bugs);
        let store = Store::new(store_config(&config.server, bugs, config.history));
        let mut world = World {
            bugs,
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

    /// Events run so far.
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

    /// Run the next event; false when nothing was pending.
    pub fn step(&mut self) -> bool {
        let Some((at, ev)) = self.queue.pop() else {
            return false;
        };
        self.now = self.now.max(at);
        self.events_run += 1;
        match ev {
            Ev::Script => self.script_next(),
            Ev::Timer(c, epoch) => self.on_timer(c, epoch),
            Ev::Arrive(slot) => self.on_arrive(slot),
            Ev::Insert(job) => self.on_insert(job),
            Ev::Work(job, phase) => self.on_work(job, phase),
            Ev::Reply(slot) => self.on_reply(slot),
            Ev::Reload(c) => self.on_reload(c),
            Ev::Reloaded(c) => self.on_reloaded(c),
            Ev::OtherCart(c) => self.on_other_cart(c),
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

    fn record_input(&mut self, command: Command) {
        self.inputs.push(Input {
            at: self.now,
            after_events: self.events_run,
            command,
        });
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

    /// Start one checkout now with `strategy`; returns its id.
    pub fn start_checkout(&mut self, strategy: Strategy) -> Result<CheckoutId, SimError> {
        self.start_checkout_with(strategy, None, None)
    }

    /// Start one checkout now, with a chosen amount and, for same-key pages, a host-supplied
    /// journal (e.g. the browser's localStorage) so the record the page shows is the real one.
    /// Without one, the world's shared memory journal is used.
    pub fn start_checkout_with(
        &mut self,
        strategy: Strategy,
        amount: Option<u32>,
        journal: Option<Box<dyn Journal>>,
    ) -> Result<CheckoutId, SimError> {
        self.record_input(Command::StartCheckout {
            strategy,
            amount,
            host_journal: journal.is_some(),
        });
        let amount = match amount {
            Some(a) => a,
            None => self.draw_amount(),
        };
        let journal = match journal {
            Some(j) => {
                self.journals.push(j);
                self.journals.len() - 1
            }
            None => 0,
        };
        self.begin_checkout(strategy, amount, journal)
    }

    /// Reload a checkout's tab: its memory is lost, its journal kept.
    pub fn reload(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        if checkout.0 as usize >= self.clients.len() {
            return Err(SimError::NoSuchCheckout(checkout.0));
        }
        self.record_input(Command::Reload { checkout });
        self.on_reload(checkout);
        Ok(())
    }

    /// One-shot: the next request is lost.
    pub fn drop_next_request(&mut self) {
        self.record_input(Command::DropNextRequest);
        self.net.drop_next_request();
    }

    /// One-shot: the next response is lost.
    pub fn drop_next_response(&mut self) {
        self.record_input(Command::DropNextResponse);
        self.net.drop_next_response();
    }

    /// One-shot: the next worker crashes after PayCo charged, before it saves.
    pub fn crash_next_after_charge(&mut self) {
        self.record_input(Command::CrashNextAfterCharge);
        self.oneshot.crash = true;
    }

    /// One-shot: the next worker is slow; its charge comes `lock_ms + slow_extra_ms` late, after
    /// its lease went stale.
    pub fn slow_next_worker(&mut self) {
        self.record_input(Command::SlowNextWorker);
        self.oneshot.slow = true;
    }

    /// One-shot: PayCo declines the next charge (the work fails; see `ServerConfig::on_error`).
    pub fn decline_next_charge(&mut self) {
        self.record_input(Command::DeclineNextCharge);
        self.oneshot.decline = true;
    }

    /// Whether the one-shots (crash after charge, slow worker, decline) are armed.
    pub fn armed_worker_faults(&self) -> (bool, bool, bool) {
        (self.oneshot.crash, self.oneshot.slow, self.oneshot.decline)
    }

    /// The page sends the checkout's request again under its key, now (a double click).
    pub fn resend_same_cart(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        self.resend(checkout, false)
    }

    /// A buggy page sends a different cart (amount + 1) under the checkout's key, now: the store
    /// answers 422 (or, with the no-fingerprint-check bug, replays the wrong answer).
    pub fn resend_with_other_cart(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        self.resend(checkout, true)
    }

    fn resend(&mut self, checkout: CheckoutId, other_cart: bool) -> Result<(), SimError> {
        if checkout.0 as usize >= self.clients.len() {
            return Err(SimError::NoSuchCheckout(checkout.0));
        }
        self.record_input(Command::Resend {
            checkout,
            other_cart,
        });
        self.send_extra(checkout, u32::from(other_cart));
        Ok(())
    }

    /// New fault rates from now on.
    pub fn set_faults(&mut self, faults: Faults) {
        self.record_input(Command::SetFaults(faults.clone()));
        self.net.set_faults(faults);
    }

    /// New server knobs from now on. `lock_ms` and `retention_ms` change on the running store;
    /// its table and event log carry on.
    pub fn set_server(&mut self, server: ServerConfig) {
        self.record_input(Command::SetServer(server.clone()));
        let store_cfg = store_config(&server, self.bugs, self.config.history);
        self.server.reconfigure(server, store_cfg);
    }

    /// New client policy for checkouts started from now on.
    pub fn set_client(&mut self, client: ClientConfig) {
        self.record_input(Command::SetClient(client.clone()));
        self.policy = retry_policy(&client);
        self.client_cfg = client;
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
