//! The guided tour: eight steps that walk a class through the lesson, each a classroom scenario
//! (idem-sim's, by id) shown on the sequence diagram, or the side-by-side lab, with a short
//! text. Next and back by button or key (`n` / `b`, PageDown / PageUp), and a link: the run
//! log's text carries the step (`tr=<1-based step>`), and `#tr=3` alone opens step 3 afresh.

use super::keyboard::{Tab, UiAction};

/// One step of the tour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TourStep {
    /// Its heading.
    pub title: &'static str,
    /// What to watch.
    pub text: &'static str,
    /// The scenario it runs (id, fixed run), or `None` for the lab with the lesson's faults.
    pub scenario: Option<(&'static str, bool)>,
}

impl TourStep {
    /// The tab the step shows: the sequence diagram, or the lab.
    pub fn tab(&self) -> Tab {
        if self.scenario.is_some() {
            Tab::Sequence
        } else {
            Tab::Lab
        }
    }
}

/// The steps, in order.
pub static STEPS: [TourStep; 8] = [
    TourStep {
        title: "The ambiguous timeout",
        text: "A page without keys pays. The server charges the card and answers, but the answer is lost. Watch the Browser lane: its timer fires with no answer. Was the card charged? From the page, nobody can tell.",
        scenario: Some(("ambiguous-timeout", false)),
    },
    TourStep {
        title: "No key: the retry charges twice",
        text: "The page does what pages do and tries again. Without a key the server sees a new payment: PayCo charges the same checkout twice.",
        scenario: Some(("no-key-retry", false)),
    },
    TourStep {
        title: "A key per attempt does not help",
        text: "Now the page sends a key, but a fresh one on every attempt. The retry's key is new to the store, so the work runs again: still two charges.",
        scenario: Some(("bug-new-key-per-attempt", false)),
    },
    TourStep {
        title: "One key per checkout",
        text: "One key, written to localStorage before the first send and sent on every retry: the store finds the saved answer and replays it. One charge.",
        scenario: Some(("bug-new-key-per-attempt", true)),
    },
    TourStep {
        title: "409 while in flight",
        text: "Two requests with the same key, 5 ms apart. The second meets the first one's claim, still in flight: 409 with Retry-After. Only one worker runs.",
        scenario: Some(("double-click", true)),
    },
    TourStep {
        title: "422 for other parameters",
        text: "A buggy page sends a different cart under a key already used. The store compares fingerprints: 422, and nothing runs.",
        scenario: Some(("other-cart", false)),
    },
    TourStep {
        title: "A stalled worker: taken over, then fenced",
        text: "The worker outlives its lease. A retry takes the claim over under a new lease token; when the old worker comes back, its save carries the old token and is refused: fenced. PayCo dedupes its charge.",
        scenario: Some(("stale-lock", false)),
    },
    TourStep {
        title: "The lab: all three strategies",
        text: "The same seed run once per strategy, with the lesson's faults: lost requests and answers, duplicates, crashes, slow workers, reloads. No key and a key per attempt charge some orders twice; one key per checkout never does.",
        scenario: None,
    },
];

/// Open step `i` (clamped to the last) and run it (`run`), or only show it (a link opened at
/// the moment it was saved).
pub fn go(i: usize, run: bool) -> UiAction {
    let step = i.min(STEPS.len() - 1);
    let s = &STEPS[step];
    UiAction::TourGo {
        step,
        tab: s.tab(),
        lesson: s.scenario.is_none(),
        run,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::keyboard::Ui;
    use std::rc::Rc;
    use yew::Reducible;

    #[test]
    fn every_step_names_a_scenario_run_that_exists() {
        for s in &STEPS {
            if let Some((id, fixed)) = s.scenario {
                let sc = idem_sim::Scenario::by_id(id).unwrap_or_else(|| panic!("{id}"));
                assert!(!fixed || sc.fix.is_some(), "{id} has no fixed run");
            }
        }
        assert!((6..=8).contains(&STEPS.len()));
    }

    #[test]
    fn going_opens_the_step_and_its_tab_and_runs_it_only_when_asked() {
        let ui = Rc::new(Ui::new(false));
        let ui = ui.reduce(go(0, true));
        assert_eq!((ui.tour, ui.tab, ui.tour_rev), (Some(0), Tab::Sequence, 1));
        let ui = ui.reduce(go(99, true));
        assert_eq!((ui.tour, ui.tab, ui.lab_lesson), (Some(7), Tab::Lab, true));
        let shown = ui.reduce(go(2, false));
        assert_eq!(
            (shown.tour, shown.tour_rev),
            (Some(2), 2),
            "shown, not run again"
        );
    }
}
