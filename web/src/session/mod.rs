//! The session controller: the one way the page changes its run.
//!
//! Every user action goes through a [`Session`] method, which applies it to the [`Run`] (the
//! world and the run log, `run.rs`) at the world's current virtual time; the driver's ticks only
//! advance time. After each change the session builds the next view with the projection
//! (`projection/`) and hands it to the `View` reducer. The run lives behind `RefCell` in a
//! shared handle (not in a reducer) because it is large, mutable and not `Clone`. Saving the
//! run (sessionStorage, the URL hash), restarting it, opening a link and stepping back and
//! forth through its history happen here too.

mod run;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo_timers::callback::Timeout;
use idem_sim::{Command, SimConfig, Strategy};
use yew::prelude::*;

use crate::browser;
use crate::model::run_log::{text, RunLog};
use crate::model::settings::{self, NetworkSettings, ServerSettings, Settings};
use crate::model::view::{View, ViewAction};
use crate::projection::{PageState, Projector};

pub use run::Run;

/// Wall-clock milliseconds one tick may spend inside the world before yielding to the page.
pub const TICK_BUDGET_MS: f64 = 6.0;

/// Least wall-clock time between two refreshes driven by time (about 30 a second): the panels
/// stay live, the browser gets to lay out and paint in between.
pub const REFRESH_EVERY_MS: f64 = 33.0;

struct Inner {
    run: RefCell<Run>,
    projector: RefCell<Projector>,
    view: UseReducerDispatcher<View>,
    rev: Cell<u32>,
    /// A refresh is scheduled for the next task (see [`Session::advance`]).
    refresh_pending: Cell<bool>,
    /// The scheduled refresh; dropping it cancels it.
    refresh_timer: RefCell<Option<Timeout>>,
    /// Wall-clock time of the last refresh.
    refreshed_at: Cell<f64>,
    /// The whole recorded log while `←` has stepped back into it (`→` replays from it).
    future: RefCell<Option<RunLog>>,
    /// What the URL hash said at start.
    boot: Boot,
}

/// What the page found in the URL hash at start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Boot {
    /// The run came from a link (the page opens paused at its moment).
    pub from_link: bool,
    /// The hash was refused: this message is shown and the default run starts.
    pub error: Option<&'static str>,
    /// Projector mode from the link.
    pub projector: bool,
    /// The tour's step the link was on, and whether to run it afresh (the link holds no
    /// scenario run to rebuild: `#tr=3`, or the lab's step).
    pub tour: Option<(usize, bool)>,
    /// The central tab the link's sender had open (its place in the tab bar).
    pub tab: u8,
}

/// Shared handle to the session (cheap to clone; equal when it is the same session).
#[derive(Clone)]
pub struct Session(Rc<Inner>);

