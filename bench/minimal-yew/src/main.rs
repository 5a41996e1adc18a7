//! The baseline page for `make bench`'s UI figures: a Yew 0.23 app built and served like the
//! demo, with nothing of idem in it.
//!
//! `data-testid="ready"` is its one control (the first interactive frame is measured when it
//! appears); `data-testid="start"` fills a table of 1,000 keyed rows of eight cells, like the
//! demo's claim table, keyed and compared by props like the demo's rows, and from then on a
//! 16 ms timer (the demo's tick) changes one row in [`SPREAD`] on every tick, so every row
//! changes about every 320 ms and the table keeps updating for as long as the page runs.

use gloo_timers::callback::Interval;
use yew::prelude::*;

const ROWS: u32 = 1_000;
const TICK_MS: u32 = 16;
/// One row in this many changes on each tick.
const SPREAD: u32 = 20;

#[derive(Properties, PartialEq)]
struct RowProps {
    index: u32,
    /// How many times this row has changed; moves on the ticks where `tick % SPREAD` is the
    /// row's slot.
    version: u32,
}

#[function_component]
fn Row(props: &RowProps) -> Html {
    let left = 10_000u32.saturating_sub(props.version.wrapping_mul(320) % 10_000);
    html! {
        <div role="row" class="row" data-testid="row">
            <span>{ "tenant-a" }</span>
            <span>{ format!("key-{:06}", props.index) }</span>
            <span>{ "9f86d081" }</span>
            <span>{ if props.version.is_multiple_of(2) { "● in_flight" } else { "✓ done" } }</span>
            <span>{ "201" }</span>
            <span>{ props.index }</span>
            <span>{ props.version }</span>
            <span>{ format!("{:.1} s", f64::from(left) / 1000.0) }</span>
        </div>
    }
}

#[function_component]
fn App() -> Html {
    let running = use_state(|| false);
    let tick = use_state(|| 0u32);
    {
        let tick = tick.clone();
        use_effect_with(*running, move |running| {
            let interval = running.then(|| {
                let mut n = 0u32;
                Interval::new(TICK_MS, move || {
                    n = n.wrapping_add(1);
                    tick.set(n);
                })
            });
            move || drop(interval)
        });
    }
    let start = {
        let running = running.clone();
        Callback::from(move |_| running.set(true))
    };
    html! {
        <main>
            <button data-testid="ready">{ "ready" }</button>
            <button data-testid="start" onclick={start}>{ "start" }</button>
            <div role="table" data-testid="rows">
                { for (0..if *running { ROWS } else { 0 }).map(|i| {
                    let version = (*tick + SPREAD - i % SPREAD) / SPREAD;
                    html! { <Row key={i} index={i} {version} /> }
                }) }
            </div>
        </main>
    }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
