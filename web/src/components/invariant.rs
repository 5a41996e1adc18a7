//! The invariant badge: at most one charge per order. Red, with the seed, when broken.

use yew::prelude::*;

/// The badge: `broken` orders charged more than once in the run of `seed`; in `real` mode the
/// count is PayCo's real ledger for this session (no seed to name). A function, not a
/// component (a component type costs Yew's machinery in the bundle); the ledger renders it.
pub fn invariant(broken: u32, seed: u64, real: bool) -> Html {
    let ok = broken == 0;
    html! {
        <div class={classes!("invariant", if ok { "ok" } else { "broken" })} data-testid="invariant"
            data-ok={ok.to_string()} data-seed={seed.to_string()} role="status">
            <span class="inv-icon" aria-hidden="true">{ if ok { "✓" } else { "✗" } }</span>
            <span class="inv-text">
                <strong>{ "≤ 1 charge per order" }</strong>
                if ok {
                    <span>{ "holds" }</span>
                } else {
                    <span>{ format!("broken: {broken} order{} charged twice", if broken == 1 { "" } else { "s" }) }
                        if !real { { format!(" · seed {seed}") } }</span>
                }
            </span>
        </div>
    }
}
