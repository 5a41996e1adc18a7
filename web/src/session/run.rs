//! The run this page drives: idem-sim's world (through a classroom scenario when one was
//! picked), the page's journal, and the run log every input goes into. The page's actions
//! (Pay, a batch, reload the tab, the buggy page, the settings) become `idem_sim::Command`s
//! applied by `World::apply`; what the world recorded goes into the log, so the log replays
//! through the same `apply` ([`Run::rebuild`]).
//!
//! The world runs in virtual time only; the driver decides how much to ask for. Nothing here
//! reads a clock: the tick's budget check comes in as a closure.

use idem_client::{Journal, RecordState};
use idem_sim::{
    op_name, CheckoutId, CheckoutOutcome, ClientConfig, Command, Drive, HistoryDetail, ScenarioRun,
    SimConfig, Strategy, Workload, World,
};

use crate::journal::PageJournal;
use crate::model::cart;
use crate::model::run_log::RunLog;
use crate::model::scenario::{self, ScenarioStatus};
use crate::model::settings::{self, NetworkSettings, ServerSettings};
use crate::model::view::{EventKind, EventRow};
use crate::projection::feed::short;

/// Events run between two budget checks.
const BUDGET_EVERY: u32 = 32;

/// How long after Pay the buggy page sends its other cart under the same key: the classroom
/// scenario `other-cart`'s gap, long enough for Pay's first request to claim the key.
pub const OTHER_CART_AFTER_MS: u64 = 300;

/// The world, its driver and the log of what the page did to it.
pub struct Run {
    world: World,
    /// The classroom scenario driving the world, if any (every step goes through it).
    scenario: Option<ScenarioRun>,
    /// The scenario paused: time stands still until the page plays again.
    hold: bool,
    journal: PageJournal,
    log: RunLog,
    /// The checkout the Pay button started last.
    current: Option<CheckoutId>,
    /// What the page itself did since the last view, for the feed.
    notes: Vec<EventRow>,
}

/// Moves the world with the scenario's run when there is one, with its own events otherwise.
struct Driver<'a>(Option<&'a mut ScenarioRun>);

impl Drive for Driver<'_> {
    fn step(&mut self, world: &mut World) -> bool {
        match self.0.as_deref_mut() {
            Some(run) => run.step(world),
            None => world.step(),
        }
    }

    fn settle(&mut self, world: &mut World, at: u64) {
        if let Some(run) = self.0.as_deref_mut() {
            Drive::settle(run, world, at);
        }
    }
}

/// Pay's checkout: the cart, the page's own, so its key (when it has one) is kept in the page's
/// journal. (`host_journal` also tells Pay's checkouts from a batch's, which charge the same
/// cart: only a same-key page writes to a journal at all.)
fn pay_command(strategy: Strategy) -> Command {
    Command::StartCheckout {
        strategy,
        amount: Some(cart::AMOUNT),
        host_journal: true,
    }
}

impl Run {
    /// A new world for `log`'s seed and settings (or its scenario), at time 0; the log's
    /// inputs are not applied.
    fn fresh(log: RunLog) -> Run {
        let config = SimConfig {
            seed: log.seed,
            workload: Workload {
                orders: 0,
                ..Workload::default()
            },
            faults: log.faults(),
            server: log.server_config(),
            client: ClientConfig::default(),
            bugs: Vec::new(),
            history: HistoryDetail::Full,
        };
        let picked = log.scenario.as_deref().and_then(scenario::pick);
        let (scenario, mut world) = match picked {
            Some((s, fixed)) => {
                let (run, world) = ScenarioRun::start(s, fixed);
                (Some(run), world)
            }
            None => (None, World::new(config)),
        };
        let journal = PageJournal::new();
        world.attach_journal(Box::new(journal.clone()));
        Run {
            world,
            scenario,
            hold: false,
            journal,
            log: RunLog {
                inputs: Vec::new(),
                now: 0,
                events: 0,
                ..log
            },
            current: None,
            notes: Vec::new(),
        }
    }

    /// A new run: `log`'s seed, settings and scenario, no inputs.
    pub fn start(log: RunLog) -> Run {
        Run::fresh(log)
    }

