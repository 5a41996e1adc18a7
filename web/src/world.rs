//! Adapter between the page and idem-sim's [`World`]: turns page commands into world calls
//! and the world's state into the panels' [`Snapshot`].
//!
//! The world runs in virtual time only; the driver decides how much to ask for. Nothing here
//! reads a clock: the tick's budget check comes in as a closure.

use std::collections::BTreeMap;
use std::rc::Rc;

use idem_client::journal::decode;
use idem_client::{Journal, RecordState};
use idem_sim::{
    CheckoutId, CheckoutOutcome, ClientConfig, ErrorPolicy, Faults, HistoryDetail, Properties,
    ScenarioRun, ServerConfig, SimConfig, Strategy as SimStrategy, Workload, World,
};
use idem_store::{EventKind as StoreEvent, Rejection, RowState};

use crate::components::checkout::cart_total;
use crate::journal::PageJournal;
use crate::model::fields::FULL;
use crate::model::run_log::{Command, RunLog};
use crate::model::scenario::{self, Live, ScenarioStatus};
use crate::model::settings::{NetworkSettings, Policy, ServerSettings, Strategy};
use crate::model::view::{
    merge_claims, merge_ledger, ClaimRow, ClaimStatus, EventKind, EventRow, LedgerRow, ShownClaim,
    Snapshot, Stats, StorageRecord, FEED_CAP,
};

/// Events run between two budget checks.
const BUDGET_EVERY: u32 = 32;

/// The world and what the page remembers about it.
pub struct Adapter {
    world: World,
    journal: PageJournal,
    network: NetworkSettings,
    server: ServerSettings,
    /// The checkout the Pay button started last.
    current: Option<CheckoutId>,
    /// The last storage record read for `current` (shown after the record is cleared).
    last_record: Option<StorageRecord>,
    store_cursor: u64,
    charge_cursor: usize,
    /// Store-event cursor value the claim rows were built at, and the server settings then.
    rows_built: Option<(u64, ServerSettings)>,
    claims: Rc<Vec<Rc<ShownClaim>>>,
    ledger_built: usize,
    ledger: Rc<Vec<Rc<LedgerRow>>>,
    seq: u64,
    /// What the page itself did since the last snapshot, for the feed.
    notes: Vec<EventRow>,
    /// The classroom scenario driving the world, if any (every step goes through it).
    scenario: Option<ScenarioRun>,
    /// The scenario paused: time stands still until the page plays again.
    hold: bool,
    properties: Rc<Properties>,
}

fn sim_strategy(s: Strategy) -> SimStrategy {
    match s {
        Strategy::NoKey => SimStrategy::NoKey,
        Strategy::KeyPerTry => SimStrategy::KeyPerAttempt,
        Strategy::SameKey => SimStrategy::SameKey,
    }
}

/// The world's faults for the page's network and server settings. The server panel's two
/// worker toggles are fault probabilities in the simulator: on means every worker.
fn faults(n: &NetworkSettings, s: &ServerSettings) -> Faults {
    Faults {
        drop_request: probability(n.request_loss),
        drop_response: probability(n.response_loss),
        duplicate: probability(n.duplicate),
        latency_ms: n.latency_min_ms,
        jitter_ms: n.latency_max_ms.saturating_sub(n.latency_min_ms),
        crash_after_charge: if s.crash_after_charge { 1.0 } else { 0.0 },
        slow_worker: if s.slow_worker { 1.0 } else { 0.0 },
        tab_reload: 0.0,
        reuse_key_other_cart: 0.0,
        ..Faults::default()
    }
}

/// Basis points as the simulator's probability.
fn probability(bp: u32) -> f64 {
    f64::from(bp.min(FULL)) / f64::from(FULL)
}