impl PartialEq for Session {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Session {
    /// Start the page: resume the run this tab had before a reload (sessionStorage), open the
    /// run a link describes, or begin a new one with the default settings (or `?seed=` from the
    /// URL).
    pub fn boot(view: UseReducerDispatcher<View>) -> Session {
        let mut boot = Boot::default();
        let mut stored = browser::session_get(browser::RUN_LOG_ITEM)
            .and_then(|t| text::decode(&t).ok().flatten());
        let hash = browser::location_hash();
        // A hash this tab wrote itself is its own run (a reload): the session log has it. Any
        // other hash is a link to open.
        let mut linked = None;
        // The URL a reload navigates to may carry the hash written just before the last save
        // (the one on `pagehide`), so both the last and the one before count as this tab's.
        let own = |item| browser::session_get(item).as_deref() == Some(hash.as_str());
        if !hash.is_empty() && !own(browser::HASH_ITEM) && !own(browser::PREV_HASH_ITEM) {
            stored = None;
            match text::decode(&hash) {
                Ok(Some(log)) => linked = Some(log),
                Ok(None) => {}
                Err(e) => boot.error = Some(e.0),
            }
        }
        let run = match (linked, stored) {
            (Some(log), _) => {
                boot.from_link = true;
                boot.projector = log.projector;
                boot.tab = log.tab;
                boot.tour = log.tour.map(|t| (usize::from(t), log.scenario.is_none()));
                let mut run = Run::rebuild(log);
                run.clear_storage();
                run
            }
            (None, Some(log)) => {
                boot.projector = log.projector;
                boot.tour = log.tour.map(|t| (usize::from(t), false));
                let mut run = Run::rebuild(log);
                // The page went away and came back: the tab's memory is gone, localStorage is not.
                run.reload_tab();
                run
            }
            (None, None) => {
                let mut settings = Settings::default();
                if let Some(seed) = browser::query_param("seed").and_then(|s| s.parse().ok()) {
                    settings.seed.value = seed;
                    settings.seed.text = seed.to_string();
                }
                let log = RunLog::new(
                    settings.seed.value,
                    settings.strategy,
                    settings.network(),
                    settings.server(),
                );
                let mut run = Run::start(log);
                // A new tab means a new simulated server: records of an old run would point at
                // a server that no longer exists.
                run.clear_storage();
                run
            }
        };
        // A rebuilt run's feed starts with what its world already did (the store's and PayCo's
        // lines; the page's own notes were not recorded), as the tab that sent the link saw it.
        let projector = Projector::default();
        Session(Rc::new(Inner {
            run: RefCell::new(run),
            projector: RefCell::new(projector),
            view,
            rev: Cell::new(1),
            refresh_pending: Cell::new(false),
            refresh_timer: RefCell::new(None),
            refreshed_at: Cell::new(0.0),
            future: RefCell::new(None),
            boot,
        }))
    }

    /// What the URL hash said at start.
    pub fn boot_info(&self) -> &Boot {
        &self.0.boot
    }

    /// The settings the page should show at start (restored after a reload or from a link).
    pub fn initial_settings(&self) -> Settings {
        let run = self.0.run.borrow();
        let log = run.log();
        let (network, server) = log.settings_now();
        Settings::restored(log.strategy, log.seed, &network, &server)
    }

    /// Change the run with `act`, then refresh the view in a task of its own.
    fn act(&self, act: impl FnOnce(&mut Run)) {
        self.forget_future();
        act(&mut self.0.run.borrow_mut());
        self.0.rev.set(self.0.rev.get() + 1);
        // A batch of a thousand checkouts is work enough for one task: render in the next.
        self.refresh_soon();
    }

    /// Pay for the cart with `strategy` (nothing new while the last checkout is pending).
    pub fn pay(&self, strategy: Strategy) {
        self.act(|run| run.pay(strategy));
    }

    /// Start `n` checkouts with `strategy`.
    pub fn batch(&self, strategy: Strategy, n: u32) {
        self.act(|run| run.batch(strategy, n));
    }

    /// The tab loses its memory; every pending checkout resumes from its journal.
    pub fn reload_tab(&self) {
        self.act(Run::reload_tab);
    }

    /// A buggy page pays and sends another cart under the same key.
    pub fn reuse_key(&self) {
        self.act(Run::reuse_key);
    }

    /// A one-shot fault (`DropNextRequest`, `DropNextResponse`, `DeclineNextCharge`).
    pub fn one_shot(&self, command: Command) {
        self.act(|run| run.one_shot(command));
    }

    /// New network settings, if they differ from the ones in force.
    pub fn set_network(&self, network: NetworkSettings) {
        if self.0.run.borrow().log().settings_now().0 != network {
            self.act(|run| run.set_network(network));
        }
    }

    /// New server settings, if they differ from the ones in force.
    pub fn set_server(&self, server: ServerSettings) {
        if self.0.run.borrow().log().settings_now().1 != server {
            self.act(|run| run.set_server(server));
        }
    }

    /// Remember the selected strategy for a reload (not a world input).
    pub fn set_strategy(&self, strategy: Strategy) {
        self.0.run.borrow_mut().log_now().strategy = strategy;
    }