    /// The run `log` describes, rebuilt input by input (`World::replay_inputs`) up to where it
    /// was left. The page's journal reads a scratch copy meanwhile (see `journal.rs`), so the
    /// replayed checkouts start as they did; a scenario's pause the page saw is passed.
    pub fn rebuild(log: RunLog) -> Run {
        let (inputs, now, events) = (log.inputs.clone(), log.now, log.events);
        let mut run = Run::fresh(log);
        run.journal.set_replaying(true);
        let mut driver = Driver(run.scenario.as_mut());
        let started = run.world.replay_inputs(&inputs, &mut driver);
        run.world.reach(now, events, &mut driver);
        if let Some(s) = run.scenario.as_mut() {
            s.take_pause();
        }
        run.journal.set_replaying(false);
        // Pay's checkout: the last one a Pay started.
        for (input, id) in inputs.iter().zip(started) {
            if id.is_some() && is_pay(&input.command) {
                run.current = id;
            }
        }
        run.log.inputs = inputs;
        run.log.reached(now, events);
        let (now, events) = (run.world.now(), run.world.events_run());
        run.log.reached(now, events);
        run
    }

    /// Apply `command` now; what the world recorded goes into the log. The checkout it started.
    fn apply(&mut self, command: Command) -> Option<CheckoutId> {
        let before = self.world.inputs().len();
        let started = self.world.apply(command).ok().flatten();
        if let Some(input) = self.world.inputs().get(before) {
            self.log.push(input.clone());
        }
        started
    }

    fn note(&mut self, kind: EventKind, detail: String) {
        self.notes.push(EventRow {
            seq: 0,
            at: self.world.now(),
            kind,
            key: String::new(),
            detail,
        });
    }

    fn pending(&self, c: CheckoutId) -> bool {
        self.world
            .checkout(c)
            .is_some_and(|r| r.outcome == CheckoutOutcome::Pending)
    }

    /// Pay for the cart. While the last checkout is pending, Pay starts no new checkout: a
    /// same-key page finds its pending record in localStorage and resumes it (double clicks
    /// included); a page with no key or a key per attempt sends the cart again for the same
    /// checkout (`Command::PayAgain`), as a naive page does, and that checkout may be charged
    /// twice.
    pub fn pay(&mut self, strategy: Strategy) {
        if let Some(c) = self.current {
            let stored = self.journal.load(&op_name(c)).ok().flatten();
            let stored_pending = stored
                .as_ref()
                .is_some_and(|r| r.state == RecordState::Pending);
            let naive = self
                .world
                .checkout(c)
                .is_some_and(|r| r.strategy != Strategy::SameKey);
            if naive && self.pending(c) {
                // A page without one key per checkout sends the cart again: same checkout.
                self.apply(Command::PayAgain { checkout: c });
                let detail = format!("Pay again: {c} is pending; the page sends the cart again");
                self.note(EventKind::Client, detail);
                return;
            }
            if stored_pending || self.pending(c) {
                let detail = match stored {
                    Some(r) if stored_pending => format!(
                        "Pay again: {c} is pending in localStorage, it resumes (key {})",
                        short(&r.key.to_string())
                    ),
                    _ => format!("Pay again: {c} is still pending, nothing new starts"),
                };
                self.note(EventKind::Client, detail);
                return;
            }
        }
        let Some(id) = self.apply(pay_command(strategy)) else {
            return;
        };
        self.current = Some(id);
        let key = self.world.checkout(id).and_then(|r| r.key);
        let detail = match key {
            Some(k) => format!(
                "Pay: {id} starts, key {} stored in localStorage before the first send",
                short(&k.to_string())
            ),
            None => format!("Pay: {id} starts ({})", strategy.name()),
        };
        self.note(EventKind::Client, detail);
    }

    /// Start `n` checkouts of the cart at once (each charges the cart's amount). They keep
    /// their keys in the world's memory journal; only the Pay button's checkout writes to the
    /// browser's localStorage.
    pub fn batch(&mut self, strategy: Strategy, n: u32) {
        self.note(
            EventKind::Client,
            format!("{n} checkouts of the cart start ({})", strategy.name()),
        );
        for _ in 0..n {
            self.apply(Command::StartCheckout {
                strategy,
                amount: Some(cart::AMOUNT),
                host_journal: false,
            });
        }
    }

