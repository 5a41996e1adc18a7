//! Live property badges from the simulator's checker. A broken badge names the moment it
//! first broke; clicking it pauses and seeks back to that event (the rest of the run stays
//! recorded: `→` steps forward through it).

use yew::prelude::*;

use idem_sim::{CheckoutOutcome, Properties, Property, Violation};

use crate::model::clock::{Clock, ClockAction};
use crate::session::Session;

/// One label per badge, in `Properties::NAMES` order.
const LABELS: [&str; 6] = [
    "≤ 1 charge per order",
    "every replay identical",
    "no record stuck in flight",
    "answers agree with PayCo",
    "a 422 never ran",
    "1 receipt per paid order",
];

/// What broke, in words (string pieces, not `format!`: the bundle stays lean).
fn what(v: &Violation) -> String {
    let (who, text) = match v {
        Violation::DoubleCharge { checkout, .. } => (checkout.to_string(), " charged twice"),
        Violation::ReplayDiffers { checkout, .. } => (
            checkout.to_string(),
            " got an answer that differs from the first",
        ),
        Violation::WrongAnswer { checkout, .. } => {
            (checkout.to_string(), " got the answer for other parameters")
        }
        Violation::StuckInFlight { key } => (key.chars().take(8).collect(), " stuck in flight"),
        Violation::AnswerDisagrees {
            checkout, outcome, ..
        } => (
            checkout.to_string(),
            match outcome {
                CheckoutOutcome::Paid { .. } => " told paid, but PayCo did not charge it once",
                _ => " told refused, but PayCo charged it",
            },
        ),
        Violation::MismatchButRan { checkout, .. } => (
            checkout.to_string(),
            " told 422 for a payload that ran under its key",
        ),
        Violation::SavedUnknownOutcome { checkout, .. } => (
            checkout.to_string(),
            "'s \"outcome unknown\" answer saved for every retry, though PayCo knows",
        ),
        Violation::ReceiptCount {
            order, receipts, ..
        } => (
            order.to_string(),
            if *receipts == 0 {
                " paid, but no receipt was sent"
            } else {
                " got a second receipt"
            },
        ),
        other => (String::new(), other.name()),
    };
    who + text
}

/// The six badges; a click on a broken one pauses `clock` and seeks `session` to the moment
/// it broke. A function, not a component (see `help`): six buttons cost less to rebuild with
/// the ledger than a component type costs the bundle.
pub fn property_badges(
    props: &Properties,
    clock: &UseReducerHandle<Clock>,
    session: &Session,
) -> Html {
    let badge = |i: usize, p: &Property| {
        let ok = p.ok();
        let (at, event, title) = match &p.broke {
            Some(b) => {
                let (at, ev) = (b.at.to_string(), b.event.to_string());
                let title = [
                    "broke at t=",
                    &at,
                    " ms (event ",
                    &ev,
                    "): ",
                    &what(&b.violation),
                ]
                .concat();
                (at, ev, title)
            }
            None => (String::new(), String::new(), "holds".to_string()),
        };
        let onclick = {
            let (clock, session) = (clock.clone(), session.clone());
            let target = p.broke.as_ref().map(|b| b.event);
            Callback::from(move |_: MouseEvent| {
                clock.dispatch(ClockAction::Pause);
                if let Some(t) = target {
                    session.seek(t);
                }
            })
        };
        html! {
            <button class={classes!("prop", if ok { "ok" } else { "broken" })}
                data-testid={["property-", Properties::NAMES[i]].concat()}
                data-ok={if ok { "true" } else { "false" }} data-at={at.clone()} data-event={event.clone()}
                title={title} onclick={onclick} disabled={ok}>
                <span aria-hidden="true">{ if ok { "✓" } else { "✗" } }</span>
                { LABELS[i] }
                if !ok {
                    <span class="prop-when">{ " @ " }{ at }{ " ms · #" }{ event }</span>
                }
            </button>
        }
    };
    html! {
        <div class="props" role="status" aria-label="Properties">
            { for props.all().into_iter().enumerate().map(|(i, p)| badge(i, p)) }
        </div>
    }
}
