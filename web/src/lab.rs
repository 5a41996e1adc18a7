//! The lab: the world, the run log, and the one way the page changes the world.
//!
//! Every user action becomes a [`Command`] applied at the world's current virtual time and
//! appended to the run log; the driver's ticks only advance time. After each change the lab
//! sends a fresh snapshot to the `View` reducer. The world lives behind `RefCell` in a shared
//! context (not in a reducer) because it is large, mutable and not `Clone`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo_timers::callback::Timeout;
use yew::prelude::*;

use crate::browser;
use crate::model::run_log::{Command, RunLog};
use crate::model::settings::{NetworkSettings, ServerSettings, Settings, Strategy};
use crate::model::share::{self, Shared};
use crate::model::view::{View, ViewAction};
use crate::world::Adapter;

/// Wall-clock milliseconds one tick may spend inside the world before yielding to the page.
pub const TICK_BUDGET_MS: f64 = 6.0;

/// Least wall-clock time between two refreshes driven by time (about 30 a second): the panels
/// stay live, the browser gets to lay out and paint in between.
pub const REFRESH_EVERY_MS: f64 = 33.0;

struct Inner {
    world: RefCell<Adapter>,
    log: RefCell<RunLog>,
    view: UseReducerDispatcher<View>,
    rev: Cell<u32>,
    reset: Cell<bool>,
    /// A refresh is scheduled for the next task (see [`Lab::advance`]).
    refresh_pending: Cell<bool>,
    /// The scheduled refresh; dropping it cancels it.
    refresh_timer: RefCell<Option<Timeout>>,
    /// Wall-clock time of the last refresh.
    refreshed_at: Cell<f64>,
    /// The whole recorded log while `←` has stepped back into it (`→` replays from it).
    future: RefCell<Option<RunLog>>,
    /// What the URL hash said at start.
    boot: Boot,
    /// Projector mode and scenario id, written into the URL hash with the run.
    projector: Cell<bool>,
    scenario: RefCell<Option<String>>,
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
    /// Scenario id from the link.
    pub scenario: Option<String>,
}

/// Shared handle to the lab (cheap to clone; equal when it is the same lab).
#[derive(Clone)]
pub struct Lab(Rc<Inner>);

impl PartialEq for Lab {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Lab {
    /// Start the page: resume the run this tab had before a reload (sessionStorage), or begin a
    /// new one with the default settings (or `?seed=` from the URL).
    pub fn boot(view: UseReducerDispatcher<View>) -> Lab {
        let mut boot = Boot::default();
        let mut stored =
            browser::session_get(browser::RUN_LOG_ITEM).and_then(|t| RunLog::decode(&t));
        let hash = browser::location_hash();
        // A hash this tab wrote itself is its own run (a reload): the session log has it. Any
        // other hash is a link to open.
        let mut linked = None;
        // The URL a reload navigates to may carry the hash written just before the last save
        // (the one on `pagehide`), so both the last and the one before count as this tab's.
        let own = |item| browser::session_get(item).as_deref() == Some(hash.as_str());
        if !hash.is_empty() && !own(browser::HASH_ITEM) && !own(browser::PREV_HASH_ITEM) {
            stored = None;
            match share::decode(&hash) {
                Ok(Some(s)) => linked = Some(s),
                Ok(None) => {}
                Err(e) => boot.error = Some(e.0),
            }
        }
        let (world, log) = match (linked, stored) {
            (Some(shared), _) => {
                let mut world = Adapter::replay(&shared.log);
                world.clear_storage();
                let mut log = shared.log;
                log.reached(world.now(), world.events_run());
                boot.from_link = true;
                boot.projector = shared.projector;
                boot.scenario = shared.scenario;
                (world, log)
            }
            (None, Some(mut log)) => {
                let mut world = Adapter::replay(&log);
                // The page went away and came back: the tab's memory is gone, localStorage is not.
                log.push(world.now(), world.events_run(), Command::ReloadTab);
                world.apply(&Command::ReloadTab);
                (world, log)
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
                let mut world = Adapter::fresh(&log);
                // A new tab means a new simulated server: records of an old run would point at
                // a server that no longer exists.
                world.clear_storage();
                (world, log)
            }
        };
        Lab(Rc::new(Inner {
            world: RefCell::new(world),
            log: RefCell::new(log),
            view,
            rev: Cell::new(1),
            reset: Cell::new(true),
            refresh_pending: Cell::new(false),
            refresh_timer: RefCell::new(None),
            refreshed_at: Cell::new(0.0),
            future: RefCell::new(None),
            projector: Cell::new(boot.projector),
            scenario: RefCell::new(boot.scenario.clone()),
            boot,
        }))
    }

