//! The checkout: a small cart, the strategy, Pay, and the ways to start many checkouts or to
//! lose the tab's memory.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::field::NumberField;
use crate::lab::Lab;
use crate::model::run_log::Command;
use crate::model::settings::{FieldId, Settings, SettingsAction, Strategy};
use crate::model::view::View;

/// The cart every checkout pays for: (item, quantity, unit price in cents).
pub const CART: [(&str, u32, u64); 3] = [
    ("Ceramic mug", 1, 1_400),
    ("Sticker pack", 2, 350),
    ("Shipping", 1, 490),
];

/// The cart's total in cents.
pub fn cart_total() -> u64 {
    CART.iter().map(|(_, q, p)| u64::from(*q) * p).sum()
}

/// `2590` → `"€25.90"`.
pub fn euros(cents: u64) -> String {
    format!("€{}.{:02}", cents / 100, cents % 100)
}

/// The checkout panel.
#[function_component]
pub fn Checkout() -> Html {
    let settings =
        use_context::<UseReducerHandle<Settings>>().expect("Settings context is provided by App");
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let lab = use_context::<Lab>().expect("Lab context is provided by App");
    let strategy = settings.strategy;

    let on_strategy = {
        let settings = settings.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(s) = Strategy::from_value(&v) {
                settings.dispatch(SettingsAction::Strategy(s));
            }
        })
    };
    let pay = {
        let lab = lab.clone();
        Callback::from(move |_| lab.command(Command::Pay(strategy)))
    };
    let reload = {
        let lab = lab.clone();
        Callback::from(move |_| lab.command(Command::ReloadTab))
    };
    let batch_n = settings.batch.value;
    let batch_ok = settings.batch.error.is_none();
    let batch = {
        let lab = lab.clone();
        Callback::from(move |_| {
            if batch_ok {
                lab.command(Command::Batch(strategy, batch_n))
            }
        })
    };
    let mismatch = {
        let lab = lab.clone();
        Callback::from(move |_| lab.command(Command::ReuseKeyOtherCart))
    };
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
            <h2 id="h-checkout">{ "Checkout" } <span class="sub">{ &view.cart }</span></h2>
            <table class="cart" data-testid="cart">
                <tbody>
                    { for CART.iter().map(|(item, q, p)| html! {
                        <tr><td>{ *item }</td><td class="num">{ format!("×{q}") }</td><td class="num">{ euros(u64::from(*q) * p) }</td></tr>
                    }) }
                </tbody>
                <tfoot><tr><th colspan="2">{ "Total" }</th><td class="num" data-testid="cart-total">{ euros(cart_total()) }</td></tr></tfoot>
            </table>
            <label class="select-field">
                <span>{ "Strategy" }</span>
                <select data-testid="strategy" onchange={on_strategy}>
                    { for Strategy::ALL.iter().map(|s| html! {
                        <option value={s.value()} selected={*s == strategy}>{ s.label() }</option>
                    }) }
                </select>
            </label>
            <div class="row-buttons">
                <button class="btn primary pay" data-testid="pay" onclick={pay} data-paying={view.paying.to_string()}>{ pay_label }</button>
                <button class="btn" data-testid="reload-tab" onclick={reload}
                    title="Drop the page's memory; resume from localStorage with the stored key">{ "⟳ Reload tab" }</button>
            </div>
            <details class="more">
                <summary>{ "Many checkouts, and a buggy page" }</summary>
                <div class="batch">
                    <NumberField label="Checkouts" testid="batch-count" text={settings.batch.text.clone()}
                        error={settings.batch.error.clone().map(AttrValue::from)} on_edit={on_batch} inputmode="numeric" />
                    <button class="btn" data-testid="batch-run" onclick={batch} disabled={!batch_ok}>{ format!("Start {batch_n}") }</button>
                </div>
                <button class="btn ghost" data-testid="reuse-key" onclick={mismatch}
                    title="A buggy page sends a different cart under the pending checkout's key: the store answers 422">
                    { "Send another cart under this key (422)" }</button>
            </details>
        </section>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn totals() {
        assert_eq!(super::cart_total(), 2_590);
        assert_eq!(super::euros(2_590), "€25.90");
        assert_eq!(super::euros(5), "€0.05");
    }
}
