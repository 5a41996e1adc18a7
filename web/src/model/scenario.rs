//! The scenario menu: which classroom scenario the user picked, and whether its fixed run.
//! The scenarios themselves are idem-sim's data ([`idem_sim::SCENARIOS`], stable order and
//! ids); the run's live state (paused or not, where) comes from the world in the snapshot.

use std::rc::Rc;

use idem_sim::{Properties, Scenario, SCENARIOS};
use yew::Reducible;

/// Suffix of a fixed run in a run log or link: `bug-new-key-per-attempt_fix`.
pub const FIX_SUFFIX: &str = "_fix";

/// The scenario and run a stored name stands for.
pub fn pick(text: &str) -> Option<(&'static Scenario, bool)> {
    match text.strip_suffix(FIX_SUFFIX) {
        Some(id) => Scenario::by_id(id)
            .filter(|s| s.fix.is_some())
            .map(|s| (s, true)),
        None => Scenario::by_id(text).map(|s| (s, false)),
    }
}

/// The stored name of a scenario's run.
pub fn pick_text(s: &Scenario, fixed: bool) -> String {
    let mut t = s.id.to_string();
    if fixed {
        t.push_str(FIX_SUFFIX);
    }
    t
}

/// What the world says about the scenario it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScenarioStatus {
    /// Index in [`SCENARIOS`].
    pub index: usize,
    /// The fixed run.
    pub fixed: bool,
    /// Virtual time and event count of the pause, once reached.
    pub paused_at: Option<(u64, u64)>,
}

impl ScenarioStatus {
    /// The scenario.
    pub fn scenario(&self) -> &'static Scenario {
        &SCENARIOS[self.index]
    }
}

/// Live state the snapshot carries beside the tables.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Live {
    /// The scenario the world runs, if any.
    pub scenario: Option<ScenarioStatus>,
    /// The four property badges.
    pub properties: Rc<Properties>,
}

/// The user's pick. `rev` changes on every request, so picking the same scenario again reruns it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScenarioMenu {
    /// Index in [`SCENARIOS`] of the last pick.
    pub selected: Option<usize>,
    /// The fixed run was asked for.
    pub fixed: bool,
    /// Bumped on every run request.
    pub rev: u32,
}

/// What the menu can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioAction {
    /// Run the scenario at this index (its first, buggy run).
    Run(usize),
    /// Run this scenario (by index) with its fix: the one the bar shows, which after a reload
    /// or a link is the run log's, not a pick of this page load.
    RunFixed(usize),
    /// Run this scenario's run (by index; `true`: the fixed one, when it has one).
    Pick(usize, bool),
}

impl Reducible for ScenarioMenu {
    type Action = ScenarioAction;

    fn reduce(self: Rc<Self>, action: ScenarioAction) -> Rc<Self> {
        let mut next = *self;
        match action {
            ScenarioAction::Run(i) if i < SCENARIOS.len() => {
                next.selected = Some(i);
                next.fixed = false;
                next.rev += 1;
            }
            ScenarioAction::Pick(i, fixed) if i < SCENARIOS.len() => {
                next.selected = Some(i);
                next.fixed = fixed && SCENARIOS[i].fix.is_some();
                next.rev += 1;
            }
            ScenarioAction::RunFixed(i) if i < SCENARIOS.len() => {
                if SCENARIOS[i].fix.is_none() {
                    return self;
                }
                next.selected = Some(i);
                next.fixed = true;
                next.rev += 1;
            }
            _ => return self,
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_bug_scenarios_have_a_fixed_run() {
        for s in &SCENARIOS {
            assert_eq!(
                pick(&pick_text(s, false)).map(|(p, f)| (p.id, f)),
                Some((s.id, false))
            );
            let fixed = pick(&pick_text(s, true)).map(|(p, f)| (p.id, f));
            assert_eq!(fixed.is_some(), s.fix.is_some(), "{}", s.id);
        }
        assert!(pick("no-such-scenario").is_none());
    }

    #[test]
    fn run_fixed_needs_a_scenario_with_a_fix_and_no_earlier_pick() {
        let m = Rc::new(ScenarioMenu::default());
        let lost = Scenario::by_id("lost-response").unwrap().index();
        let same = m.clone().reduce(ScenarioAction::RunFixed(lost));
        assert_eq!(same, m, "lost-response has no fix");
        // As after a reload: nothing picked on this page load, the bar shows the log's scenario.
        let bug = Scenario::by_id("bug-new-key-per-attempt").unwrap().index();
        let m = m.reduce(ScenarioAction::RunFixed(bug));
        assert_eq!((m.selected, m.fixed, m.rev), (Some(bug), true, 1));
        let m = m.reduce(ScenarioAction::Run(lost));
        assert_eq!((m.selected, m.fixed, m.rev), (Some(lost), false, 2));
        let m = m
            .reduce(ScenarioAction::Run(bug))
            .reduce(ScenarioAction::RunFixed(bug));
        assert_eq!((m.selected, m.fixed, m.rev), (Some(bug), true, 4));
        let again = m.reduce(ScenarioAction::Run(bug));
        assert_eq!((again.fixed, again.rev), (false, 5), "the same pick reruns");
    }
}
