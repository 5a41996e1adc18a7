//! The guided tour's panel (`model/tour.rs` holds the steps): the step's title and text, back,
//! next and close, and the effect that runs a step when the reader moves to it: its scenario
//! (on the sequence diagram) or, for the last, the lab with the lesson's faults.

use yew::prelude::*;

use crate::model::keyboard::{Ui, UiAction};
use crate::model::scenario::{ScenarioAction, ScenarioMenu};
use crate::model::tour::{go, STEPS};

/// Runs a step's scenario through `menu` when the reader moves to it (`ui.tour_rev`), and again
/// when the simulated mode comes back (the panel is hidden in real mode, where no step runs):
/// App calls it, so the panel itself can be a function.
#[hook]
pub fn use_tour_steps(
    ui: &UseReducerHandle<Ui>,
    menu: &UseReducerHandle<ScenarioMenu>,
    real_on: bool,
) {
    let (menu, step) = (menu.clone(), ui.tour);
    use_effect_with((ui.tour_rev, real_on), move |(rev, real_on)| {
        let run = step
            .and_then(|i| STEPS[i].scenario)
            .filter(|_| *rev > 0 && !*real_on);
        if let Some(s) = run.and_then(|(id, fixed)| Some((idem_sim::Scenario::by_id(id)?, fixed))) {
            menu.dispatch(ScenarioAction::Pick(s.0.index(), s.1));
        }
    });
}

/// The tour's panel, under the scenario bar while the tour is open. A function, not a component
/// (see `help`).
pub fn tour(ui: &UseReducerHandle<Ui>) -> Html {
    let Some(i) = ui.tour else {
        return Html::default();
    };
    let s = &STEPS[i];
    let to = |step: Option<usize>| {
        let ui = ui.clone();
        Callback::from(move |_: MouseEvent| {
            ui.dispatch(step.map_or(UiAction::TourClose, |n| go(n, true)))
        })
    };
    html! {
        <section class="tour" data-testid="tour" data-step={(i + 1).to_string()} aria-label="Guided tour" aria-live="polite">
            <p><strong data-testid="tour-title">{ "Tour " }{ i + 1 }{ "/" }{ STEPS.len() }{ " · " }{ s.title }</strong>{ " " }{ s.text }</p>
            <button class="btn" data-testid="tour-back" onclick={to(i.checked_sub(1))} disabled={i == 0} title="Previous step (b)">{ "◂ Back" }</button>
            <button class="btn primary" data-testid="tour-next" onclick={to(Some(i + 1))} disabled={i + 1 == STEPS.len()} title="Next step (n)">{ "Next ▸" }</button>
            <button class="btn ghost" data-testid="tour-close" onclick={to(None)} aria-label="Close the tour">{ "✕" }</button>
        </section>
    }
}