fn server_config(s: &ServerSettings) -> ServerConfig {
    ServerConfig {
        lock_ms: s.lock_ms,
        retention_ms: s.retention_ms,
        on_error: match s.policy {
            Policy::ReleaseClaim => ErrorPolicy::ReleaseClaim,
            Policy::SaveResponse => ErrorPolicy::SaveResponse,
        },
        ..ServerConfig::default()
    }
}

impl Adapter {
    /// A new world for `log`'s seed and initial settings, at time 0, with no checkouts.
    pub fn fresh(log: &RunLog) -> Adapter {
        let config = SimConfig {
            seed: log.seed,
            workload: Workload {
                orders: 0,
                ..Workload::default()
            },
            faults: faults(&log.network, &log.server),
            server: server_config(&log.server),
            client: ClientConfig::default(),
            bugs: Vec::new(),
            history: HistoryDetail::Full,
        };
        let picked = log.scenario.as_deref().and_then(scenario::pick);
        let (scenario, world) = match picked {
            Some((s, fixed)) => {
                let (run, world) = ScenarioRun::start(s, fixed);
                (Some(run), world)
            }
            None => (None, World::new(config)),
        };
        let journal = PageJournal::new();
        let mut world = world;
        world.attach_journal(Box::new(journal.clone()));
        Adapter {
            world,
            scenario,
            hold: false,
            properties: Rc::default(),
            journal,
            network: log.network.clone(),
            server: log.server.clone(),
            current: None,
            last_record: None,
            store_cursor: 0,
            charge_cursor: 0,
            rows_built: None,
            claims: Rc::default(),
            ledger_built: usize::MAX,
            ledger: Rc::default(),
            seq: 0,
            notes: Vec::new(),
        }
    }

    /// The world `log` describes, rebuilt command by command up to where the page left it.
    /// The page's journal reads a scratch copy meanwhile (see `journal.rs`).
    pub fn replay(log: &RunLog) -> Adapter {
        let mut w = Adapter::fresh(log);
        w.journal.set_replaying(true);
        for e in &log.entries {
            w.reach(e.at, e.after_events);
            w.apply(&e.command);
        }
        w.reach(log.now, log.events);
        w.journal.set_replaying(false);
        // The feed starts after the replay: what happened before the reload is in the table.
        w.store_cursor = w.world.store().next_event_seq();
        w.charge_cursor = w.world.payco().charges().len();
        w.notes.clear();
        w
    }

    fn note(&mut self, kind: EventKind, key: String, detail: String) {
        self.notes.push(EventRow {
            seq: 0,
            at: self.world.now(),
            kind,
            key,
            detail,
        });
    }

    /// Run exactly `events` events, then let the clock reach `at` if no event is due by then.
    fn reach(&mut self, at: u64, events: u64) {
        if let Some(run) = self.scenario.as_mut() {
            while self.world.events_run() < events && run.step(&mut self.world) {}
            while run.script_due(&self.world, at) {
                run.step(&mut self.world);
            }
            // A replay passes the pause the page already saw: do not stop there again.
            run.take_pause();
        } else {
            while self.world.events_run() < events && self.world.step() {}
        }
        if self.world.next_event_at().is_none_or(|t| t > at) {
            self.world.run_until(at);
        }
    }

    /// The simulated world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The config `idem-lab` runs for this seed and the settings in force, with `orders`
    /// scripted checkouts per strategy (the side-by-side lab).
    pub fn lab_config(&self, orders: u32) -> SimConfig {
        SimConfig {
            seed: self.seed(),
            workload: Workload {
                orders,
                ..Workload::default()
            },
            faults: faults(&self.network, &self.server),
            server: server_config(&self.server),
            client: ClientConfig::default(),
            bugs: Vec::new(),
            history: HistoryDetail::Outcomes,
        }
    }

    /// Virtual time.
    pub fn now(&self) -> u64 {
        self.world.now()
    }

    /// Events run so far.
    pub fn events_run(&self) -> u64 {
        self.world.events_run()
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.world.config().seed
    }

