//! The side-by-side lab: this run's seed and faults, N orders, run three times (no key, key per
//! attempt, same key) in chunks of a few milliseconds per tick, with live counters, a bar chart
//! of charges and double-charged orders, and the lesson's table. The finished table is what
//! `idem-lab --config <the config> --json` prints (`data-config` on the panel holds it).
//!
//! State in the `Lab` reducer (`model/lab.rs`); the three worlds beside it. Rendered with
//! `html!`: three rows and a chart of six bars are a few dozen nodes per refresh, and the lab and
//! the timeline together cost 1,669 B of gzip more that way than as HTML strings (measured with
//! `make build`, 230,333 against 228,664 B).

use std::cell::RefCell;
use std::rc::Rc;

use gloo_timers::callback::Interval;
use idem_sim::Strategy;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::browser;
use crate::model::keyboard::{Ui, UiAction};
use crate::model::lab::{Lab, LabAction, Race, RaceRow};
use crate::session::Session;

/// Wall-clock ms one tick may spend running the three worlds.
const CHUNK_BUDGET_MS: f64 = 8.0;
/// Events per world between budget checks.
const CHUNK_EVENTS: u32 = 64;
/// Width of the longest bar, in the chart's units.
const BAR_MAX: u64 = 330;

fn short(s: Strategy) -> &'static str {
    match s {
        Strategy::NoKey => "no key",
        Strategy::KeyPerAttempt => "key per attempt",
        Strategy::SameKey => "same key",
    }
}

/// Bar chart: charges in blue, double-charged orders hatched vermillion, per strategy.
fn chart(rows: &[(Strategy, RaceRow)], orders: u32) -> Html {
    let max = rows
        .iter()
        .map(|(_, r)| r.counts.charges)
        .max()
        .unwrap_or(0)
        .max(u64::from(orders))
        .max(1);
    let len = |v: u64| v.min(max) * BAR_MAX / max;
    let bars = rows.iter().enumerate().map(|(i, (st, r))| {
        let y = i as u64 * 42 + 4;
        let (charges, doubles) = (r.counts.charges, r.counts.double_charged);
        html! {
            <g>
                <text x="0" y={(y + 12).to_string()} class="lab-chart-label">{ short(*st) }</text>
                <rect x="140" y={y.to_string()} height="14" width={len(charges).to_string()} fill="#0072B2" />
                <text x={(146 + len(charges)).to_string()} y={(y + 12).to_string()} class="lab-chart-num">
                    { charges }{ " charges" }</text>
                <rect x="140" y={(y + 17).to_string()} height="14" width={len(doubles).to_string()} fill="url(#hatch)" />
                <text x={(146 + len(doubles)).to_string()} y={(y + 29).to_string()} class="lab-chart-num">
                    { doubles }{ " double-charged" }</text>
            </g>
        }
    });
    html! {
        <svg class="lab-chart" viewBox="0 0 640 132" role="img" data-testid="lab-chart"
            aria-label="Charges and double-charged orders per strategy">
            <defs>
                <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
                    <rect width="6" height="6" fill="#D55E00" />
                    <line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2" />
                </pattern>
            </defs>
            { for bars }
        </svg>
    }
}

/// The lesson's table.
fn table(rows: &[(Strategy, RaceRow)]) -> Html {
    let line = |(st, r): &(Strategy, RaceRow)| {
        let c = &r.counts;
        let double = c.double_charged > 0;
        let cell = |v: u64| html! { <td class="num">{ v }</td> };
        html! {
            <tr data-testid="lab-row" data-strategy={st.name()} data-charges={c.charges.to_string()}
                data-double={c.double_charged.to_string()} data-done={r.done.to_string()}
                class={classes!(double.then_some("double"))}>
                <th scope="row">{ short(*st) }</th>
                { cell(c.charges) }
                <td class="num">{ if double { "✗ " } else { "✓ " } }{ c.double_charged }</td>
                { cell(c.attempts) }
                { cell(c.conflicts) }
                { cell(c.mismatches) }
                { cell(c.takeovers) }
                { cell(c.fenced) }
                { cell(c.unknown) }
            </tr>
        }
    };
    html! {
        <table class="lab-table">
            <thead><tr>
                <th>{ "strategy" }</th><th>{ "charges" }</th><th>{ "double-charged orders" }</th>
                <th>{ "attempts" }</th><th>{ "409s" }</th><th>{ "422s" }</th><th>{ "takeovers" }</th>
                <th>{ "fenced" }</th><th>{ "unknown" }</th>
            </tr></thead>
            <tbody>{ for rows.iter().map(line) }</tbody>
        </table>
    }
}

