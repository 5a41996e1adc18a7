//! The store's knobs and the worker faults. In real mode the knobs are idem-server's, set when
//! it starts (disabled here, the server's `lock_ms` shown); the worker toggles arm its demo
//! faults and "decline next charge" pays the next checkout with PayCo's declining test card.

use idem_sim::Command;
use idem_store::ErrorPolicy;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::field::NumberField;
use crate::model::settings::{FieldId, Settings, SettingsAction};
use crate::model::view::View;
use crate::real::Real;
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
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let real = view.real.clone();
    let decline = {
        let session = use_context::<Session>().expect("Session context is provided by App");
        let ctl = use_context::<Real>().expect("Real context is provided by App");
        let real_on = real.is_some();
        Callback::from(move |_: MouseEvent| {
            if real_on {
                ctl.decline_next()
            } else {
                session.one_shot(Command::DeclineNextCharge)
            }
        })
    };
    let s = &*settings;
    let off = real
        .is_some()
        .then_some(AttrValue::Static("Set when idem-server starts"));
    let lock_text = match real.as_ref().map(|r| r.lock_ms) {
        Some(Some(ms)) => AttrValue::from(ms.to_string()),
        Some(None) => AttrValue::Static(""),
        None => AttrValue::from(s.lock_ms.text.clone()),
    };
    html! {
        <div class="server-controls" role="group" aria-label="Server controls">
            <NumberField label="lock_ms" unit="ms" testid="lock-ms" text={lock_text}
                error={s.lock_ms.error.clone().map(AttrValue::from)} on_edit={edit(FieldId::LockMs)} inputmode="numeric" off={off.clone()} />
            // Real mode: the server's retention is not the page's to show (nor the simulator's).
            <NumberField label="retention" unit="ms" testid="retention" text={if real.is_some() { String::new() } else { s.retention_ms.text.clone() }}
                error={s.retention_ms.error.clone().map(AttrValue::from)} on_edit={edit(FieldId::RetentionMs)} inputmode="numeric" off={off.clone()} />
            <label class="select-field" title="What the store does when PayCo declines and the work fails: release the claim (a retry runs again) or save the 402 (retries replay it).">
                <span>{ "on error" }</span>
                <select data-testid="error-policy" onchange={on_policy} disabled={real.is_some()} title={off}>
                    <option value={ErrorPolicy::ReleaseClaim.as_str()} selected={s.policy == ErrorPolicy::ReleaseClaim}>{ "release claim" }</option>
                    <option value={ErrorPolicy::SaveResponse.as_str()} selected={s.policy == ErrorPolicy::SaveResponse}>{ "save response" }</option>
                </select>
            </label>
            <button class="btn small" data-testid="decline-next" onclick={decline}
                data-armed={real.as_ref().is_some_and(|r| r.decline_next).to_string()}
                title="One-shot: PayCo declines the next charge, so the work fails and the error policy applies (real mode: the next checkout pays with tok_decline).">
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
