//! The invariant badge: at most one charge per order. Red, with the seed, when broken.

use yew::prelude::*;

use crate::model::view::View;

/// The badge.
#[function_component]
pub fn Invariant() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let broken = view.stats.double_charged;
    let ok = broken == 0;
    html! {
        <div class={classes!("invariant", if ok { "ok" } else { "broken" })} data-testid="invariant"
            data-ok={ok.to_string()} data-seed={view.seed.to_string()} role="status">
            <span class="inv-icon" aria-hidden="true">{ if ok { "✓" } else { "✗" } }</span>
            <span class="inv-text">
                <strong>{ "≤ 1 charge per order" }</strong>
                if ok {
                    <span>{ "holds" }</span>
                } else {
                    <span>{ format!("broken: {broken} order{} charged twice · seed {}", if broken == 1 { "" } else { "s" }, view.seed) }</span>
                }
            </span>
        </div>
    }
}