    /// Replace the run with `run` (a new one, or one rebuilt at another moment): the view
    /// starts afresh.
    fn replace(&self, run: Run) {
        *self.0.projector.borrow_mut() = Projector::default();
        *self.0.run.borrow_mut() = run;
        self.0.rev.set(self.0.rev.get() + 1);
        self.refresh();
    }

    /// A new run with `seed` and the given settings: a fresh world, an empty log, the old
    /// run's localStorage records removed.
    pub fn restart(&self, seed: u64, settings: &Settings) {
        if self.0.run.borrow().log().seed == seed {
            return;
        }
        let mut log = RunLog::new(
            seed,
            settings.strategy,
            settings.network(),
            settings.server(),
        );
        log.projector = self.0.run.borrow().log().projector;
        log.tab = self.0.run.borrow().log().tab;
        self.0.run.borrow_mut().clear_storage();
        self.replace(Run::start(log));
    }

    /// Set up and run a classroom scenario (its fixed run with `fixed`) from time 0: a fresh
    /// world built from the scenario's config, an empty log that names it (and so the link).
    /// The log's settings are the scenario world's (its network, its server, its seed), so
    /// [`Session::initial_settings`] then gives the page's panels the values in force: the Network
    /// panel shows the scenario's loss, not what the page had before. The strategy is the one
    /// the scenario's page plays. `false` for an index that is no scenario.
    pub fn start_scenario(&self, index: usize, fixed: bool) -> bool {
        let Some(s) = idem_sim::SCENARIOS.get(index) else {
            return false;
        };
        self.forget_future();
        let log = {
            let run = self.0.run.borrow();
            let old = run.log();
            let strategy = s.strategy(fixed).unwrap_or(old.strategy);
            // Placeholders: the scenario's world decides, and its settings replace these below.
            let (network, server) = old.settings_now();
            let mut log = RunLog::new(s.seed, strategy, network, server);
            log.scenario = Some(crate::model::scenario::pick_text(s, fixed));
            log.projector = old.projector;
            log.tour = old.tour;
            log.tab = old.tab;
            log
        };
        self.0.run.borrow_mut().clear_storage();
        let mut run = Run::start(log);
        // The world is the scenario's: its faults and server are the settings in force (the
        // panels show them, and the timeline shades its fault windows from them).
        let config = run.world().config();
        let (network, server) = (
            settings::network_of(&config.faults),
            settings::server_of(&config.server, &config.faults),
        );
        let log = run.log_now();
        (log.network, log.server) = (network, server);
        self.replace(run);
        true
    }

    /// Time may run again after a scenario's pause (the page pressed play).
    pub fn release_hold(&self) {
        self.0.run.borrow_mut().release_hold();
    }

    /// Advance the world by `dt` virtual milliseconds, or less if the tick's budget runs out.
    pub fn advance(&self, dt: u64) {
        if dt == 0 {
            return;
        }
        self.forget_future();
        let start = browser::wall_ms();
        let over_budget = move || browser::wall_ms() - start > TICK_BUDGET_MS;
        let moved = self.0.run.borrow_mut().advance_by(dt, &over_budget);
        if moved && browser::wall_ms() - self.0.refreshed_at.get() >= REFRESH_EVERY_MS {
            self.refresh_soon();
        }
    }

    /// Refresh in a task of its own, so one task never pays for both the simulation and the
    /// rendering; several ticks before it runs cost one refresh.
    fn refresh_soon(&self) {
        if self.0.refresh_pending.replace(true) {
            return;
        }
        let session = self.clone();
        let timer = Timeout::new(0, move || {
            session.0.refresh_pending.set(false);
            session.refresh();
        });
        *self.0.refresh_timer.borrow_mut() = Some(timer);
    }

    /// Advance to the next event.
    pub fn step(&self) {
        self.forget_future();
        self.0.run.borrow_mut().step();
        self.refresh();
    }

