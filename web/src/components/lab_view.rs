//! The side-by-side lab: this run's seed and faults, N orders, run three times (no key, key per
//! attempt, same key) in chunks of a few milliseconds per tick, with live counters, a bar chart
//! of charges and double-charged orders, and the lesson's table. The finished table is what
//! `idem-lab --config <the config> --json` prints (`data-config` on the panel holds it).

use std::cell::RefCell;
use std::rc::Rc;

use gloo_timers::callback::Interval;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::browser;
use crate::lab::Lab;
use crate::model::lab_race::{Race, RaceRow};
use crate::model::settings::Strategy;

/// Wall-clock ms one tick may spend running the three worlds.
const CHUNK_BUDGET_MS: f64 = 8.0;
/// Events per world between budget checks.
const CHUNK_EVENTS: u32 = 64;
/// Orders per strategy unless the teacher types another number.
const DEFAULT_ORDERS: u32 = 100;
/// Most orders the lab runs per strategy.
const MAX_ORDERS: u32 = 5_000;

type Rows = Vec<(Strategy, RaceRow)>;

fn short(s: Strategy) -> &'static str {
    match s {
        Strategy::NoKey => "no key",
        Strategy::KeyPerTry => "key per attempt",
        Strategy::SameKey => "same key",
    }
}

fn push(out: &mut String, parts: &[&str]) {
    for p in parts {
        out.push_str(p);
    }
}