    /// Network settings in force.
    pub fn network(&self) -> &NetworkSettings {
        &self.network
    }

    /// Server settings in force.
    pub fn server(&self) -> &ServerSettings {
        &self.server
    }

    fn pending(&self, c: CheckoutId) -> bool {
        self.world
            .checkout(c)
            .is_some_and(|r| r.outcome == CheckoutOutcome::Pending)
    }

    /// Apply a page command at the current time.
    pub fn apply(&mut self, command: &Command) {
        match command {
            Command::Pay(strategy) => self.pay(*strategy),
            Command::Batch(strategy, n) => {
                self.note(
                    EventKind::Client,
                    String::new(),
                    format!("{n} checkouts start ({})", strategy.value()),
                );
                for _ in 0..*n {
                    // Batch checkouts keep their keys in the world's memory journal; only the
                    // Pay button's checkout writes to the browser's localStorage.
                    let _ = self.world.start_checkout(sim_strategy(*strategy));
                }
            }
            Command::ReloadTab => {
                let pending: Vec<CheckoutId> = self
                    .world
                    .checkouts()
                    .iter()
                    .filter(|r| r.outcome == CheckoutOutcome::Pending)
                    .map(|r| r.id)
                    .collect();
                let n = pending.len();
                for c in pending {
                    let _ = self.world.reload(c);
                }
                let detail = match self.current.filter(|c| self.pending(*c)) {
                    Some(c) => {
                        let key = self.journal.load(&op_name(c)).ok().flatten().map(|r| r.key.to_string());
                        match key {
                            Some(k) => format!("tab reloaded: memory lost; {c} resumes from localStorage with key {}", short(&k)),
                            None => format!("tab reloaded: memory lost; {n} pending checkout(s) resume"),
                        }
                    }
                    None => format!("tab reloaded: memory lost; {n} pending checkout(s) resume from their journal"),
                };
                self.note(EventKind::Client, String::new(), detail);
            }
            Command::DropNextRequest => {
                self.world.drop_next_request();
                self.note(
                    EventKind::Fault,
                    String::new(),
                    "the next request will be lost".into(),
                );
            }
            Command::DropNextResponse => {
                self.world.drop_next_response();
                self.note(
                    EventKind::Fault,
                    String::new(),
                    "the next response will be lost".into(),
                );
            }
            Command::DeclineNextCharge => {
                self.world.decline_next_charge();
                self.note(
                    EventKind::Fault,
                    String::new(),
                    "PayCo will decline the next charge".into(),
                );
            }
            Command::ReuseKeyOtherCart => {
                // The simulator draws "a buggy page reuses the key for another cart" per
                // checkout; certainty for one Pay is the same draw with probability 1.
                let normal = faults(&self.network, &self.server);
                self.world.set_faults(Faults {
                    reuse_key_other_cart: 1.0,
                    ..normal.clone()
                });
                self.pay(Strategy::SameKey);
                self.world.set_faults(normal);
            }
            Command::Network(n) => {
                self.network = n.clone();
                self.world.set_faults(faults(&self.network, &self.server));
            }
            Command::Server(s) => {
                let old = std::mem::replace(&mut self.server, s.clone());
                if (old.lock_ms, old.retention_ms, old.policy)
                    != (s.lock_ms, s.retention_ms, s.policy)
                {
                    self.world.set_server(server_config(s));
                }
                if (old.crash_after_charge, old.slow_worker)
                    != (s.crash_after_charge, s.slow_worker)
                {
                    self.world.set_faults(faults(&self.network, &self.server));
                }
            }
        }
    }

