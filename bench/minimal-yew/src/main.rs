//! The baseline page for `make bench`'s UI figures: a Yew 0.23 app built and served like the
//! demo, with nothing of idem in it.
//!
//! `data-testid="ready"` is its one control (the first interactive frame is measured when it
//! appears); `data-testid="start"` fills a table of 1,000 keyed rows of eight cells, like the
//! demo's claim table, and from then on a 16 ms timer (the demo's tick) changes every row's
//! countdown cell: every row re-renders on every tick, more than the demo's table does.

use gloo_timers::callback::Interval;
use yew::prelude::*;

const ROWS: u32 = 1_000;
const TICK_MS: u32 = 16;

#[derive(Properties, PartialEq)]
struct RowProps {
    index: u32,
    tick: u32,
}

#[function_component]
fn Row(props: &RowProps) -> Html {
    let left = 10_000u32.saturating_sub(props.tick.wrapping_mul(16)) % 10_000;
    html! {
        <div role="row" class="row" data-testid="row">
            <span>{ "tenant-a" }</span>
            <span>{ format!("key-{:06}", props.index) }</span>
            <span>{ "9f86d081" }</span>
            <span>{ if props.tick.is_multiple_of(2) { "● in_flight" } else { "✓ done" } }</span>
            <span>{ "201" }</span>
            <span>{ props.index }</span>
            <span>{ props.tick }</span>
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
                { for (0..if *running { ROWS } else { 0 }).map(|i| html! { <Row key={i} index={i} tick={*tick} /> }) }
            </div>
        </main>
    }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
