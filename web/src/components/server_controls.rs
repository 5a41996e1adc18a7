//! The store's knobs and the worker faults.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::field::NumberField;
use crate::model::settings::{FieldId, Policy, Settings, SettingsAction};

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
            if let Some(p) = Policy::from_value(&v) {
                settings.dispatch(SettingsAction::Policy(p));
            }
        })
    };
    let toggle = |make: fn(bool) -> SettingsAction, on: bool| {
        let settings = settings.clone();
        Callback::from(move |_: Event| settings.dispatch(make(!on)))
    };
    let s = &*settings;
    html! {
        <div class="server-controls" role="group" aria-label="Server controls">
            <NumberField label="lock_ms" unit="ms" testid="lock-ms" text={s.lock_ms.text.clone()}
                error={s.lock_ms.error.clone().map(AttrValue::from)} on_edit={edit(FieldId::LockMs)} inputmode="numeric" />
            <NumberField label="retention" unit="ms" testid="retention" text={s.retention_ms.text.clone()}
                error={s.retention_ms.error.clone().map(AttrValue::from)} on_edit={edit(FieldId::RetentionMs)} inputmode="numeric" />
            // idem-sim's checkout work never fails (a crash is not an error answer) and its route's
            // policy is fixed, so this choice has nothing to act on yet: shown, not pretended.
            <label class="select-field" title="What the store does when the work fails. The simulated work never fails, so the simulator fixes it at release claim.">
                <span>{ "on error (fixed in sim)" }</span>
                <select data-testid="error-policy" onchange={on_policy} disabled=true>
                    <option value={Policy::ReleaseClaim.value()} selected={s.policy == Policy::ReleaseClaim}>{ "release claim" }</option>
                    <option value={Policy::SaveResponse.value()} selected={s.policy == Policy::SaveResponse}>{ "save response" }</option>
                </select>
            </label>
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
