//! The simulated network's faults, and one-shot drops.

use yew::prelude::*;

use idem_sim::Command;

use super::field::NumberField;
use crate::model::settings::{FieldId, Settings, SettingsAction};
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
    html! {
        <section class="panel network" aria-labelledby="h-network">
            <h2 id="h-network">{ "Network" } <span class="sub">{ "simulated, virtual time" }</span></h2>
            <div class="grid3">
                <NumberField label="Request loss" unit="%" testid="request-loss" text={s.request_loss.text.clone()}
                    error={err(&s.request_loss.error)} on_edit={edit(FieldId::RequestLoss)} />
                <NumberField label="Response loss" unit="%" testid="response-loss" text={s.response_loss.text.clone()}
                    error={err(&s.response_loss.error)} on_edit={edit(FieldId::ResponseLoss)} />
                <NumberField label="Duplicate" unit="%" testid="duplicate" text={s.duplicate.text.clone()}
                    error={err(&s.duplicate.error)} on_edit={edit(FieldId::Duplicate)} />
                <NumberField label="Latency min" unit="ms" testid="latency-min" text={s.latency_min.text.clone()}
                    error={err(&s.latency_min.error)} on_edit={edit(FieldId::LatencyMin)} inputmode="numeric" />
                <NumberField label="Latency max" unit="ms" testid="latency-max" text={s.latency_max.text.clone()}
                    error={err(&s.latency_max.error)} on_edit={edit(FieldId::LatencyMax)} inputmode="numeric" />
                <NumberField label="Seed" testid="seed" text={s.seed.text.clone()}
                    error={err(&s.seed.error)} on_edit={edit(FieldId::Seed)} inputmode="numeric" />
            </div>
            <div class="row-buttons drops" role="group" aria-label="Drop the next message">
                <span class="muted">{ "Drop next:" }</span>
                <button class="btn" data-testid="drop-next-request" onclick={drop_req} title="Lose the next request on its way to the server">{ "✂ request" }</button>
                <button class="btn" data-testid="drop-next-response" onclick={drop_resp} title="Lose the next response on its way back">{ "✂ response" }</button>
            </div>
        </section>
    }
}
