//! The Network panel's switch between the simulated world (virtual time) and the real
//! idem-server (real time, real fetch, real localStorage). A plain function, not a component:
//! a component costs the bundle kilobytes of Yew's machinery per type.

use yew::prelude::*;

use crate::real::Real;

/// Simulated or real (`on`: real mode is on).
pub fn mode_switch(real: &Real, on: bool) -> Html {
    let pick = |to_real: bool| {
        let real = real.clone();
        Callback::from(
            move |_: Event| {
                if to_real {
                    real.enter()
                } else {
                    real.leave()
                }
            },
        )
    };
    html! {
        <fieldset class="mode" data-testid="mode" data-mode={if on { "real" } else { "simulated" }}>
            <legend class="sr-only">{ "Mode" }</legend>
            <label class="check"><input type="radio" name="mode" data-testid="mode-simulated" checked={!on}
                onchange={pick(false)} /><span>{ "simulated (virtual time)" }</span></label>
            <label class="check"><input type="radio" name="mode" data-testid="mode-real" checked={on}
                onchange={pick(true)} /><span>{ "real: idem-server on 127.0.0.1 (SQLite)" }</span></label>
        </fieldset>
    }
}