    /// What the URL hash said at start.
    pub fn boot_info(&self) -> &Boot {
        &self.0.boot
    }

    /// The settings the page should show at start (restored after a reload).
    pub fn initial_settings(&self) -> Settings {
        let log = self.0.log.borrow();
        let world = self.0.world.borrow();
        Settings::restored(log.strategy, log.seed, world.network(), world.server())
    }

    /// Apply `command` now, record it, and refresh the view.
    pub fn command(&self, command: Command) {
        self.forget_future();
        {
            let mut world = self.0.world.borrow_mut();
            self.0
                .log
                .borrow_mut()
                .push(world.now(), world.events_run(), command.clone());
            world.apply(&command);
        }
        self.0.rev.set(self.0.rev.get() + 1);
        // A batch of a thousand checkouts is work enough for one task: render in the next.
        self.refresh_soon();
    }

    /// New network settings, if they differ from the world's.
    pub fn set_network(&self, network: NetworkSettings) {
        if self.0.world.borrow().network() != &network {
            self.command(Command::Network(network));
        }
    }

    /// New server settings, if they differ from the world's.
    pub fn set_server(&self, server: ServerSettings) {
        if self.0.world.borrow().server() != &server {
            self.command(Command::Server(server));
        }
    }

    /// Remember the selected strategy for a reload (not a world command).
    pub fn set_strategy(&self, strategy: Strategy) {
        self.0.log.borrow_mut().strategy = strategy;
    }

    /// A new run with `seed` and the given settings: a fresh world, an empty log, the old
    /// run's localStorage records removed.
    pub fn restart(&self, seed: u64, settings: &Settings) {
        if self.0.world.borrow().seed() == seed {
            return;
        }
        let log = RunLog::new(
            seed,
            settings.strategy,
            settings.network(),
            settings.server(),
        );
        self.0.world.borrow_mut().clear_storage();
        *self.0.world.borrow_mut() = Adapter::fresh(&log);
        *self.0.log.borrow_mut() = log;
        *self.0.scenario.borrow_mut() = None;
        self.0.reset.set(true);
        self.0.rev.set(self.0.rev.get() + 1);
        self.refresh();
    }

    /// Set up and run a classroom scenario (its fixed run with `fixed`) from time 0: a fresh
    /// world built from the scenario's config, an empty log that names it, the scenario id in
    /// the link. The page's network and server settings stay as they are.
    pub fn start_scenario(&self, index: usize, fixed: bool) {
        let Some(s) = idem_sim::SCENARIOS.get(index) else {
            return;
        };
        self.forget_future();
        let name = crate::model::scenario::pick_text(s, fixed);
        let log = {
            let world = self.0.world.borrow();
            let old = self.0.log.borrow();
            let mut log = RunLog::new(
                s.seed,
                old.strategy,
                world.network().clone(),
                world.server().clone(),
            );
            log.scenario = Some(name.clone());
            log
        };
        self.0.world.borrow_mut().clear_storage();
        *self.0.world.borrow_mut() = Adapter::fresh(&log);
        *self.0.log.borrow_mut() = log;
        *self.0.scenario.borrow_mut() = Some(name);
        self.0.reset.set(true);
        self.0.rev.set(self.0.rev.get() + 1);
        self.refresh();
    }

    /// Time may run again after a scenario's pause (the page pressed play).
    pub fn release_hold(&self) {
        self.0.world.borrow_mut().release_hold();
    }