    /// Pay for the cart. While the last checkout is pending, Pay starts nothing: a same-key
    /// page finds its pending record in localStorage and resumes it (double clicks included).
    fn pay(&mut self, strategy: Strategy) {
        if let Some(c) = self.current {
            let stored = self.journal.load(&op_name(c)).ok().flatten();
            let stored_pending = stored
                .as_ref()
                .is_some_and(|r| r.state == RecordState::Pending);
            if stored_pending || self.pending(c) {
                let detail = match stored {
                    Some(r) if stored_pending => format!(
                        "Pay again: {c} is pending in localStorage, it resumes (key {})",
                        short(&r.key.to_string())
                    ),
                    _ => format!("Pay again: {c} is still pending, nothing new starts"),
                };
                self.note(EventKind::Client, String::new(), detail);
                return;
            }
        }
        let host_journal = strategy == Strategy::SameKey;
        let amount = u32::try_from(cart_total()).unwrap_or(u32::MAX);
        if let Ok(id) =
            self.world
                .start_checkout_with(sim_strategy(strategy), Some(amount), host_journal)
        {
            self.current = Some(id);
            self.last_record = None;
            let key = self
                .world
                .checkout(id)
                .and_then(|r| r.key)
                .map(|k| k.to_string());
            let detail = match key {
                Some(k) => format!(
                    "Pay: {id} starts, key {} stored in localStorage before the first send",
                    short(&k)
                ),
                None => format!("Pay: {id} starts ({})", strategy.value()),
            };
            self.note(EventKind::Client, String::new(), detail);
        }
    }

    /// Advance by `dt` virtual ms, stopping between events when `over_budget()` says so.
    pub fn advance_by(&mut self, dt: u64, over_budget: &dyn Fn() -> bool) -> bool {
        let target = self.world.now() + dt;
        if let Some(run) = self.scenario.as_mut() {
            if self.hold {
                // Nothing moves, but report a change so the page refreshes and learns about
                // the pause (its clock then stops ticking).
                return true;
            }
            let mut n = 0u32;
            while run.next_due(&self.world).is_some_and(|t| t <= target) {
                run.step(&mut self.world);
                n += 1;
                if run.take_pause() {
                    self.hold = true;
                    return true;
                }
                if n.is_multiple_of(BUDGET_EVERY) && over_budget() {
                    return true;
                }
            }
            run.run_until(&mut self.world, target, true);
            if run.take_pause() {
                self.hold = true;
            }
            return true;
        }
        let mut n = 0u32;
        while self.world.next_event_at().is_some_and(|t| t <= target) {
            self.world.step();
            n += 1;
            if n.is_multiple_of(BUDGET_EVERY) && over_budget() {
                return true;
            }
        }
        self.world.run_until(target);
        true
    }

    /// Run the next event.
    pub fn step(&mut self) {
        match self.scenario.as_mut() {
            Some(run) => {
                run.step(&mut self.world);
                run.take_pause();
            }
            None => {
                self.world.step();
            }
        }
    }

    /// Let time run again after a scenario's pause (the page pressed play).
    pub fn release_hold(&mut self) {
        self.hold = false;
    }

    /// The scenario's state, if the world runs one.
    pub fn scenario_status(&self) -> Option<ScenarioStatus> {
        self.scenario.as_ref().map(|r| ScenarioStatus {
            index: r.scenario().index(),
            fixed: r.fixed(),
            paused_at: r.paused_at(),
        })
    }

    /// Remove the page's localStorage records (a new run).
    pub fn clear_storage(&mut self) {
        self.journal.clear();
    }