    /// The tab loses its memory: every pending checkout resumes from its journal.
    pub fn reload_tab(&mut self) {
        let n = self
            .world
            .checkouts()
            .iter()
            .filter(|r| r.outcome == CheckoutOutcome::Pending)
            .count();
        self.apply(Command::ReloadTab);
        let detail = match self.current.filter(|c| self.pending(*c)) {
            Some(c) => {
                let key = self.journal.load(&op_name(c)).ok().flatten();
                match key.map(|r| r.key.to_string()) {
                    Some(k) => format!(
                        "tab reloaded: memory lost; {c} resumes from localStorage with key {}",
                        short(&k)
                    ),
                    None => format!("tab reloaded: memory lost; {n} pending checkout(s) resume"),
                }
            }
            None => format!(
                "tab reloaded: memory lost; {n} pending checkout(s) resume from their journal"
            ),
        };
        self.note(EventKind::Client, detail);
    }

    /// A buggy page: it pays (or finds the checkout it paid for pending), then sends another
    /// cart under that checkout's key [`OTHER_CART_AFTER_MS`] later; the store answers 422.
    pub fn reuse_key(&mut self) {
        self.pay(Strategy::SameKey);
        let Some(c) = self.current else { return };
        self.apply(Command::Resend {
            checkout: c,
            other_cart: true,
            after_ms: OTHER_CART_AFTER_MS,
        });
        self.note(
            EventKind::Fault,
            format!("a buggy page will send another cart under {c}'s key"),
        );
    }

    /// A one-shot fault: the next request or response lost, or PayCo's next decline.
    pub fn one_shot(&mut self, command: Command) {
        let detail = match command {
            Command::DropNextRequest => "the next request will be lost",
            Command::DropNextResponse => "the next response will be lost",
            Command::DeclineNextCharge => "PayCo will decline the next charge",
            _ => return,
        };
        self.apply(command);
        self.note(EventKind::Fault, detail.to_string());
    }

    /// New network settings (a no-op when they are the ones in force).
    pub fn set_network(&mut self, network: NetworkSettings) {
        let (old, server) = self.log.settings_now();
        if old != network {
            self.apply(Command::SetFaults(settings::faults(&network, &server)));
        }
    }

