//! The mode switch, the simulated network's faults and one-shot drops; in real mode the fields
//! with no real meaning are disabled (the note under them says why) and the one-shots are
//! idem-server's demo faults.

use yew::prelude::*;

use idem_sim::Command;

use super::field::NumberField;
use super::mode_switch::mode_switch;
use super::real_faults::real_drops;
use crate::model::settings::{FieldId, Settings, SettingsAction};
use crate::model::view::View;
use crate::real::Real;
use crate::session::Session;

/// The network panel.
#[function_component]
pub fn Network() -> Html {
    let settings =
        use_context::<UseReducerHandle<Settings>>().expect("Settings context is provided by App");
    let session = use_context::<Session>().expect("Session context is provided by App");
    let edit = |id: FieldId| {
        let settings = settings.clone();
        Callback::from(move |t: String| settings.dispatch(SettingsAction::Edit(id, t)))
    };
    let err = |e: &Option<String>| e.clone().map(AttrValue::from);
    let drop_req = {
        let session = session.clone();
        Callback::from(move |_| session.one_shot(Command::DropNextRequest))
    };
    let drop_resp = Callback::from(move |_| session.one_shot(Command::DropNextResponse));
    let s = &*settings;
    let real = use_context::<UseReducerHandle<View>>()
        .expect("View context is provided by App")
        .real
        .is_some();
    let ctl = use_context::<Real>().expect("Real context is provided by App");
    let off = real.then_some(AttrValue::Static("Simulated mode only: see the note below"));
    html! {
        <section class="panel network" aria-labelledby="h-network">
            <h2 id="h-network">{ "Network" } <span class="sub">{ if real { "real, real time" } else { "simulated, virtual time" } }</span></h2>
            { mode_switch(&ctl, real) }
            <div class="grid3">
                <NumberField label="Request loss" unit="%" testid="request-loss" text={s.request_loss.text.clone()}
                    error={err(&s.request_loss.error)} on_edit={edit(FieldId::RequestLoss)} off={off.clone()} />
                <NumberField label="Response loss" unit="%" testid="response-loss" text={s.response_loss.text.clone()}
                    error={err(&s.response_loss.error)} on_edit={edit(FieldId::ResponseLoss)} />
                <NumberField label="Duplicate" unit="%" testid="duplicate" text={s.duplicate.text.clone()}
                    error={err(&s.duplicate.error)} on_edit={edit(FieldId::Duplicate)} off={off.clone()} />
                <NumberField label="Latency min" unit="ms" testid="latency-min" text={s.latency_min.text.clone()}
                    error={err(&s.latency_min.error)} on_edit={edit(FieldId::LatencyMin)} inputmode="numeric" off={off.clone()} />
                <NumberField label="Latency max" unit="ms" testid="latency-max" text={s.latency_max.text.clone()}
                    error={err(&s.latency_max.error)} on_edit={edit(FieldId::LatencyMax)} inputmode="numeric" off={off.clone()} />
                <NumberField label="Seed" testid="seed" text={s.seed.text.clone()}
                    error={err(&s.seed.error)} on_edit={edit(FieldId::Seed)} inputmode="numeric" {off} />
            </div>
            if real {
                <p class="muted note" data-testid="real-network-note">
                    { "Real mode: response loss is idem-server dropping answers after its commit. A server cannot lose a request it never got; latency and seed are the simulator's." }
                </p>
                { real_drops(&ctl) }
            } else {
            <div class="row-buttons drops" role="group" aria-label="Drop the next message">
                <span class="muted">{ "Drop next:" }</span>
                <button class="btn" data-testid="drop-next-request" onclick={drop_req} title="Lose the next request on its way to the server">{ "✂ request" }</button>
                <button class="btn" data-testid="drop-next-response" onclick={drop_resp} title="Lose the next response on its way back">{ "✂ response" }</button>
            </div>
            }
        </section>
    }
}