    /// What the panels show now.
    pub fn snapshot(&mut self) -> Snapshot {
        let now = self.world.now();
        let counters = self.world.counters();
        let pending = self
            .world
            .checkouts()
            .iter()
            .filter(|r| r.outcome == CheckoutOutcome::Pending)
            .count();
        let stats = Stats {
            checkouts: counters.checkouts as u32,
            pending: pending as u32,
            attempts: counters.attempts as u32,
            conflicts: counters.conflicts as u32,
            mismatches: counters.mismatches as u32,
            takeovers: counters.takeovers as u32,
            fenced: counters.fenced as u32,
            unknown: counters.unknown as u32,
            charges: self.world.charges() as u32,
            double_charged: self.world.double_charged() as u32,
        };
        let new_events = self.new_events();
        self.rebuild_rows();
        self.rebuild_ledger();
        let paying = self.current.is_some_and(|c| self.pending(c));
        let cart = match self.current {
            Some(c) if paying => format!("cart {c}"),
            _ => format!("cart co_{}", self.world.checkouts().len()),
        };
        Snapshot {
            now,
            seed: self.seed(),
            claims: self.claims.clone(),
            ledger: self.ledger.clone(),
            new_events,
            storage: self.storage_record(),
            stats,
            cart,
            paying,
            reset: false,
            log_rev: 0,
            live: self.live(),
        }
    }

    fn live(&mut self) -> Live {
        let props = self.world.properties();
        if *self.properties != props {
            self.properties = Rc::new(props);
        }
        Live {
            scenario: self.scenario_status(),
            properties: self.properties.clone(),
        }
    }

    fn rebuild_rows(&mut self) {
        let store = self.world.store();
        let stamp = (store.next_event_seq(), self.server.clone());
        // Rows change only through store decisions (each logs an event) or a new lock_ms.
        if self.rows_built.as_ref() == Some(&stamp) {
            return;
        }
        let lock_ms = self.server.lock_ms;
        let now = self.world.now();
        let rows = self
            .world
            .rows()
            .into_iter()
            .map(|r| {
                let status = if r.state == RowState::Done {
                    ClaimStatus::Done
                } else {
                    ClaimStatus::InFlight
                };
                ClaimRow {
                    scope: r.scope,
                    key: r.key,
                    fingerprint: r.fingerprint.chars().take(8).collect(),
                    status,
                    response: r.response_status.map(status_text).unwrap_or_default(),
                    locked_at: r.locked_at,
                    token: r.token,
                    lease_until: r.locked_at.map(|at| at + lock_ms),
                    created_at: r.created_at,
                }
            })
            .collect();
        self.claims = merge_claims(&self.claims, rows, now);
        self.rows_built = Some(stamp);
    }

    fn rebuild_ledger(&mut self) {
        let charges = self.world.payco().charges();
        if charges.len() == self.ledger_built {
            return;
        }
        let mut by: BTreeMap<u32, LedgerRow> = BTreeMap::new();
        for ch in charges {
            let row = by.entry(ch.checkout.0).or_insert_with(|| LedgerRow {
                order: ch.checkout.to_string(),
                amount: u64::from(ch.amount),
                charges: 0,
                last_at: 0,
            });
            row.charges += 1;
            row.last_at = ch.at;
        }
        let mut rows: Vec<(u32, LedgerRow)> = by.into_iter().collect();
        // Double charges first, then newest first.
        rows.sort_by(|(a, ra), (b, rb)| (rb.charges > 1).cmp(&(ra.charges > 1)).then(b.cmp(a)));
        self.ledger = merge_ledger(&self.ledger, rows.into_iter().map(|(_, r)| r).collect());
        self.ledger_built = charges.len();
    }

