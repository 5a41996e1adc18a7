//! The server panel: store controls, the live claim table and the event feed.

use yew::prelude::*;

use super::claim_table::ClaimTable;
use super::event_feed::event_feed;
use super::server_controls::server_controls;
use crate::model::settings::Settings;
use crate::model::view::View;
use crate::real::Real;
use crate::session::Session;

/// The server panel (a function, not a component: see `help`).
pub fn server(
    view: &UseReducerHandle<View>,
    settings: &UseReducerHandle<Settings>,
    session: &Session,
    ctl: &Real,
) -> Html {
    let sub = if view.real.is_some() {
        "idem-server (SQLite), live"
    } else {
        "idem-store claim table, compiled to WASM"
    };
    html! {
        <section class="panel server" aria-labelledby="h-server">
            <h2 id="h-server">{ "Server" } <span class="sub">{ sub }</span></h2>
            { server_controls(settings, view, session, ctl) }
            <ClaimTable view={view.clone()} />
            { event_feed(view) }
        </section>
    }
}
