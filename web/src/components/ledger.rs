//! PayCo's ledger: every charge by order, double charges highlighted.

use std::rc::Rc;

use yew::prelude::*;

use super::checkout::euros;
use super::invariant::Invariant;
use crate::model::view::{LedgerRow, View};

/// Props of [`LedgerLine`].
#[derive(Properties)]
struct LedgerLineProps {
    row: Rc<LedgerRow>,
}

impl PartialEq for LedgerLineProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.row, &other.row) || self.row == other.row
    }
}

#[function_component]
fn LedgerLine(props: &LedgerLineProps) -> Html {
    let r = &props.row;
    let twice = r.charges > 1;
    html! {
        <li class={classes!("lrow", twice.then_some("double"))} data-testid="ledger-row"
            data-order={r.order.clone()} data-charges={r.charges.to_string()}>
            <span class="mono l-order">{ &r.order }</span>
            <span class="mono num">{ euros(r.amount) }</span>
            <span class="l-charges">
                { if twice { format!("✗ charged {}×", r.charges) } else { "✓ 1 charge".to_string() } }
            </span>
        </li>
    }
}

/// The PayCo panel.
#[function_component]
pub fn Ledger() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let s = &view.stats;
    html! {
        <section class="panel ledger" aria-labelledby="h-ledger">
            <h2 id="h-ledger">{ "PayCo ledger" } <span class="sub">{ "the card network" }</span></h2>
            <Invariant />
            <dl class="stats">
                <div><dt>{ "checkouts" }</dt><dd data-testid="stat-checkouts">{ s.checkouts }</dd></div>
                <div><dt>{ "pending" }</dt><dd data-testid="stat-pending">{ s.pending }</dd></div>
                <div><dt>{ "attempts" }</dt><dd data-testid="stat-attempts">{ s.attempts }</dd></div>
                <div><dt>{ "charges" }</dt><dd data-testid="stat-charges">{ s.charges }</dd></div>
                <div><dt>{ "charged twice" }</dt><dd data-testid="stat-double">{ s.double_charged }</dd></div>
                <div><dt>{ "unknown" }</dt><dd data-testid="stat-unknown">{ s.unknown }</dd></div>
            </dl>
            <ol class="ledger-list" data-testid="ledger" data-orders={view.ledger.len().to_string()}>
                if view.ledger.is_empty() { <li class="empty">{ "No charges yet." }</li> }
                { for view.ledger.iter().map(|r| html! { <LedgerLine key={r.order.clone()} row={r.clone()} /> }) }
            </ol>
        </section>
    }
}
