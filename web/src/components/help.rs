//! The help overlay: every keyboard shortcut (`?` opens and closes it, Escape closes it).

use yew::prelude::*;

use crate::model::keyboard::{Ui, UiAction};

const KEYS: [(&str, &str); 8] = [
    ("Space", "play / pause"),
    (".", "next event (presenter clickers send it)"),
    ("←", "one event back through the recorded history"),
    ("→", "one event forward through the recorded history"),
    ("1 – 9", "pick a scenario"),
    ("p", "projector mode: larger type, fewer panels"),
    ("?", "this help"),
    ("Esc", "close this help"),
];

/// The overlay (rendered only while open).
#[function_component]
pub fn Help() -> Html {
    let ui = use_context::<UseReducerHandle<Ui>>().expect("Ui context is provided by App");
    let close = {
        let ui = ui.clone();
        Callback::from(move |_| ui.dispatch(UiAction::CloseHelp))
    };
    html! {
        <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="h-help" data-testid="help">
            <div class="panel help">
                <h2 id="h-help">{ "Keyboard shortcuts" }</h2>
                <dl class="keys">
                    { for KEYS.iter().map(|(k, what)| html! {
                        <><dt><kbd>{ *k }</kbd></dt><dd>{ *what }</dd></>
                    }) }
                </dl>
                <p class="muted">{ "Shortcuts do nothing while you type in a field. The link (Copy link) holds the whole run: seed, settings, every action and the moment in time." }</p>
                <button class="btn primary" data-testid="help-close" onclick={close}>{ "Close" }</button>
            </div>
        </div>
    }
}
