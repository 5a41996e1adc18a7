//! PayCo's ledger: every charge by order, double charges first and highlighted. Windowed like
//! the claim table; `ledger`'s `data-orders` is the full count.

use yew::prelude::*;

use super::invariant::invariant;
use super::properties::property_badges;
use super::window::use_window;
use crate::model::cart::euros;
use crate::model::clock::Clock;
use crate::model::view::{LedgerRow, View};
use crate::session::Session;

/// Height of one ledger row, px (matches `.lrow` in style.css).
const ROW_PX: usize = 22;

/// One ledger line, keyed by its order. A function, not a component (see `help`): the ledger is
/// windowed, so a render rebuilds only the few dozen lines in view.
fn ledger_line(r: &LedgerRow, top: usize) -> Html {
    let twice = r.charges > 1;
    html! {
        <li key={r.order.as_str()} class={classes!("lrow", twice.then_some("double"))} data-testid="ledger-row" style={format!("top:{top}px")}
            data-order={r.order.clone()} data-charges={r.charges.to_string()}>
            <span class="mono l-order">{ &r.order }</span>
            <span class="mono num">{ euros(r.amount) }</span>
            <span class="l-charges">
                { if twice { format!("✗ charged {}×", r.charges) } else { "✓ 1 charge".to_string() } }
            </span>
        </li>
    }
}

/// Props of [`Ledger`]: the handles it reads, as props rather than contexts (a context costs
/// its provider's component machinery in the bundle; web/README.md "Bundle").
#[derive(Properties, PartialEq)]
pub struct LedgerProps {
    /// What the panels show.
    pub view: UseReducerHandle<View>,
    /// The page's session and clock, for the property badges (a badge seeks and pauses).
    pub session: Session,
    /// The page's clock.
    pub clock: UseReducerHandle<Clock>,
}

/// The PayCo panel.
#[function_component]
pub fn Ledger(props: &LedgerProps) -> Html {
    let view = &props.view;
    let s = &view.stats;
    let win = use_window(view.ledger.len(), ROW_PX);
    // Double charges sort first, so this walk stops at the first order charged once.
    let doubles: Vec<&str> = view
        .ledger
        .iter()
        .take_while(|r| r.charges > 1)
        .map(|r| r.order.as_str())
        .collect();
    html! {
        <section class="panel ledger" aria-labelledby="h-ledger">
            <h2 id="h-ledger">{ "PayCo ledger" } <span class="sub">{ if view.real.is_some() { "this session's orders" } else { "the card network" } }</span></h2>
            { invariant(s.double_charged, view.seed, view.real.is_some()) }
            // The live properties are the simulator's checker: no real-mode meaning.
            if view.real.is_none() { { property_badges(&view.live.properties, &props.clock, &props.session) } }
            <dl class="stats">
                <div><dt>{ "checkouts" }</dt><dd data-testid="stat-checkouts">{ s.checkouts }</dd></div>
                <div><dt>{ "pending" }</dt><dd data-testid="stat-pending">{ s.pending }</dd></div>
                <div><dt>{ "attempts" }</dt><dd data-testid="stat-attempts">{ s.attempts }</dd></div>
                <div><dt>{ "charges" }</dt><dd data-testid="stat-charges">{ s.charges }</dd></div>
                <div><dt>{ "charged twice" }</dt><dd data-testid="stat-double">{ s.double_charged }</dd></div>
                <div><dt>{ "unknown" }</dt><dd data-testid="stat-unknown">{ s.unknown }</dd></div>
                if let Some(receipts) = s.receipts {
                    <div><dt>{ "receipts" }</dt><dd data-testid="stat-receipts">{ receipts }</dd></div>
                }
            </dl>
            <div class="ledger-scroll" ref={win.node.clone()} onscroll={win.onscroll.clone()} tabindex="0" aria-label="Ledger (scroll)">
                if view.ledger.is_empty() { <p class="empty">{ "No charges yet." }</p> }
                <ol class="ledger-list" data-testid="ledger" data-orders={view.ledger.len().to_string()}
                    data-double-orders={doubles.join(",")}
                    style={format!("height:{}px", win.height)}>
                    { for win.range.clone().map(|i| {
                        let r = &view.ledger[i];
                        ledger_line(r, i * ROW_PX)
                    }) }
                </ol>
            </div>
        </section>
    }
}