/// The lab panel.
#[function_component]
pub fn LabView() -> Html {
    let session = use_context::<Session>().expect("Session context is provided by App");
    let ui = use_context::<UseReducerHandle<Ui>>().expect("Ui context is provided by App");
    let lesson = ui.lab_lesson;
    let lab = use_reducer(Lab::default);
    let race = use_mut_ref(|| None::<Race>);

    let start = {
        let (session, race, lab) = (session.clone(), race.clone(), lab.clone());
        Callback::from(move |_: ()| {
            let mut config = session.lab_config(lab.orders);
            if let (true, Ok(preset)) = (lesson, idem_sim::presets::preset("lesson")) {
                config.faults = preset.faults;
            }
            let r = Race::new(&config);
            let json = serde_json::to_string(&config).unwrap_or_default();
            lab.dispatch(LabAction::Started(json, r.rows()));
            *race.borrow_mut() = Some(r);
        })
    };
    {
        let start = start.clone();
        use_effect_with(lesson, move |_| start.emit(()));
    }
    // Without faults no retry happens, so the three strategies cannot differ: say so, and
    // offer the lesson's faults.
    let quiet = !lesson
        && session.with_run(|r| {
            let f = r.lab_config(1).faults;
            f.calm() == f
        });
    let use_lesson = Callback::from(move |_| ui.dispatch(UiAction::LabLesson(true)));
    use_race_driver(race, &lab);

    let on_orders = {
        let lab = lab.clone();
        Callback::from(move |e: InputEvent| {
            let text = e.target_unchecked_into::<HtmlInputElement>().value();
            lab.dispatch(LabAction::Orders(text));
        })
    };
    let onclick = Callback::from(move |_| start.emit(()));
    let seed = session.with_run(|r| r.world().config().seed);
    html! {
        <section class="panel lab" aria-labelledby="h-lab" data-testid="lab" data-done={lab.done.to_string()}
            data-orders={lab.orders.to_string()} data-seed={seed.to_string()} data-config={lab.config.clone()}>
            <h2 id="h-lab">{ "Side-by-side lab" }
                <span class="sub">{ "this seed and these faults, once per strategy" }</span></h2>
            <div class="lab-controls">
                <label class="field lab-orders"><span>{ "orders per strategy" }</span>
                    <input type="text" inputmode="numeric" data-testid="lab-orders" value={lab.text.clone()} oninput={on_orders} /></label>
                <button class="btn primary" data-testid="lab-run" {onclick}>{ "Run the lab" }</button>
                <span class="lab-state" data-testid="lab-state">{ if lab.done { "✓ finished" } else { "running…" } }</span>
                <span class="muted lab-cmd mono">{ "native: idem-lab --config <data-config> --json" }</span>
            </div>
            if quiet {
                <p class="lab-quiet" data-testid="lab-no-faults" role="note">
                    { "Every fault is off in the current settings: nothing is lost, nothing crashes, so no page ever retries and keys cannot make a difference. " }
                    <button class="btn primary" data-testid="lab-lesson" onclick={use_lesson}>{ "Run it with the lesson's faults" }</button>
                </p>
            }
            if lesson { <p class="muted" data-testid="lab-preset">{ "Faults: the lesson preset (idem-lab --preset lesson)." }</p> }
            { chart(&lab.rows, lab.orders) }
            { table(&lab.rows) }
        </section>
    }
}

/// While a lab run is unfinished, run it a few milliseconds per tick and publish its rows.
#[hook]
fn use_race_driver(race: Rc<RefCell<Option<Race>>>, lab: &UseReducerHandle<Lab>) {
    let (run, done) = (lab.run, lab.done);
    let lab = lab.dispatcher();
    use_effect_with((run, done), move |&(run, done)| {
        let interval = (run > 0 && !done).then(|| {
            Interval::new(16, move || {
                let mut guard = race.borrow_mut();
                let Some(r) = guard.as_mut() else { return };
                if r.done() {
                    return;
                }
                let start = browser::wall_ms();
                while !r.run_for(CHUNK_EVENTS) && browser::wall_ms() - start < CHUNK_BUDGET_MS {}
                lab.dispatch(LabAction::Progress(r.rows()));
            })
        });
        move || drop(interval)
    });
}
