//! The help overlay: every keyboard shortcut (`?` opens and closes it, Escape closes it). A
//! modal dialog: opening it moves focus to its Close button, Tab stays there (the one control
//! inside), and closing it gives focus back to where it was.

use yew::prelude::*;

use crate::browser;
use crate::model::keyboard::{Ui, UiAction};

/// The shortcuts, as fixed HTML (no node or callback per line).
const KEYS: &str = "<dl class=\"keys\"><dt><kbd>Space</kbd></dt><dd>play / pause</dd><dt><kbd>.</kbd></dt><dd>next event (presenter clickers send it)</dd><dt><kbd>←</kbd></dt><dd>one event back through the recorded history</dd><dt><kbd>→</kbd></dt><dd>one event forward through the recorded history</dd><dt><kbd>1 – 9</kbd></dt><dd>pick a scenario</dd><dt><kbd>p</kbd></dt><dd>projector mode: larger type, fewer panels</dd><dt><kbd>t</kbd></dt><dd>the guided tour (open / close)</dd><dt><kbd>n</kbd> <kbd>b</kbd></dt><dd>the tour's next / previous step (PageDown / PageUp too)</dd><dt><kbd>?</kbd></dt><dd>this help</dd><dt><kbd>Esc</kbd></dt><dd>close this help, or the tour</dd></dl>";

/// The dialog's Close button.
const CLOSE: &str = "[data-testid=help-close]";

/// Move focus into the dialog when it opens (`open`), and back to where it was when it closes.
#[hook]
pub fn use_help_focus(open: bool) {
    let before = use_mut_ref(|| None::<web_sys::HtmlElement>);
    use_effect_with(open, move |open| {
        if *open {
            *before.borrow_mut() = browser::focused();
            browser::focus(CLOSE);
        } else if let Some(el) = before.borrow_mut().take() {
            let _ = el.focus();
        }
    });
}

/// The overlay (rendered only while open). A function, not a component: a component type
/// costs Yew's machinery in the bundle, and App renders whenever `ui` changes anyway.
pub fn help(ui: &UseReducerHandle<Ui>) -> Html {
    let close = {
        let ui = ui.clone();
        Callback::from(move |_| ui.dispatch(UiAction::CloseHelp))
    };
    // The Close button is the dialog's one control: Tab and Shift+Tab stay on it.
    let trap = Callback::from(|e: KeyboardEvent| {
        if e.key() == "Tab" {
            e.prevent_default();
            browser::focus(CLOSE);
        }
    });
    html! {
        <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="h-help" data-testid="help" onkeydown={trap}>
            <div class="panel help">
                <h2 id="h-help">{ "Keyboard shortcuts" }</h2>
                { Html::from_html_unchecked(AttrValue::Static(KEYS)) }
                <p class="muted">{ "Shortcuts do nothing while you type in a field. The link (Copy link) holds the whole run: seed, settings, every action and the moment in time." }</p>
                <button class="btn primary" data-testid="help-close" onclick={close}>{ "Close" }</button>
            </div>
        </div>
    }
}
