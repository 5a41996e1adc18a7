//! The scenario bar: pick a classroom scenario, run it, read what to watch; at the pause, what
//! just happened; for bug scenarios, a button that re-runs the same seed with the fix.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use idem_sim::SCENARIOS;

use crate::model::keyboard::Ui;
use crate::model::scenario::{ScenarioAction, ScenarioMenu};
use crate::model::tour;
use crate::model::view::View;

/// One row under the header. A function, not a component: see `help`.
pub fn scenario_bar(
    menu: &UseReducerHandle<ScenarioMenu>,
    ui: &UseReducerHandle<Ui>,
    view: &View,
) -> Html {
    let ui = ui.clone();
    let open_tour = Callback::from(move |_: MouseEvent| ui.dispatch(tour::go(0, true)));
    let status = view.live.scenario;
    let selected = menu.selected.or(status.map(|s| s.index));
    let on_select = {
        let menu = menu.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Ok(i) = v.parse::<usize>() {
                menu.dispatch(ScenarioAction::Run(i));
            }
        })
    };
    let run = |i: usize| {
        let menu = menu.clone();
        Callback::from(move |_: MouseEvent| menu.dispatch(ScenarioAction::Run(i)))
    };
    let on_fix = {
        let menu = menu.clone();
        let shown = status.map(|s| s.index);
        Callback::from(move |_: MouseEvent| {
            if let Some(i) = shown {
                menu.dispatch(ScenarioAction::RunFixed(i));
            }
        })
    };
    let (caption, id, paused, fixed) = match status {
        Some(st) => {
            let s = st.scenario();
            let text = match (st.paused_at, st.fixed, &s.fix) {
                (Some(_), fixed, _) => s.after_pause(fixed),
                (None, true, Some(f)) => f.caption,
                _ => s.caption,
            };
            (text, s.id, st.paused_at.is_some(), st.fixed)
        }
        None => ("Pick a scenario: one click sets it up, runs it, and pauses at the moment that matters.", "", false, false),
    };
    let has_fix = status.is_some_and(|st| st.scenario().fix.is_some());
    let paused_at = status.and_then(|s| s.paused_at);
    html! {
        <section class="scenario-bar" aria-label="Scenarios">
            <button class="btn primary" data-testid="tour-open" onclick={open_tour} title="A guided tour of the lesson, step by step (t)">{ "Tour" }</button>
            <label class="select-field scn-select">
                <span>{ "Scenario" }</span>
                <select data-testid="scenario-select" onchange={on_select}>
                    <option value="" selected={selected.is_none()} disabled=true>{ "choose…" }</option>
                    { for SCENARIOS.iter().enumerate().map(|(i, s)| html! {
                        <option value={i.to_string()} selected={selected == Some(i)}>{ s.title }</option>
                    }) }
                </select>
            </label>
            <div class="scn-buttons" role="group" aria-label="Run a scenario">
                { for SCENARIOS.iter().enumerate().map(|(i, s)| html! {
                    <button class={classes!("scn-btn", (selected == Some(i)).then_some("on"))}
                        data-testid={["scenario-", s.id].concat()} title={s.title} onclick={run(i)}>
                        { (i + 1).to_string() }
                    </button>
                }) }
            </div>
            <p class={classes!("scn-caption", paused.then_some("paused"))} data-testid="scenario-caption"
                data-scenario={id} data-paused={if paused { "true" } else { "false" }} data-fixed={if fixed { "true" } else { "false" }}
                aria-live="polite">
                if paused {
                    <strong class="scn-tag">{ "Paused" }</strong>
                } else if fixed {
                    <strong class="scn-tag fix">{ "Fixed" }</strong>
                }
                { caption }
                if let Some((at, ev)) = paused_at {
                    <span class="scn-when">{ " · t=" }{ at }{ " ms, event " }{ ev }</span>
                }
            </p>
            if has_fix {
                <button class="scn-fix" data-testid="scenario-fix" onclick={on_fix} disabled={fixed}>
                    { if fixed { "fix applied" } else { "now with the fix" } }
                </button>
            }
        </section>
    }
}
