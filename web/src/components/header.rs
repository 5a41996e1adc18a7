//! The top bar: name, what the page shows, the time controls and the run's vital signs.

use yew::prelude::*;

use super::time_controls::TimeControls;
use crate::model::view::View;

/// The page header.
#[function_component]
pub fn Header() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    html! {
        <header class="topbar">
            <div class="brand">
                <span class="logo" aria-hidden="true">{ "≡" }</span>
                <div>
                    <h1>{ "idem" }</h1>
                    <p class="tagline">{ "Retry a card charge safely: one idempotency key per checkout, kept across every retry." }</p>
                </div>
            </div>
            <TimeControls />
            <dl class="vitals">
                if view.real.is_some() {
                    <div><dt>{ "real time" }</dt><dd data-testid="real-time" data-ms={view.now.to_string()}>{ format_clock(view.now) }</dd></div>
                } else {
                <div><dt>{ "virtual time" }</dt><dd data-testid="virtual-time" data-ms={view.now.to_string()}>{ format_clock(view.now) }</dd></div>
                <div><dt>{ "seed" }</dt><dd data-testid="run-seed">{ view.seed }</dd></div>
                }
            </dl>
        </header>
    }
}

/// `83_456` ms → `"1:23.456"`.
pub fn format_clock(ms: u64) -> String {
    let (m, s, milli) = (ms / 60_000, (ms / 1000) % 60, ms % 1000);
    format!("{m}:{s:02}.{milli:03}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_format() {
        assert_eq!(super::format_clock(83_456), "1:23.456");
        assert_eq!(super::format_clock(0), "0:00.000");
    }
}
