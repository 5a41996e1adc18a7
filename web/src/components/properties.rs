//! Live property badges from the simulator's checker. A broken badge names the moment it
//! first broke; clicking it pauses and seeks back to that event (the rest of the run stays
//! recorded: `→` steps forward through it).

use yew::prelude::*;

use idem_sim::{Properties, Property, Violation};

use crate::lab::Lab;
use crate::model::clock::{Clock, ClockAction};
use crate::model::view::View;

const LABELS: [&str; 3] = [
    "≤ 1 charge per order",
    "every replay identical",
    "no record stuck in flight",
];

fn what(v: &Violation) -> String {
    match v {
        Violation::DoubleCharge { checkout, .. } => format!("{checkout} charged twice"),
        Violation::ReplayDiffers { checkout, .. } => format!("{checkout} got a different answer"),
        Violation::WrongAnswer {
            checkout,
            sent,
            answered,
        } => {
            format!("{checkout} sent {sent}, got the answer for {answered}")
        }
        Violation::StuckInFlight { key } => {
            format!("{} stuck in flight", key.get(..8).unwrap_or(key))
        }
        other => other.name().to_string(),
    }
}

/// The three badges.
#[function_component]
pub fn PropertyBadges() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let clock = use_context::<UseReducerHandle<Clock>>().expect("Clock context is provided by App");
    let lab = use_context::<Lab>().expect("Lab context is provided by App");
    let props: &Properties = &view.live.properties;
    let badge = |i: usize, p: &Property| {
        let name = Properties::NAMES[i];
        let ok = p.ok();
        let (at, event, detail) = match &p.broke {
            Some(b) => (b.at.to_string(), b.event.to_string(), what(&b.violation)),
            None => (String::new(), String::new(), String::new()),
        };
        let onclick = {
            let (clock, lab) = (clock.clone(), lab.clone());
            let target = p.broke.as_ref().map(|b| b.event);
            Callback::from(move |_: MouseEvent| {
                clock.dispatch(ClockAction::Pause);
                if let Some(t) = target {
                    lab.seek(t);
                }
            })
        };
        let title = if ok {
            "holds".to_string()
        } else {
            format!("broke at t={at} ms (event {event}): {detail}")
        };
        html! {
            <button class={classes!("prop", if ok { "ok" } else { "broken" })} data-testid={format!("property-{name}")}
                data-ok={ok.to_string()} data-at={at.clone()} data-event={event.clone()} title={title}
                onclick={onclick} disabled={ok}>
                <span aria-hidden="true">{ if ok { "✓" } else { "✗" } }</span>
                { LABELS[i] }
                if !ok {
                    <span class="prop-when">{ format!(" @ {at} ms · #{event}") }</span>
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