/// Bar chart (charges in blue, double-charged orders hatched vermillion, per strategy) and
/// the lesson's table, as one HTML string: numbers and fixed words only.
fn chart_and_table(rows: &Rows, orders: u32) -> String {
    let max = rows
        .iter()
        .map(|(_, r)| r.counts.charges)
        .max()
        .unwrap_or(0)
        .max(u64::from(orders))
        .max(1);
    const W: u64 = 330;
    let len = |v: u64| (v.min(max) * W / max).to_string();
    let mut s = String::with_capacity(4096);
    s.push_str("<svg class=\"lab-chart\" viewBox=\"0 0 640 132\" role=\"img\" data-testid=\"lab-chart\" aria-label=\"Charges and double-charged orders per strategy\"><defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#D55E00\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#fff\" stroke-width=\"2\"/></pattern></defs>");
    for (i, (st, r)) in rows.iter().enumerate() {
        let y = i as u64 * 42 + 4;
        let (c, d) = (
            r.counts.charges.to_string(),
            r.counts.double_charged.to_string(),
        );
        push(
            &mut s,
            &[
                "<text x=\"0\" y=\"",
                &(y + 12).to_string(),
                "\" class=\"lab-chart-label\">",
                short(*st),
                "</text>",
                "<rect x=\"140\" y=\"",
                &y.to_string(),
                "\" height=\"14\" width=\"",
                &len(r.counts.charges),
                "\" fill=\"#0072B2\"/>",
                "<text x=\"",
                &(146 + r.counts.charges.min(max) * W / max).to_string(),
                "\" y=\"",
                &(y + 12).to_string(),
                "\" class=\"lab-chart-num\">",
                &c,
                " charges</text>",
                "<rect x=\"140\" y=\"",
                &(y + 17).to_string(),
                "\" height=\"14\" width=\"",
                &len(r.counts.double_charged),
                "\" fill=\"url(#hatch)\"/>",
                "<text x=\"",
                &(146 + r.counts.double_charged.min(max) * W / max).to_string(),
                "\" y=\"",
                &(y + 29).to_string(),
                "\" class=\"lab-chart-num\">",
                &d,
                " double-charged</text>",
            ],
        );
    }
    s.push_str("</svg><table class=\"lab-table\"><thead><tr><th>strategy</th><th>charges</th><th>double-charged orders</th><th>attempts</th><th>409s</th><th>422s</th><th>takeovers</th><th>fenced</th><th>unknown</th></tr></thead><tbody>");
    for (st, r) in rows {
        let cells = [
            r.counts.charges,
            r.counts.double_charged,
            r.counts.attempts,
            r.counts.conflicts,
            r.counts.mismatches,
            r.counts.takeovers,
            r.counts.fenced,
            r.counts.unknown,
        ]
        .map(|v| v.to_string());
        push(
            &mut s,
            &[
                "<tr data-testid=\"lab-row\" data-strategy=\"",
                st.value(),
                "\" data-charges=\"",
                &cells[0],
                "\" data-double=\"",
                &cells[1],
                "\" data-done=\"",
                if r.done { "true" } else { "false" },
                "\"",
                if r.counts.double_charged > 0 {
                    " class=\"double\""
                } else {
                    ""
                },
                "><th scope=\"row\">",
                short(*st),
                "</th>",
            ],
        );
        for (i, v) in cells.iter().enumerate() {
            push(
                &mut s,
                &[
                    "<td class=\"num\">",
                    if i == 1 {
                        if r.counts.double_charged > 0 {
                            "✗ "
                        } else {
                            "✓ "
                        }
                    } else {
                        ""
                    },
                    v,
                    "</td>",
                ],
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// The lab panel.
#[function_component]
pub fn LabView() -> Html {
    let lab = use_context::<Lab>().expect("Lab context is provided by App");
    let race = use_mut_ref(|| None::<Race>);
    let rows = use_state(Rows::new);
    let run = use_state(|| (0u32, false));
    let orders = use_state(|| (DEFAULT_ORDERS, DEFAULT_ORDERS.to_string()));
    let config = use_state(String::new);

    let start = {
        let (lab, race, rows, run, orders, config) = (
            lab.clone(),
            race.clone(),
            rows.clone(),
            run.clone(),
            orders.clone(),
            config.clone(),
        );
        Callback::from(move |_: ()| {
            let c = lab.with_world(|a| a.lab_config(orders.0));
            config.set(serde_json::to_string(&c).unwrap_or_default());
            let r = Race::new(&c);
            rows.set(r.rows());
            *race.borrow_mut() = Some(r);
            run.set((run.0 + 1, false));
        })
    };
    {
        let start = start.clone();
        use_effect_with((), move |_| start.emit(()));
    }
    use_race_driver(race, rows.clone(), run.clone());

    let on_orders = {
        let orders = orders.clone();
        Callback::from(move |e: InputEvent| {
            let text = e.target_unchecked_into::<HtmlInputElement>().value();
            let n = text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_ORDERS).contains(n))
                .unwrap_or(orders.0);
            orders.set((n, text));
        })
    };
    let onclick = {
        let start = start.clone();
        Callback::from(move |_| start.emit(()))
    };
    let done = run.1;
    let seed = lab.with_world(|a| a.seed());
    html! {
        <section class="panel lab" aria-labelledby="h-lab" data-testid="lab" data-done={done.to_string()}
            data-orders={orders.0.to_string()} data-seed={seed.to_string()} data-config={(*config).clone()}>
            <h2 id="h-lab">{ "Side-by-side lab" }
                <span class="sub">{ "this seed and these faults, once per strategy" }</span></h2>
            <div class="lab-controls">
                <label class="field lab-orders"><span>{ "orders per strategy" }</span>
                    <input type="text" inputmode="numeric" data-testid="lab-orders" value={orders.1.clone()} oninput={on_orders} /></label>
                <button class="btn primary" data-testid="lab-run" {onclick}>{ "Run the lab" }</button>
                <span class="lab-state" data-testid="lab-state">{ if done { "✓ finished" } else { "running…" } }</span>
                <span class="muted lab-cmd mono">{ "native: idem-lab --config <data-config> --json" }</span>
            </div>
            { Html::from_html_unchecked(chart_and_table(&rows, orders.0).into()) }
        </section>
    }
}

/// While a lab run is unfinished, run it a few milliseconds per tick and publish its rows.
#[hook]
fn use_race_driver(
    race: Rc<RefCell<Option<Race>>>,
    rows: UseStateHandle<Rows>,
    run: UseStateHandle<(u32, bool)>,
) {
    let key = *run;
    use_effect_with(key, move |&(id, done)| {
        let interval = (id > 0 && !done).then(|| {
            Interval::new(16, move || {
                let mut guard = race.borrow_mut();
                let Some(r) = guard.as_mut() else { return };
                if r.done() {
                    return;
                }
                let start = browser::wall_ms();
                while !r.run_for(CHUNK_EVENTS) && browser::wall_ms() - start < CHUNK_BUDGET_MS {}
                rows.set(r.rows());
                if r.done() {
                    run.set((id, true));
                }
            })
        });
        move || drop(interval)
    });
}
