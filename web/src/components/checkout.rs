//! The checkout: the cart (`model/cart.rs`), the strategy, Pay, and the ways to start many
//! checkouts or to lose the tab's memory.

use idem_sim::Strategy;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::field::NumberField;
use super::real_status::real_status;
use crate::model::cart::{self, euros, CART};
use crate::model::settings::{
    strategy_from_value, strategy_label, FieldId, Settings, SettingsAction, STRATEGIES,
};
use crate::model::view::View;
use crate::real::Real;
use crate::session::Session;

/// The checkout panel.
#[function_component]
pub fn Checkout() -> Html {
    let settings =
        use_context::<UseReducerHandle<Settings>>().expect("Settings context is provided by App");
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let session = use_context::<Session>().expect("Session context is provided by App");
    // Real mode runs idem-client against idem-server: one key per checkout (the server
    // requires a key), so the strategy is the same-key one there.
    let real = use_context::<Real>().expect("Real context is provided by App");
    let real_on = view.real.is_some();
    let strategy = if real_on {
        Strategy::SameKey
    } else {
        settings.strategy
    };
    let real_off = real_on.then_some(AttrValue::Static("Simulated mode only"));

    let on_strategy = {
        let settings = settings.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(s) = strategy_from_value(&v) {
                settings.dispatch(SettingsAction::Strategy(s));
            }
        })
    };
    let pay = {
        let (session, real) = (session.clone(), real.clone());
        Callback::from(move |_| {
            if real_on {
                real.pay()
            } else {
                session.pay(strategy)
            }
        })
    };
    let reload = {
        let session = session.clone();
        Callback::from(move |_| {
            if real_on {
                // Real mode's tab memory is the page itself: reload it for real.
                let _ = web_sys::window().map(|w| w.location().reload());
            } else {
                session.reload_tab()
            }
        })
    };
    let batch_n = settings.batch.value;
    let batch_ok = settings.batch.error.is_none();
    let batch = {
        let session = session.clone();
        Callback::from(move |_| {
            if batch_ok {
                session.batch(strategy, batch_n)
            }
        })
    };
    let mismatch = Callback::from(move |_| session.reuse_key());
    let on_batch = {
        let settings = settings.clone();
        Callback::from(move |t| settings.dispatch(SettingsAction::Edit(FieldId::Batch, t)))
    };
    let pay_label = if view.paying && strategy == Strategy::SameKey {
        "Paying… (resumes)"
    } else {
        "Pay"
    };

    html! {
        <section class="panel checkout" aria-labelledby="h-checkout">
            <h2 id="h-checkout">{ "Checkout" }
                <span class="sub" data-testid="cart-checkout" data-checkout={view.cart.map(|c| c.0.to_string()).unwrap_or_default()}
                    data-state={view.cart.map_or("", |c| c.1)}>
                    { match view.cart { Some((c, state)) => format!("cart {c} · {state}"), None => "new cart".into() } }</span></h2>
            <table class="cart" data-testid="cart">
                <tbody>
                    { for CART.iter().map(|(item, q, p)| html! {
                        <tr><td>{ *item }</td><td class="num">{ format!("×{q}") }</td><td class="num">{ euros(u64::from(*q) * p) }</td></tr>
                    }) }
                </tbody>
                <tfoot><tr><th colspan="2">{ "Total" }</th><td class="num" data-testid="cart-total">{ euros(cart::total()) }</td></tr></tfoot>
            </table>
            <label class="select-field">
                <span>{ "Strategy" }</span>
                <select data-testid="strategy" onchange={on_strategy} disabled={real_on}
                    title={real_on.then_some("Real mode: idem-client, one key per checkout")}>
                    { for STRATEGIES.iter().map(|s| html! {
                        <option value={s.name()} selected={*s == strategy}>{ strategy_label(*s) }</option>
                    }) }
                </select>
            </label>
            <div class="row-buttons">
                <button class="btn primary pay" data-testid="pay" onclick={pay} data-paying={view.paying.to_string()}
                    disabled={view.real.as_ref().is_some_and(|r| r.link != crate::model::real::Link::Up)}>{ pay_label }</button>
                <button class="btn" data-testid="reload-tab" onclick={reload}
                    title="Drop the page's memory; resume from localStorage with the stored key">{ "⟳ Reload tab" }</button>
            </div>
            if let Some(info) = &view.real { { real_status(&real, info) } }
            <details class="more">
                <summary>{ "Many checkouts, and a buggy page" }</summary>
                <div class="batch">
                    <NumberField label="Checkouts" testid="batch-count" text={settings.batch.text.clone()}
                        error={settings.batch.error.clone().map(AttrValue::from)} on_edit={on_batch} inputmode="numeric" />
                    <button class="btn" data-testid="batch-run" onclick={batch} disabled={!batch_ok || real_on}
                        title={real_off.clone()}>{ format!("Start {batch_n}") }</button>
                </div>
                <button class="btn ghost" data-testid="reuse-key" onclick={mismatch} disabled={real_on}
                    title={real_off.unwrap_or(AttrValue::Static("A buggy page pays, then sends a different cart under the same key: the store answers 422"))}>
                    { "Send another cart under this key (422)" }</button>
            </details>
        </section>
    }
}
