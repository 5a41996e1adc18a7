//! Real mode's strip above the panels: which idem-server, this session's tenant, whether the
//! server answers; when it does not, says so plainly and offers the simulated mode.

use yew::prelude::*;

use crate::model::real::{Link, RealInfo};
use crate::real::Real;

/// The strip (a plain function, as `mode_switch`).
pub fn real_banner(real: &Real, info: &RealInfo) -> Html {
    let (state, text) = match &info.link {
        Link::Connecting => ("connecting", "connecting…"),
        Link::Up => ("up", "● live"),
        Link::Reconnecting => ("reconnecting", "reconnecting…"),
        Link::Down(_) => ("down", "✗ not answering"),
    };
    let simulated = {
        let real = real.clone();
        Callback::from(move |_| real.leave())
    };
    let retry = {
        let real = real.clone();
        Callback::from(move |_| real.enter())
    };
    html! {
        <div class="real-bar" role="region" aria-label="Real-server mode">
            <p>
                <strong>{ "Real mode" }</strong>{ " · idem-server " }<code data-testid="real-server">{ &info.server }</code>
                { " · tenant " }<code data-testid="real-tenant" data-t0={info.t0.to_string()}>{ &info.tenant }</code>
                { " " }<span class={classes!("chip", state)} data-testid="real-link" data-state={state}>{ text }</span>
            </p>
            if let Link::Down(why) = &info.link {
                <div class="share-error" role="alert" data-testid="real-down">
                    <p>{ why }</p>
                    <button class="btn primary" data-testid="real-use-simulated" onclick={simulated}>{ "Use the simulated mode" }</button>
                    { " " }<button class="btn" data-testid="real-retry" onclick={retry}>{ "Try again" }</button>
                </div>
            }
            if let Some(notice) = &info.notice {
                <p class="share-error" role="alert" data-testid="real-notice">{ notice }</p>
            }
        </div>
    }
}