    /// Advance the world by `dt` virtual milliseconds, or less if the tick's budget runs out.
    pub fn advance(&self, dt: u64) {
        if dt == 0 {
            return;
        }
        self.forget_future();
        let start = browser::wall_ms();
        let over_budget = move || browser::wall_ms() - start > TICK_BUDGET_MS;
        let moved = self.0.world.borrow_mut().advance_by(dt, &over_budget);
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
        let lab = self.clone();
        let timer = Timeout::new(0, move || {
            lab.0.refresh_pending.set(false);
            lab.refresh();
        });
        *self.0.refresh_timer.borrow_mut() = Some(timer);
    }

    /// Advance to the next event.
    pub fn step(&self) {
        self.forget_future();
        self.0.world.borrow_mut().step();
        self.refresh();
    }

    /// Send the world's current state to the view.
    pub fn refresh(&self) {
        self.0.refreshed_at.set(browser::wall_ms());
        let mut snap = self.0.world.borrow_mut().snapshot();
        snap.reset = self.0.reset.replace(false);
        snap.log_rev = self.0.rev.get();
        self.0.view.dispatch(ViewAction::Refresh(Box::new(snap)));
    }

    /// Save the run log (with the current time) so a real reload rebuilds this world.
    pub fn save_log(&self) {
        let (now, events) = {
            let world = self.0.world.borrow();
            (world.now(), world.events_run())
        };
        let mut log = self.0.log.borrow_mut();
        log.reached(now, events);
        browser::session_set(browser::RUN_LOG_ITEM, &log.encode());
        let hash = share::encode(&Shared {
            log: log.clone(),
            scenario: self.0.scenario.borrow().clone(),
            projector: self.0.projector.get(),
        });
        if let Some(old) = browser::session_get(browser::HASH_ITEM).filter(|old| *old != hash) {
            browser::session_set(browser::PREV_HASH_ITEM, &old);
        }
        browser::session_set(browser::HASH_ITEM, &hash);
        browser::replace_hash(&hash);
    }

    /// The link that reproduces this run at this moment (the URL hash is brought up to date).
    pub fn share_link(&self) -> String {
        self.save_log();
        browser::page_url()
    }

    /// Projector mode on or off, kept in the link.
    pub fn set_projector(&self, on: bool) {
        if self.0.projector.replace(on) != on {
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
        let events = self.0.world.borrow().events_run();
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
        let events = self.0.world.borrow().events_run();
        let full = match self.0.future.borrow_mut().take() {
            Some(f) => f,
            None => {
                let mut l = self.0.log.borrow().clone();
                l.reached(self.0.world.borrow().now(), events);
                l
            }
        };
        if target == events || target > full.events {
            *self.0.future.borrow_mut() = (full.events > events).then_some(full);
            return false;
        }
        let log = if target == full.events {
            full.clone()
        } else {
            let mut l = full.clone();
            l.entries.retain(|e| e.after_events <= target);
            l.now = l.entries.last().map_or(0, |e| e.at);
            l.events = target;
            l
        };
        let world = Adapter::replay(&log);
        let mut log = log;
        log.now = world.now();
        *self.0.world.borrow_mut() = world;
        *self.0.log.borrow_mut() = log;
        if target < full.events {
            *self.0.future.borrow_mut() = Some(full);
        }
        self.0.reset.set(true);
        self.0.rev.set(self.0.rev.get() + 1);
        self.refresh();
        true
    }

    /// The run's history in the format `idem-lab replay <file>` reads.
    pub fn export_json(&self) -> String {
        // Plain data: serializing it cannot fail.
        serde_json::to_string(&self.0.world.borrow().world().export()).unwrap_or_default()
    }

    /// Read the run log (the timeline's fault windows come from its settings).
    pub fn with_log<R>(&self, f: impl FnOnce(&RunLog) -> R) -> R {
        f(&self.0.log.borrow())
    }

    /// Read the world (the timeline draws from it).
    pub fn with_world<R>(&self, f: impl FnOnce(&Adapter) -> R) -> R {
        f(&self.0.world.borrow())
    }
}
