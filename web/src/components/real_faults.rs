//! Real mode's one-shot faults, armed on idem-server for the next checkout that reaches their
//! point (`real/faults.rs` has the whole mapping).

use yew::prelude::*;

use crate::real::faults::OneShot;
use crate::real::Real;

/// The row of one-shot buttons under the Network panel's fields, in real mode (a plain
/// function, as `mode_switch`).
pub fn real_drops(real: &Real) -> Html {
    let arm = |fault: OneShot| {
        let real = real.clone();
        Callback::from(move |_| real.one_shot(fault))
    };
    html! {
        <div class="row-buttons drops" role="group" aria-label="Next checkout's faults">
            <span class="muted">{ "Next checkout:" }</span>
            <button class="btn" data-testid="drop-next-request" disabled=true
                title="Simulated mode only">{ "✂ request" }</button>
            <button class="btn" data-testid="drop-next-response" onclick={arm(OneShot::DropResponse)}
                title="Commit, then close unanswered">{ "✂ response" }</button>
            <button class="btn" data-testid="hold-next-response" onclick={arm(OneShot::HoldResponse)}
                title="Commit, answer after the timeout">{ "⏸ hold" }</button>
            <button class="btn" data-testid="unavailable-next" onclick={arm(OneShot::Unavailable)}
                title="503, Retry-After: 1">{ "503" }</button>
        </div>
    }
}
