//! Driving a world through a scenario: scripted controls at their times, and the pause.

use super::{Pause, Scenario, Step};
use crate::world::{Drive, World};

/// A scenario in progress. The world is the caller's (the demo keeps it in its adapter); every
/// call that moves it goes through here so scripted controls land at their times.
///
/// A control at time `t` is applied once every event due at or before `t` has run, with the
/// clock set to `t`: the same rule however the caller slices time, so runs replay exactly.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    scenario: &'static Scenario,
    fixed: bool,
    next: usize,
    paused: Option<(u64, u64)>,
    just_paused: bool,
}

impl ScenarioRun {
    /// Start `scenario` (its fixed run with `fixed`): the run and its world at time 0.
    pub fn start(scenario: &'static Scenario, fixed: bool) -> (ScenarioRun, World) {
        let world = World::new(scenario.config(fixed));
        let run = ScenarioRun {
            scenario,
            fixed,
            next: 0,
            paused: None,
            just_paused: false,
        };
        (run, world)
    }

    /// The scenario.
    pub fn scenario(&self) -> &'static Scenario {
        self.scenario
    }

    /// True for the fixed run.
    pub fn fixed(&self) -> bool {
        self.fixed
    }

    /// Where this run pauses.
    pub fn pause(&self) -> Pause {
        self.scenario.pause(self.fixed)
    }

    /// Virtual time and events run when the pause condition first held.
    pub fn paused_at(&self) -> Option<(u64, u64)> {
        self.paused
    }

    /// True once, right after the pause condition first held (the caller stops its clock).
    pub fn take_pause(&mut self) -> bool {
        std::mem::take(&mut self.just_paused)
    }

    fn next_step(&self) -> Option<&'static Step> {
        self.scenario.script(self.fixed).get(self.next)
    }

    /// When the next scripted control or event is due.
    pub fn next_due(&self, world: &World) -> Option<u64> {
        let script = self.next_step().map(|s| s.at.max(world.now()));
        match (script, world.next_event_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// True when the next scripted control is due at or before `t` and comes before the next
    /// event (what [`ScenarioRun::step`] would apply).
    pub fn script_due(&self, world: &World, t: u64) -> bool {
        self.next_step()
            .is_some_and(|s| s.at <= t && world.next_event_at().is_none_or(|e| e > s.at))
    }

    /// Apply the next due control, or run the next event; then look for the pause. False when
    /// nothing is left.
    pub fn step(&mut self, world: &mut World) -> bool {
        let moved = match self.next_step() {
            Some(s) if world.next_event_at().is_none_or(|t| t > s.at) => {
                world.run_until(s.at);
                self.next += 1;
                // Scripted commands name checkout 0, which the script starts first.
                let _ = world.apply(s.command.clone());
                true
            }
            _ => world.step(),
        };
        self.check(world);
        moved
    }

    /// Run everything due at or before `t` (stopping early at the pause when `stop_at_pause`),
    /// then set the clock to `t`, or to a timed pause inside it.
    pub fn run_until(&mut self, world: &mut World, t: u64, stop_at_pause: bool) {
        let mut t = t;
        if let (None, Pause::At(p)) = (self.paused, self.pause()) {
            if stop_at_pause {
                t = t.min(p);
            }
        }
        while self.next_due(world).is_some_and(|d| d <= t) {
            self.step(world);
            if stop_at_pause && self.just_paused {
                return;
            }
        }
        world.run_until(t);
        self.check(world);
    }

    fn check(&mut self, world: &World) {
        if self.paused.is_some() {
            return;
        }
        let done = self.next >= self.scenario.script(self.fixed).len();
        if self.pause().holds(world, done) {
            self.paused = Some((world.now(), world.events_run()));
            self.just_paused = true;
        }
    }

    /// Run until the pause (or `limit_ms` of virtual time); true if it paused.
    pub fn run_to_pause(&mut self, world: &mut World, limit_ms: u64) -> bool {
        while self.paused.is_none() {
            match self.next_due(world) {
                Some(t) if t <= limit_ms => {
                    self.step(world);
                }
                _ => {
                    self.run_until(world, limit_ms, true);
                    break;
                }
            }
        }
        self.paused.is_some()
    }
}

/// A scenario's run moves the world as it did when recorded: scripted controls at their times.
impl Drive for ScenarioRun {
    fn step(&mut self, world: &mut World) -> bool {
        ScenarioRun::step(self, world)
    }

    fn settle(&mut self, world: &mut World, at: u64) {
        while self.script_due(world, at) {
            ScenarioRun::step(self, world);
        }
    }
}