    fn new_events(&mut self) -> Vec<EventRow> {
        let store = self.world.store();
        if store.next_event_seq() < self.store_cursor {
            // A new lock_ms or retention rebuilt the store, which restarts its event log.
            self.store_cursor = 0;
        }
        let mut out: Vec<EventRow> = Vec::new();
        let skip = (store.next_event_seq() - self.store_cursor).saturating_sub(FEED_CAP as u64);
        for e in store.events_since(self.store_cursor + skip) {
            let key = e.key().unwrap_or("").to_string();
            let (kind, detail) = match e.kind() {
                StoreEvent::Claimed { token } => (
                    EventKind::Claimed,
                    format!("claimed, lease #{token}: the work runs"),
                ),
                StoreEvent::Replayed { status } => {
                    (EventKind::Replayed, format!("replayed the saved {status}"))
                }
                StoreEvent::Rejected { status, reason } => match reason {
                    Rejection::InFlight { retry_after_ms } => (
                        EventKind::Conflict,
                        format!("409 in flight: retry after {retry_after_ms} ms"),
                    ),
                    Rejection::Mismatch => (
                        EventKind::Mismatch,
                        "422: same key, different request".to_string(),
                    ),
                    Rejection::Invalid(err) => (EventKind::BadRequest, format!("{status}: {err}")),
                },
                StoreEvent::TakenOver {
                    old_token,
                    new_token,
                } => (
                    EventKind::TakenOver,
                    format!("stale lease #{old_token} taken over by #{new_token}"),
                ),
                StoreEvent::Fenced { token } => (
                    EventKind::Fenced,
                    format!("write by lost lease #{token} refused"),
                ),
                StoreEvent::Saved { token, status } => {
                    (EventKind::Saved, format!("lease #{token} saved {status}"))
                }
                StoreEvent::Released { token } => {
                    (EventKind::Released, format!("lease #{token} released"))
                }
                StoreEvent::Pruned => (EventKind::Pruned, "pruned after retention".to_string()),
                StoreEvent::Note { text } => (EventKind::Client, text.clone()),
            };
            let label = if key.is_empty() {
                String::new()
            } else {
                format!("{} ", short(&key))
            };
            out.push(EventRow {
                seq: 0,
                at: e.at(),
                kind,
                key,
                detail: format!("{label}{detail}"),
            });
        }
        self.store_cursor = store.next_event_seq();
        out.append(&mut self.notes);
        let charges = self.world.payco().charges();
        let first = self
            .charge_cursor
            .max(charges.len().saturating_sub(FEED_CAP));
        for ch in &charges[first.min(charges.len())..] {
            out.push(EventRow {
                seq: 0,
                at: ch.at,
                kind: EventKind::Charged,
                key: String::new(),
                detail: format!(
                    "PayCo {} for order {} of {}: €{}.{:02}",
                    ch.id,
                    ch.order,
                    ch.checkout,
                    ch.amount / 100,
                    ch.amount % 100
                ),
            });
        }
        self.charge_cursor = charges.len();
        // One feed, in time order; sequence numbers give every line a stable identity.
        out.sort_by_key(|e| e.at);
        for e in &mut out {
            self.seq += 1;
            e.seq = self.seq;
        }
        if out.len() > FEED_CAP {
            out.drain(..out.len() - FEED_CAP);
        }
        out
    }

    fn storage_record(&mut self) -> Option<StorageRecord> {
        let c = self.current?;
        let name = op_name(c);
        let raw = self.journal.raw(&name);
        match raw.as_deref().map(|t| decode(&name, t)) {
            Some(Ok(r)) => {
                let state = match r.state {
                    RecordState::Pending => "pending".to_string(),
                    RecordState::Unknown { .. } => {
                        "unknown outcome: reconcile, never a new key".to_string()
                    }
                };
                let rec = StorageRecord {
                    storage_key: self.journal.storage_key(&name),
                    key: r.key.to_string(),
                    payload: r.body,
                    attempts: r.attempts,
                    state,
                    raw: raw.unwrap_or_default(),
                };
                self.last_record = Some(rec.clone());
                Some(rec)
            }
            Some(Err(e)) => Some(StorageRecord {
                storage_key: self.journal.storage_key(&name),
                key: String::new(),
                payload: String::new(),
                attempts: 0,
                state: format!("unreadable: {e}"),
                raw: raw.unwrap_or_default(),
            }),
            None => {
                let outcome = match self.world.checkout(c).map(|r| r.outcome) {
                    Some(CheckoutOutcome::Paid { replayed: true, .. }) => "paid (replayed answer)",
                    Some(CheckoutOutcome::Paid { .. }) => "paid",
                    Some(CheckoutOutcome::Rejected { .. }) => "rejected",
                    Some(CheckoutOutcome::Unknown) => "unknown",
                    Some(CheckoutOutcome::Pending) | None => return None,
                };
                let mut last = self.last_record.clone()?;
                last.state = format!("removed: the operation finished ({outcome})");
                Some(last)
            }
        }
    }
}

