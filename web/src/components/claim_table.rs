//! The store's claim table, live, newest record first, windowed: only the rows in view are in
//! the DOM. `claim-table`'s `data-rows` is always the full count; the filter box finds a key.

use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::claim_row::{ClaimRowView, RECENT_MS};
use super::window::use_window;
use crate::model::view::{ClaimStatus, ShownClaim, View};

/// Height of one row, px (matches `.crow` in style.css).
pub const ROW_PX: usize = 24;

/// The time a row is drawn at. Only an in-flight row (its lease counts down) or one that changed
/// in the last second (its flash) depends on the clock; every other row gets a constant, so its
/// props stay equal and it skips re-rendering while time runs (at the fastest speed a refresh
/// then redraws a handful of rows, not all forty in view).
fn row_clock(c: &ShownClaim, now: u64) -> u64 {
    if c.row.status == ClaimStatus::InFlight || c.changed_at + RECENT_MS >= now {
        now
    } else {
        SETTLED
    }
}

/// The clock a settled row is drawn at (see [`row_clock`]): never "recent".
const SETTLED: u64 = u64::MAX;

/// The claim table.
#[function_component]
pub fn ClaimTable() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let filter = use_state(String::new);
    let claims = view.claims.clone();
    let now = view.now;
    let total = claims.len();
    let in_flight = claims
        .iter()
        .filter(|c| c.row.status == ClaimStatus::InFlight)
        .count();
    let needle = filter.trim().to_ascii_lowercase();
    let shown: Vec<_> = if needle.is_empty() {
        claims.iter().collect()
    } else {
        claims
            .iter()
            .filter(|c| c.row.key.contains(needle.as_str()))
            .collect()
    };
    let win = use_window(shown.len(), ROW_PX);
    let on_filter = {
        let filter = filter.clone();
        Callback::from(move |e: InputEvent| {
            filter.set(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    html! {
        <div class="claims">
            <div class="claims-head">
                <span data-testid="claim-count" data-total={total.to_string()} data-in-flight={in_flight.to_string()}
                    data-shown={shown.len().to_string()}>
                    { format!("{total} record{} · {in_flight} in flight", if total == 1 { "" } else { "s" }) }
                    if !needle.is_empty() { { format!(" · {} match", shown.len()) } }
                </span>
                <label class="filter">
                    <span class="sr-only">{ "Find a key" }</span>
                    <input type="search" placeholder="find a key…" data-testid="claim-filter" value={(*filter).clone()}
                        oninput={on_filter} spellcheck="false" autocomplete="off" />
                </label>
            </div>
            if shown.is_empty() {
                <p class="empty">{ if total == 0 { "No records yet. Press Pay: a same-key checkout claims its key here." } else { "No key matches." } }</p>
            }
            <div class="ctable" role="table" aria-label="Claim table" aria-rowcount={total.to_string()}
                data-testid="claim-table" data-rows={total.to_string()}>
                <div role="row" class="crow head">
                    <span role="columnheader">{ "scope" }</span>
                    <span role="columnheader">{ "key" }</span>
                    <span role="columnheader" title="fingerprint: SHA-256 of the canonical request">{ "fp" }</span>
                    <span role="columnheader">{ "status" }</span>
                    <span role="columnheader">{ "response" }</span>
                    <span role="columnheader" class="c-num">{ "locked" }</span>
                    <span role="columnheader" class="c-num">{ "lease" }</span>
                    <span role="columnheader">{ "lease left" }</span>
                </div>
                // The scroller is the row group (a table's children are rows and row groups); the
                // empty-table message sits outside the table.
                <div class="cscroll" role="rowgroup" ref={win.node.clone()} onscroll={win.onscroll.clone()} tabindex="0" aria-label="Claim rows (scroll)">
                    <div class="cbody" style={format!("height:{}px", win.height)}>
                        { for win.range.clone().map(|i| {
                            let c = shown[i];
                            html! { <ClaimRowView key={c.row.key.as_str()} claim={c.clone()} now={row_clock(c, now)} top={i * ROW_PX} /> }
                        }) }
                    </div>
                </div>
            </div>
        </div>
    }
}
