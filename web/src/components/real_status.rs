//! Real mode's checkout line: where the last checkout stands, and what the server's key-state
//! endpoint said when its outcome was unknown (asked at once when the retry window closes;
//! the button asks again).

use yew::prelude::*;

use crate::model::real::{CheckoutState, RealInfo, Reconciled};
use crate::real::Real;

/// The last checkout's state and its reconciliation (a plain function, as `mode_switch`).
pub fn real_status(real: &Real, info: &RealInfo) -> Html {
    let Some(c) = &info.checkout else {
        return Html::default();
    };
    let outcome = match c.state {
        CheckoutState::Pending => "retrying under its key…",
        CheckoutState::Paid { replayed: false } => "paid",
        CheckoutState::Paid { replayed: true } => "paid (the saved answer, replayed)",
        CheckoutState::Refused(_) => "refused",
        CheckoutState::Unknown => "unknown: the retry window closed",
    };
    let asked = c.reconciled.as_ref().map(|r| match r {
        Reconciled::Asking => ("asking", "asking…".to_owned()),
        Reconciled::Done(status) => (
            "done",
            ["done, saved answer ", &status.to_string()].concat(),
        ),
        Reconciled::InFlight {
            lease_age_ms,
            lease_left_ms,
        } => (
            "in_flight",
            [
                "in flight: lease age ",
                &lease_age_ms.to_string(),
                " ms, ",
                &lease_left_ms.to_string(),
                " ms left",
            ]
            .concat(),
        ),
        Reconciled::Released => (
            "released",
            "released: the work did not complete; the key is free for this cart".to_owned(),
        ),
        Reconciled::NotFound => ("not_found", "not found: no live claim".to_owned()),
        Reconciled::AnotherRequest => (
            "another_request",
            "another request holds the key: this cart never ran under it".to_owned(),
        ),
        Reconciled::Failed(why) => ("failed", ["not asked: ", why].concat()),
    });
    let ask = {
        let (real, name) = (real.clone(), c.name.clone());
        Callback::from(move |_| real.reconcile(name.clone()))
    };
    let refused = match c.state {
        CheckoutState::Refused(status) => status.to_string(),
        _ => String::new(),
    };
    html! {
        <p class="real-status" data-testid="real-outcome" data-state={c.state.value()} data-name={c.name.clone()} data-key={c.key.clone()}>
            { &c.name }{ ": " }{ outcome }{ " " }{ refused }
            if let Some((state, text)) = asked {
                <br /><span data-testid="real-reconciled" data-state={state}>{ "Key state: " }{ text }</span>
            }
            if c.state == CheckoutState::Unknown {
                { " " }<button class="btn small" data-testid="real-reconcile" onclick={ask}>{ "Ask again" }</button>
            }
        </p>
    }
}
