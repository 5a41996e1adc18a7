//! The store's knobs and the worker faults.

use idem_sim::Command;
use idem_store::ErrorPolicy;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::field::NumberField;
use crate::model::settings::{FieldId, Settings, SettingsAction};
use crate::session::Session;

/// Controls above the claim table.
#[function_component]
pub fn ServerControls() -> Html {
    let settings =
        use_context::<UseReducerHandle<Settings>>().expect("Settings context is provided by App");
    let edit = |id: FieldId| {
        let settings = settings.clone();
        Callback::from(move |t: String| settings.dispatch(SettingsAction::Edit(id, t)))
    };
    let on_policy = {
        let settings = settings.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(p) = ErrorPolicy::parse(&v) {
                settings.dispatch(SettingsAction::Policy(p));
            }
        })
    };
    let toggle = |make: fn(bool) -> SettingsAction, on: bool| {
        let settings = settings.clone();
        Callback::from(move |_: Event| settings.dispatch(make(!on)))
    };
    let decline = {
        let session = use_context::<Session>().expect("Session context is provided by App");
        Callback::from(move |_: MouseEvent| session.one_shot(Command::DeclineNextCharge))
    };
    let s = &*settings;
    html! {
        <div class="server-controls" role="group" aria-label="Server controls">
            <NumberField label="lock_ms" unit="ms" testid="lock-ms" text={s.lock_ms.text.clone()}
                error={s.lock_ms.error.clone().map(AttrValue::from)} on_edit={edit(FieldId::LockMs)} inputmode="numeric" />
            <NumberField label="retention" unit="ms" testid="retention" text={s.retention_ms.text.clone()}
                error={s.retention_ms.error.clone().map(AttrValue::from)} on_edit={edit(FieldId::RetentionMs)} inputmode="numeric" />
            <label class="select-field" title="What the store does when PayCo declines and the work fails: release the claim (a retry runs again) or save the 402 (retries replay it).">
                <span>{ "on error" }</span>
                <select data-testid="error-policy" onchange={on_policy}>
                    <option value={ErrorPolicy::ReleaseClaim.as_str()} selected={s.policy == ErrorPolicy::ReleaseClaim}>{ "release claim" }</option>
                    <option value={ErrorPolicy::SaveResponse.as_str()} selected={s.policy == ErrorPolicy::SaveResponse}>{ "save response" }</option>
                </select>
            </label>
            <button class="btn small" data-testid="decline-next" onclick={decline}
                title="One-shot: PayCo declines the next charge, so the work fails and the error policy applies.">
                { "decline next charge" }
            </button>
            <label class="check">
                <input type="checkbox" data-testid="crash-after-charge" checked={s.crash_after_charge}
                    onchange={toggle(SettingsAction::CrashAfterCharge, s.crash_after_charge)} />
                <span>{ "crash worker after charge" }</span>
            </label>
            <label class="check">
                <input type="checkbox" data-testid="slow-worker" checked={s.slow_worker}
                    onchange={toggle(SettingsAction::SlowWorker, s.slow_worker)} />
                <span>{ "slow worker" }</span>
            </label>
        </div>
    }
}
