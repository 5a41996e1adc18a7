//! The central area's tab bar and the classroom buttons: copy link, export history, projector
//! mode, help. Also the message when a link could not be opened.

use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::model::keyboard::{Tab, Ui, UiAction};
use crate::model::view::View;
use crate::session::Session;

/// Download `json` as `name` (a Blob URL clicked through a temporary link).
fn download(name: &str, json: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let parts = js_sys::Array::of1(&json.into());
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("application/json");
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Some(a) = doc
        .create_element("a")
        .ok()
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// The bar's own state, kept by App ([`use_share_state`]): the link last copied, and why the
/// page's link could not be opened (until dismissed).
#[derive(Clone)]
pub struct ShareState {
    link: UseStateHandle<Option<String>>,
    error: UseStateHandle<Option<&'static str>>,
}

/// The bar's state, for App to keep (so the bar itself can be a function).
#[hook]
pub fn use_share_state(session: &Session) -> ShareState {
    let error = session.boot_info().error;
    ShareState {
        link: use_state(|| None::<String>),
        error: use_state(move || error),
    }
}

/// Tabs and classroom buttons. A function, not a component (see `help`).
pub fn share_bar(
    session: &Session,
    ui: &UseReducerHandle<Ui>,
    view: &View,
    state: &ShareState,
) -> Html {
    let (session, ui) = (session.clone(), ui.clone());
    let events = session.with_run(|r| r.world().events_run()).to_string();
    // Real mode has the server view and the sequence diagram only, and no run to link or export.
    let real = view.real.is_some();
    let (link, error) = (state.link.clone(), state.error.clone());
    let copy = {
        // The link opens on the tab open now, as its sender saw the run.
        let (session, link, tab) = (session.clone(), link.clone(), ui.tab.index());
        Callback::from(move |_| {
            let url = session.share_link(tab);
            if let Some(w) = web_sys::window() {
                // The promise's outcome does not matter: the link is also shown in a field.
                let _ = w.navigator().clipboard().write_text(&url);
            }
            link.set(Some(url));
        })
    };
    let export = {
        let session = session.clone();
        Callback::from(move |_| {
            let seed = session.with_run(|r| r.world().config().seed);
            download(
                &["idem-history-seed-", &seed.to_string(), ".json"].concat(),
                &session.export_json(),
            );
        })
    };
    let projector = {
        let ui = ui.clone();
        Callback::from(move |_| ui.dispatch(UiAction::ToggleProjector))
    };
    let help = {
        let ui = ui.clone();
        Callback::from(move |_| super::help::show_help(&ui, !ui.help))
    };
    let dismiss = {
        let error = error.clone();
        Callback::from(move |_| error.set(None))
    };
    let select_all = Callback::from(|e: FocusEvent| {
        if let Some(i) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
            i.select();
        }
    });
    html! {
        <div class="sharebar">
            if let Some(msg) = *error {
                <p class="share-error" role="alert" data-testid="share-error">
                    { "This link could not be opened (" }{ msg }{ "): the default run started instead. " }
                    <button class="btn ghost" onclick={dismiss}>{ "Dismiss" }</button>
                </p>
            }
            <div class="tabs">
                // The tab list holds the tabs only; the classroom buttons sit beside it.
                <div class="tablist" role="tablist" aria-label="Views">
                { for Tab::ALL.iter().filter(|&&t| t.shown(real) == t).map(|&t| {
                    let ui = ui.clone();
                    let selected = ui.tab.shown(real) == t;
                    let onclick = Callback::from(move |_| ui.dispatch(UiAction::Open(t)));
                    html! {
                        <button role="tab" class={classes!("tab", selected.then_some("active"))}
                            data-testid={["tab-", t.name()].concat()} aria-selected={selected.to_string()} {onclick}>
                            { t.label() }</button>
                    }
                }) }
                </div>
                <span class="tabs-gap" />
                if !real {
                <span class="position mono" data-testid="position" data-events={events.clone()} data-ms={view.now.to_string()}
                    title="Events run so far (← → step through them)">{ "event " }{ events }</span>
                <button class="btn" data-testid="copy-link" onclick={copy} title="Copy a link that reproduces this run at this moment">{ "Copy link" }</button>
                <button class="btn" data-testid="export" onclick={export} title="Download the history; idem-lab replay <file> re-runs it">{ "Export history" }</button>
                }
                <button class={classes!("btn", ui.projector.then_some("active"))} data-testid="projector" onclick={projector}
                    aria-pressed={ui.projector.to_string()} title="Projector mode (p)">{ "Projector" }</button>
                <button class="btn" data-testid="help-open" onclick={help} title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts">{ "?" }</button>
            </div>
            if let Some(url) = (*link).clone() {
                <label class="share-link"><span>{ "Link copied (or copy it here):" }</span>
                    <input type="text" readonly=true data-testid="share-link" value={url} onfocus={select_all} /></label>
            }
        </div>
    }
}