pub use idem_sim::op_name;

/// `201` → `"201 Created"`.
fn status_text(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        402 => "Payment Required",
        409 => "Conflict",
        422 => "Unprocessable",
        500 => "Server Error",
        502 => "Bad Gateway",
        _ => "",
    };
    format!("{status} {reason}").trim_end().to_string()
}

/// First 8 characters of a key, for one-line messages.
fn short(key: &str) -> &str {
    key.get(..8).unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::settings::Settings;

    /// A run log and the adapter it drives, recorded the way `Lab` records commands.
    struct Run {
        log: RunLog,
        world: Adapter,
    }

    impl Run {
        fn new(seed: u64) -> Run {
            let s = Settings::default();
            let log = RunLog::new(seed, Strategy::SameKey, s.network(), s.server());
            let world = Adapter::fresh(&log);
            Run { log, world }
        }

        fn command(&mut self, c: Command) {
            self.log
                .push(self.world.now(), self.world.events_run(), c.clone());
            self.world.apply(&c);
        }

        /// Advance in ticks whose budget runs out every `budget_events` checks (0: never).
        fn advance(&mut self, ms: u64, ticks: u64, cut_every: u32) {
            let calls = std::cell::Cell::new(0u32);
            let over = || {
                calls.set(calls.get() + 1);
                cut_every > 0 && calls.get().is_multiple_of(cut_every)
            };
            for _ in 0..ticks {
                self.world.advance_by(ms, &over);
            }
            self.log.reached(self.world.now(), self.world.events_run());
        }
    }

    fn network(response_loss: u32) -> NetworkSettings {
        NetworkSettings {
            response_loss,
            ..Settings::default().network()
        }
    }

    /// Time, events, claims (key, status), ledger (order, charges) and totals.
    type Summary = (
        u64,
        u64,
        Vec<(String, ClaimStatus)>,
        Vec<(String, u32)>,
        Stats,
    );

    fn summary(a: &mut Adapter) -> Summary {
        let s = a.snapshot();
        let claims = s
            .claims
            .iter()
            .map(|c| (c.row.key.clone(), c.row.status))
            .collect();
        let ledger = s
            .ledger
            .iter()
            .map(|r| (r.order.clone(), r.charges))
            .collect();
        (s.now, a.events_run(), claims, ledger, s.stats)
    }

    #[test]
    fn replaying_the_log_rebuilds_the_same_world_even_when_ticks_stop_between_events() {
        let mut run = Run::new(11);
        run.command(Command::Network(network(3_000)));
        run.command(Command::Pay(Strategy::SameKey));
        run.advance(40, 30, 3);
        run.command(Command::Batch(Strategy::NoKey, 30));
        run.advance(400, 20, 2);
        run.command(Command::Batch(Strategy::SameKey, 30));
        // Stop between two events due at the same millisecond, as a tick out of budget does,
        // and act there: which request the one-shot drop hits depends on exactly this.
        let mut same_ms = false;
        for _ in 0..10_000 {
            run.world.step();
            if run.world.world.next_event_at() == Some(run.world.now()) {
                same_ms = true;
                break;
            }
        }
        assert!(same_ms, "the scenario needs two events in one millisecond");
        run.command(Command::DropNextRequest);
        run.advance(250, 25, 5);
        let original = summary(&mut run.world);
        assert!(
            original.4.attempts > 60,
            "retries happened: {:?}",
            original.4
        );

        let mut replayed = Adapter::replay(&run.log);
        assert_eq!(summary(&mut replayed), original);
    }

    #[test]
    fn reach_stops_where_the_original_stopped_inside_a_millisecond() {
        let mut run = Run::new(2);
        run.command(Command::Batch(Strategy::SameKey, 40));
        while run.world.world.next_event_at() != Some(run.world.now()) {
            assert!(
                run.world.world.step(),
                "the scenario needs two events in one millisecond"
            );
        }
        let (at, events) = (run.world.now(), run.world.events_run());
        let mut again = Adapter::fresh(&run.log);
        again.apply(&Command::Batch(Strategy::SameKey, 40));
        again.reach(at, events);
        assert_eq!((again.now(), again.events_run()), (at, events));
        assert_eq!(
            again.world.next_event_at(),
            Some(at),
            "the same-millisecond event is still due"
        );
    }

    #[test]
    fn pay_while_the_checkout_is_pending_starts_nothing() {
        let mut run = Run::new(3);
        run.command(Command::Network(network(10_000)));
        run.command(Command::Pay(Strategy::SameKey));
        run.command(Command::Pay(Strategy::SameKey));
        run.advance(500, 4, 0);
        run.command(Command::Pay(Strategy::SameKey));
        assert_eq!(run.world.snapshot().stats.checkouts, 1);
    }

    #[test]
    fn a_scenario_holds_at_its_pause_and_a_saved_log_rebuilds_it() {
        let s = idem_sim::Scenario::by_id("stale-lock").unwrap();
        let mut run = Run::new(1);
        run.log.scenario = Some(scenario::pick_text(s, false));
        run.world = Adapter::fresh(&run.log);
        // Ticks of 40 virtual ms: the pause lands inside one and time stops there.
        for _ in 0..200 {
            run.world.advance_by(40, &|| false);
        }
        let status = run.world.scenario_status().expect("a scenario runs");
        let (at, events) = status.paused_at.expect("paused");
        assert_eq!(
            (run.world.now(), run.world.events_run()),
            (at, events),
            "held"
        );
        let paused = summary(&mut run.world);
        assert_eq!(paused.4.fenced, 1);
        run.log.reached(run.world.now(), run.world.events_run());
        let mut again = Adapter::replay(&run.log);
        assert_eq!(summary(&mut again), paused);
        // Play again: time runs on past the pause.
        run.world.release_hold();
        run.world.advance_by(500, &|| false);
        assert!(run.world.now() > at);
    }

    #[test]
    fn the_key_is_stored_before_the_first_send_and_survives_a_tab_reload() {
        let mut run = Run::new(5);
        run.command(Command::Network(network(10_000)));
        run.command(Command::Pay(Strategy::SameKey));
        let before = run.world.snapshot();
        let record = before.storage.expect("written at Pay");
        assert!(
            before.claims.is_empty(),
            "no request has reached the server yet"
        );
        run.advance(500, 6, 0);
        let claimed = run.world.snapshot();
        assert_eq!(claimed.claims.len(), 1);
        assert_eq!(claimed.claims[0].row.key, record.key);

        run.command(Command::ReloadTab);
        run.advance(500, 6, 0);
        let after = run.world.snapshot();
        let resumed = after
            .storage
            .expect("still pending: every response is lost");
        assert_eq!(resumed.key, record.key);
        assert!(resumed.attempts > record.attempts);
        assert_eq!(after.claims.len(), 1, "the same key, never a new one");
    }

    #[test]
    fn no_key_under_loss_charges_some_order_twice_and_same_key_never_does() {
        for (strategy, expect_doubles) in [(Strategy::NoKey, true), (Strategy::SameKey, false)] {
            let mut run = Run::new(7);
            run.command(Command::Network(network(3_000)));
            run.command(Command::Batch(strategy, 50));
            run.advance(1_000, 120, 0);
            let s = run.world.snapshot();
            assert_eq!(s.stats.pending, 0);
            assert_eq!(
                s.stats.double_charged > 0,
                expect_doubles,
                "{strategy:?}: {:?}",
                s.stats
            );
        }
    }
}