    /// New server settings (a no-op when they are the ones in force): the store's knobs and
    /// the worker toggles, which are faults in the simulator.
    pub fn set_server(&mut self, server: ServerSettings) {
        let (network, old) = self.log.settings_now();
        if (old.lock_ms, old.retention_ms, old.policy)
            != (server.lock_ms, server.retention_ms, server.policy)
        {
            self.apply(Command::SetServer(settings::server_config(&server)));
        }
        if (old.crash_after_charge, old.slow_worker)
            != (server.crash_after_charge, server.slow_worker)
        {
            self.apply(Command::SetFaults(settings::faults(&network, &server)));
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

    /// Remove the page's localStorage records (a new run).
    pub fn clear_storage(&mut self) {
        self.journal.clear();
    }

    /// The simulated world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The run log, up to date but for how far time got ([`Run::log_now`]).
    pub fn log(&self) -> &RunLog {
        &self.log
    }

    /// The run log with the time and events reached now.
    pub fn log_now(&mut self) -> &mut RunLog {
        let (now, events) = (self.world.now(), self.world.events_run());
        self.log.reached(now, events);
        &mut self.log
    }

    /// The page's journal.
    pub fn journal(&self) -> &PageJournal {
        &self.journal
    }

    /// The checkout the Pay button started last.
    pub fn current(&self) -> Option<CheckoutId> {
        self.current
    }

    /// What the page did since the last call, for the feed.
    pub fn take_notes(&mut self) -> Vec<EventRow> {
        std::mem::take(&mut self.notes)
    }

    /// The scenario's state, if the world runs one.
    pub fn scenario_status(&self) -> Option<ScenarioStatus> {
        self.scenario.as_ref().map(|r| ScenarioStatus {
            index: r.scenario().index(),
            fixed: r.fixed(),
            paused_at: r.paused_at(),
        })
    }

    /// The config `idem-lab` runs for this seed and the settings in force, with `orders`
    /// scripted checkouts per strategy (the side-by-side lab).
    pub fn lab_config(&self, orders: u32) -> SimConfig {
        let (network, server) = self.log.settings_now();
        SimConfig {
            seed: self.world.config().seed,
            workload: Workload {
                orders,
                ..Workload::default()
            },
            faults: settings::faults(&network, &server),
            server: settings::server_config(&server),
            client: ClientConfig::default(),
            bugs: Vec::new(),
            history: HistoryDetail::Outcomes,
        }
    }
}

/// Whether a start is Pay's (the cart, in the page's journal when it has a key).
fn is_pay(command: &Command) -> bool {
    match command {
        Command::StartCheckout { strategy, .. } => *command == pay_command(*strategy),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::settings::Settings;
    use crate::model::view::{ClaimStatus, Stats, View};
    use crate::projection::{PageState, Projector};

    /// A batch charges the cart, and its link entry says so (`m`; an old link's `b` replays
    /// its drawn amounts: `model::run_log::text`).
    #[test]
    fn a_batch_is_linked_as_charging_the_cart() {
        let st = Settings::default();
        let mut log = RunLog::new(1, Strategy::NoKey, st.network(), st.server());
        let mut run = Run::start(log.clone());
        run.batch(Strategy::NoKey, 20);
        log.inputs = run.log().inputs.clone();
        let text = crate::model::run_log::text::encode(&log);
        assert!(text.contains("&c=0.0.m0x20&"), "{text}");
    }

    fn run(seed: u64) -> Run {
        let s = Settings::default();
        Run::start(RunLog::new(
            seed,
            Strategy::SameKey,
            s.network(),
            s.server(),
        ))
    }

    fn network(response_loss: u32) -> NetworkSettings {
        NetworkSettings {
            response_loss,
            ..Settings::default().network()
        }
    }

    /// Advance in ticks whose budget runs out every `cut_every` checks (0: never).
    fn advance(r: &mut Run, ms: u64, ticks: u64, cut_every: u32) {
        let calls = std::cell::Cell::new(0u32);
        let over = || {
            calls.set(calls.get() + 1);
            cut_every > 0 && calls.get().is_multiple_of(cut_every)
        };
        for _ in 0..ticks {
            r.advance_by(ms, &over);
        }
    }

    fn view(r: &mut Run, p: &mut Projector) -> View {
        let notes = r.take_notes();
        let page = PageState {
            journal: &r.journal,
            current: r.current,
            notes,
            scenario: r.scenario_status(),
            log_rev: 0,
        };
        p.view(&r.world, page)
    }

    /// Time, events, claims (key, status), ledger (order, charges) and totals.
    type Summary = (
        u64,
        u64,
        Vec<(String, ClaimStatus)>,
        Vec<(String, u32)>,
        Stats,
    );

    fn summary(r: &mut Run) -> Summary {
        let s = view(r, &mut Projector::default());
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
        (s.now, r.world.events_run(), claims, ledger, s.stats)
    }

    #[test]
    fn rebuilding_from_the_log_gives_the_same_world_even_when_ticks_stop_between_events() {
        let mut r = run(11);
        r.set_network(network(3_000));
        r.pay(Strategy::SameKey);
        advance(&mut r, 40, 30, 3);
        r.batch(Strategy::NoKey, 30);
        advance(&mut r, 400, 20, 2);
        r.batch(Strategy::SameKey, 30);
        // Stop between two events due at the same millisecond, as a tick out of budget does,
        // and act there: which request the one-shot drop hits depends on exactly this.
        let mut same_ms = false;
        for _ in 0..10_000 {
            r.step();
            if r.world.next_event_at() == Some(r.world.now()) {
                same_ms = true;
                break;
            }
        }
        assert!(same_ms, "the scenario needs two events in one millisecond");
        r.one_shot(Command::DropNextRequest);
        r.reuse_key();
        advance(&mut r, 250, 25, 5);
        let original = summary(&mut r);
        assert!(
            original.4.attempts > 60,
            "retries happened: {:?}",
            original.4
        );
        let mut again = Run::rebuild(r.log_now().clone());
        assert_eq!(summary(&mut again), original);
        assert_eq!(again.current, r.current, "Pay's checkout is found again");
        assert_eq!(again.world.history_hash(), r.world.history_hash());
    }

    #[test]
    fn pay_while_the_checkout_is_pending_starts_nothing() {
        let mut r = run(3);
        r.set_network(network(10_000));
        r.pay(Strategy::SameKey);
        r.pay(Strategy::SameKey);
        advance(&mut r, 500, 4, 0);
        r.pay(Strategy::SameKey);
        assert_eq!(r.world.checkouts().len(), 1);
        assert_eq!(r.log.inputs.len(), 2, "the settings and one start");
    }

    #[test]
    fn pay_while_a_naive_checkout_is_pending_sends_the_cart_again_for_it() {
        for strategy in [Strategy::NoKey, Strategy::KeyPerAttempt] {
            let mut r = run(3);
            r.pay(strategy);
            r.pay(strategy);
            advance(&mut r, 500, 10, 0);
            assert_eq!(r.world.checkouts().len(), 1, "{strategy:?}: one checkout");
            let again = Command::PayAgain {
                checkout: CheckoutId(0),
            };
            assert_eq!(r.log.inputs.last().map(|i| &i.command), Some(&again));
            let s = view(&mut r, &mut Projector::default());
            assert_eq!(
                (s.stats.charges, s.stats.double_charged),
                (2, 1),
                "{strategy:?}"
            );
            assert_eq!(s.ledger.len(), 1, "one ledger row");
            assert_eq!(s.ledger[0].charges, 2);
            let mut again = Run::rebuild(r.log_now().clone());
            assert_eq!(summary(&mut again), summary(&mut r));
        }
    }

    #[test]
    fn a_scenario_holds_at_its_pause_and_a_saved_log_rebuilds_it() {
        let s = idem_sim::Scenario::by_id("stale-lock").unwrap();
        let st = Settings::default();
        let mut log = RunLog::new(1, Strategy::SameKey, st.network(), st.server());
        log.scenario = Some(scenario::pick_text(s, false));
        let mut r = Run::start(log);
        // Ticks of 40 virtual ms: the pause lands inside one and time stops there.
        for _ in 0..200 {
            r.advance_by(40, &|| false);
        }
        let status = r.scenario_status().expect("a scenario runs");
        let (at, events) = status.paused_at.expect("paused");
        assert_eq!((r.world.now(), r.world.events_run()), (at, events), "held");
        let paused = summary(&mut r);
        assert_eq!(paused.4.fenced, 1);
        let mut again = Run::rebuild(r.log_now().clone());
        assert_eq!(summary(&mut again), paused);
        // Play again: time runs on past the pause.
        r.release_hold();
        r.advance_by(500, &|| false);
        assert!(r.world.now() > at);
    }

    #[test]
    fn the_key_is_stored_before_the_first_send_and_survives_a_tab_reload() {
        let mut r = run(5);
        let mut p = Projector::default();
        r.set_network(network(10_000));
        r.pay(Strategy::SameKey);
        let before = view(&mut r, &mut p);
        let record = before.storage.expect("written at Pay");
        assert!(
            before.claims.is_empty(),
            "no request has reached the server yet"
        );
        advance(&mut r, 500, 6, 0);
        let claimed = view(&mut r, &mut p);
        assert_eq!(claimed.claims.len(), 1);
        assert_eq!(claimed.claims[0].row.key, record.key);

        r.reload_tab();
        advance(&mut r, 500, 6, 0);
        let after = view(&mut r, &mut p);
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
            let mut r = run(7);
            r.set_network(network(3_000));
            r.batch(strategy, 50);
            advance(&mut r, 1_000, 120, 0);
            let s = view(&mut r, &mut Projector::default());
            assert_eq!(s.stats.pending, 0);
            assert_eq!(
                s.stats.double_charged > 0,
                expect_doubles,
                "{strategy:?}: {:?}",
                s.stats
            );
        }
    }

    #[test]
    fn the_buggy_page_gets_a_422_after_its_pay_claimed_the_key() {
        let mut r = run(9);
        r.reuse_key();
        advance(&mut r, 100, 20, 0);
        let s = view(&mut r, &mut Projector::default());
        assert_eq!(s.stats.mismatches, 1, "{:?}", s.stats);
        assert_eq!(s.stats.charges, 1, "only Pay's cart was charged");
        let outcome = r.world.checkout(r.current.unwrap()).unwrap().outcome;
        assert!(
            matches!(outcome, CheckoutOutcome::Paid { .. }),
            "Pay's checkout is paid: {outcome:?}"
        );
    }
}
