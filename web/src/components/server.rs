//! The server panel: store controls, the live claim table and the event feed.

use yew::prelude::*;

use super::claim_table::ClaimTable;
use super::event_feed::EventFeed;
use super::server_controls::ServerControls;
use crate::model::view::View;

/// The server panel.
#[function_component]
pub fn Server() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let sub = if view.real.is_some() {
        "idem-server (SQLite), live"
    } else {
        "idem-store claim table, compiled to WASM"
    };
    html! {
        <section class="panel server" aria-labelledby="h-server">
            <h2 id="h-server">{ "Server" } <span class="sub">{ sub }</span></h2>
            <ServerControls />
            <ClaimTable />
            <EventFeed />
        </section>
    }
}
