//! The help overlay: every keyboard shortcut (`?` opens and closes it, Escape closes it).

use yew::prelude::*;

use crate::model::keyboard::{Ui, UiAction};

/// The shortcuts, as fixed HTML (no node or callback per line).
const KEYS: &str = "<dl class=\"keys\"><dt><kbd>Space</kbd></dt><dd>play / pause</dd><dt><kbd>.</kbd></dt><dd>next event (presenter clickers send it)</dd><dt><kbd>←</kbd></dt><dd>one event back through the recorded history</dd><dt><kbd>→</kbd></dt><dd>one event forward through the recorded history</dd><dt><kbd>1 – 9</kbd></dt><dd>pick a scenario</dd><dt><kbd>p</kbd></dt><dd>projector mode: larger type, fewer panels</dd><dt><kbd>t</kbd></dt><dd>the guided tour (open / close)</dd><dt><kbd>n</kbd> <kbd>b</kbd></dt><dd>the tour's next / previous step (PageDown / PageUp too)</dd><dt><kbd>?</kbd></dt><dd>this help</dd><dt><kbd>Esc</kbd></dt><dd>close this help, or the tour</dd></dl>";

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
                { Html::from_html_unchecked(AttrValue::Static(KEYS)) }
                <p class="muted">{ "Shortcuts do nothing while you type in a field. The link (Copy link) holds the whole run: seed, settings, every action and the moment in time." }</p>
                <button class="btn primary" data-testid="help-close" onclick={close}>{ "Close" }</button>
            </div>
        </div>
    }
}