    /// Send the world's current view to the `View` reducer.
    pub fn refresh(&self) {
        self.0.refreshed_at.set(browser::wall_ms());
        let mut run = self.0.run.borrow_mut();
        let page = PageState {
            notes: run.take_notes(),
            journal: run.journal(),
            current: run.current(),
            scenario: run.scenario_status(),
            log_rev: self.0.rev.get(),
        };
        let view = self.0.projector.borrow_mut().view(run.world(), page);
        drop(run);
        self.0.view.dispatch(ViewAction::Refresh(Rc::new(view)));
    }

    /// Save the run log (with the current time) so a real reload rebuilds this world: one
    /// text, in sessionStorage and in the URL hash.
    pub fn save_log(&self) {
        let hash = text::encode(self.0.run.borrow_mut().log_now());
        browser::session_set(browser::RUN_LOG_ITEM, &hash);
        if let Some(old) = browser::session_get(browser::HASH_ITEM).filter(|old| *old != hash) {
            browser::session_set(browser::PREV_HASH_ITEM, &old);
        }
        browser::session_set(browser::HASH_ITEM, &hash);
        browser::replace_hash(&hash);
    }

    /// The link that reproduces this run at this moment, on central tab `tab` (its place in
    /// the tab bar: the link opens there); the URL hash is brought up to date.
    pub fn share_link(&self, tab: u8) -> String {
        self.0.run.borrow_mut().log_now().tab = tab;
        self.save_log();
        browser::page_url()
    }

    /// Projector mode on or off, kept in the link.
    pub fn set_projector(&self, on: bool) {
        let changed = {
            let mut run = self.0.run.borrow_mut();
            let log = run.log_now();
            std::mem::replace(&mut log.projector, on) != on
        };
        if changed {
            self.save_log();
        }
    }

    /// The tour's step (or none), kept in the link.
    pub fn set_tour(&self, step: Option<usize>) {
        let step = step.and_then(|s| u8::try_from(s).ok());
        let changed = {
            let mut run = self.0.run.borrow_mut();
            let log = run.log_now();
            std::mem::replace(&mut log.tour, step) != step
        };
        if changed {
            self.save_log();
        }
    }

    /// Playing, stepping or acting in the past starts a new branch: the recorded future goes.
    fn forget_future(&self) {
        if self.0.future.borrow().is_some() {
            *self.0.future.borrow_mut() = None;
        }
    }

    /// Move one event back (`back`) or forward through the recorded history. `false` when
    /// there is nowhere to go.
    pub fn travel(&self, back: bool) -> bool {
        let events = self.0.run.borrow().world().events_run();
        let target = if back {
            events.checked_sub(1)
        } else {
            events.checked_add(1)
        };
        target.is_some_and(|t| self.seek(t))
    }

    /// Rebuild the world as it was after `target` events of the recorded history (deterministic
    /// replay from the seed), keeping the rest of the recording for `→`. A target past the end
    /// of the recording is refused (`false`).
    pub fn seek(&self, target: u64) -> bool {
        let events = self.0.run.borrow().world().events_run();
        let full = match self.0.future.borrow_mut().take() {
            Some(f) => f,
            None => self.0.run.borrow_mut().log_now().clone(),
        };
        if target == events || target > full.events {
            *self.0.future.borrow_mut() = (full.events > events).then_some(full);
            return false;
        }
        let log = if target == full.events {
            full.clone()
        } else {
            full.until(target)
        };
        self.replace(Run::rebuild(log));
        if target < full.events {
            *self.0.future.borrow_mut() = Some(full);
        }
        true
    }

    /// The run's history in the format `idem-lab replay <file>` reads.
    pub fn export_json(&self) -> String {
        // Plain data: serializing it cannot fail.
        serde_json::to_string(&self.0.run.borrow().world().export()).unwrap_or_default()
    }

    /// The config `idem-lab --config` runs for this seed and these settings (the lab).
    pub fn lab_config(&self, orders: u32) -> SimConfig {
        self.0.run.borrow().lab_config(orders)
    }

    /// Read the run (the timeline draws from its world and its log).
    pub fn with_run<R>(&self, f: impl FnOnce(&Run) -> R) -> R {
        f(&self.0.run.borrow())
    }
}
