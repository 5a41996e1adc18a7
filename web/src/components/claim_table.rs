//! The store's claim table, live, newest record first.

use yew::prelude::*;

use super::claim_row::ClaimRowView;
use crate::model::view::{ClaimStatus, View};

/// Most rows put in the DOM; the header says when more exist. Every row up to this is a real
/// `claim-row` element (tests count them).
pub const MAX_ROWS: usize = 2_000;

/// The claim table.
#[function_component]
pub fn ClaimTable() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let claims = view.claims.clone();
    let now = view.now;
    let total = claims.len();
    let in_flight = claims.iter().filter(|c| c.row.status == ClaimStatus::InFlight).count();
    html! {
        <div class="claims">
            <div class="claims-head">
                <span data-testid="claim-count" data-total={total.to_string()} data-in-flight={in_flight.to_string()}>
                    { format!("{total} records · {in_flight} in flight") }
                    if total > MAX_ROWS { { format!(" · showing newest {MAX_ROWS}") } }
                </span>
            </div>
            <div class="ctable" role="table" aria-label="Claim table" data-testid="claim-table" data-rows={total.to_string()}>
                <div role="row" class="crow head">
                    <span role="columnheader">{ "scope" }</span>
                    <span role="columnheader">{ "key" }</span>
                    <span role="columnheader">{ "fingerprint" }</span>
                    <span role="columnheader">{ "status" }</span>
                    <span role="columnheader">{ "response" }</span>
                    <span role="columnheader" class="c-num">{ "locked_at" }</span>
                    <span role="columnheader" class="c-num">{ "token" }</span>
                    <span role="columnheader">{ "lease" }</span>
                </div>
                <div role="rowgroup" class="cbody">
                    if claims.is_empty() {
                        <p class="empty">{ "No records yet. Press Pay: a same-key checkout claims its key here." }</p>
                    }
                    { for claims.iter().take(MAX_ROWS).map(|c| {
                        let row_now = if c.row.status == ClaimStatus::InFlight { now } else { 0 };
                        html! { <ClaimRowView key={format!("{}/{}", c.row.scope, c.row.key)} claim={c.clone()} now={row_now} /> }
                    }) }
                </div>
            </div>
        </div>
    }
}
