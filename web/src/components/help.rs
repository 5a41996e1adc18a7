//! The help overlay: every keyboard shortcut (`?` opens and closes it, Escape closes it). A
//! modal dialog: opening it moves focus to its Close button, Tab stays there (the one control
//! inside), and closing it gives focus back to the `?` button.

use yew::prelude::*;

use crate::browser;
use crate::model::keyboard::{Ui, UiAction};

/// The shortcuts, as fixed HTML (no node or callback per line).
const KEYS: &str = "<dl class=\"keys\"><dt><kbd>Space</kbd></dt><dd>play / pause</dd><dt><kbd>.</kbd></dt><dd>next event (presenter clickers send it)</dd><dt><kbd>←</kbd></dt><dd>one event back through the recorded history</dd><dt><kbd>→</kbd></dt><dd>one event forward through the recorded history</dd><dt><kbd>1 – 9</kbd></dt><dd>pick a scenario</dd><dt><kbd>p</kbd></dt><dd>projector mode: larger type, fewer panels</dd><dt><kbd>t</kbd></dt><dd>the guided tour (open / close)</dd><dt><kbd>n</kbd> <kbd>b</kbd></dt><dd>the tour's next / previous step (PageDown / PageUp too)</dd><dt><kbd>?</kbd></dt><dd>this help</dd><dt><kbd>Esc</kbd></dt><dd>close this help, or the tour</dd></dl>";

/// The dialog's Close button.
const CLOSE: &str = "[data-testid=help-close]";

/// Open (`open`) or close the dialog with `ui`, and move focus with it: once the dialog is drawn,
/// to its Close button; once it is gone, back to the `?` button that opens it. (After the next
/// paint, in a task of its own: no hook, no effect, so nothing more in the bundle than this.)
pub fn show_help(ui: &UseReducerHandle<Ui>, open: bool) {
    // `open` is `!ui.help` when toggling: the toggle opens it.
    ui.dispatch(if open {
        UiAction::ToggleHelp
    } else {
        UiAction::CloseHelp
    });
    browser::after_paint(Box::new(move || {
        browser::focus(if open {
            CLOSE
        } else {
            "[data-testid=help-open]"
        });
    }));
}

/// The overlay (rendered only while open). A function, not a component: a component type
/// costs Yew's machinery in the bundle, and App renders whenever `ui` changes anyway.
pub fn help(ui: &UseReducerHandle<Ui>) -> Html {
    let close = {
        let ui = ui.clone();
        Callback::from(move |_| show_help(&ui, false))
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
