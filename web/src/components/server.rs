//! The server panel: store controls, the live claim table and the event feed.

use yew::prelude::*;

use super::claim_table::ClaimTable;
use super::event_feed::EventFeed;
use super::server_controls::ServerControls;

/// The server panel.
#[function_component]
pub fn Server() -> Html {
    html! {
        <section class="panel server" aria-labelledby="h-server">
            <h2 id="h-server">{ "Server" } <span class="sub">{ "idem-store claim table, compiled to WASM" }</span></h2>
            <ServerControls />
            <ClaimTable />
            <EventFeed />
        </section>
    }
}
