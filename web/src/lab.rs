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
        let stored = browser::session_get(browser::RUN_LOG_ITEM).and_then(|t| RunLog::decode(&t));
        let (world, log) = match stored {
            Some(mut log) => {
                let mut world = Adapter::replay(&log);
                // The page went away and came back: the tab's memory is gone, localStorage is not.
                log.push(world.now(), world.events_run(), Command::ReloadTab);
                world.apply(&Command::ReloadTab);
                (world, log)
            }
            None => {
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
        }))
    }

    /// The settings the page should show at start (restored after a reload).
    pub fn initial_settings(&self) -> Settings {
        let log = self.0.log.borrow();
        let world = self.0.world.borrow();
        Settings::restored(log.strategy, log.seed, world.network(), world.server())
    }

    /// Apply `command` now, record it, and refresh the view.
    pub fn command(&self, command: Command) {
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
        self.0.reset.set(true);
        self.0.rev.set(self.0.rev.get() + 1);
        self.refresh();
    }

    /// Advance the world by `dt` virtual milliseconds, or less if the tick's budget runs out.
    pub fn advance(&self, dt: u64) {
        if dt == 0 {
            return;
        }
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
    }
}
