//! The invariant badge: at most one charge per order. Red, with the seed, when broken.

use yew::prelude::*;

/// Props of [`Invariant`]: plain values, so the badge skips re-rendering while they hold.
#[derive(Properties, PartialEq)]
pub struct InvariantProps {
    /// Orders charged more than once.
    pub broken: u32,
    /// Seed of the run.
    pub seed: u64,
    /// Real mode: the count is PayCo's real ledger for this session (no seed to name).
    #[prop_or_default]
    pub real: bool,
}

/// The badge.
#[function_component]
pub fn Invariant(props: &InvariantProps) -> Html {
    let (broken, seed) = (props.broken, props.seed);
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
                        if !props.real { { format!(" · seed {seed}") } }</span>
                }
            </span>
        </div>
    }
}
