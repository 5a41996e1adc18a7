//! The page's keyboard shortcuts (see `model/keyboard.rs` for the map): one `keydown` listener
//! on the window, ignored while the user types in a field.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{HtmlElement, KeyboardEvent};
use yew::prelude::*;

use crate::model::clock::{Clock, ClockAction};
use crate::model::keyboard::{is_typing_target, key_action, KeyAction, Ui, UiAction};
use crate::model::tour;
use crate::session::Session;

/// Provided by the scenario picker so digit keys `1`–`9` start scenarios by index (0-based),
/// in its stable order. Without it, digits do nothing.
#[derive(Clone, PartialEq)]
pub struct ScenarioKeys(pub Callback<usize>);

/// Listen for the shortcuts while the page is mounted. In real mode only help and projector
/// answer: the others move the simulated world, which real mode does not show.
#[hook]
pub fn use_keyboard(
    session: &Session,
    clock: &UseReducerHandle<Clock>,
    ui: &UseReducerHandle<Ui>,
    scenarios: Option<ScenarioKeys>,
    real: bool,
) {
    let (session, clock, ui) = (session.clone(), clock.clone(), ui.clone());
    let deps = (clock.playing, *ui, real);
    use_effect_with(deps, move |_| {
        let listener = Closure::<dyn Fn(KeyboardEvent)>::new(move |e: KeyboardEvent| {
            let target = e.target().and_then(|t| t.dyn_into::<HtmlElement>().ok());
            let (tag, editable) = target.as_ref().map_or((String::new(), false), |t| {
                (t.tag_name(), t.is_content_editable())
            });
            let key = e.key();
            // Space on a focused button presses that button: leave it to the button.
            if key == " " && (tag == "BUTTON" || tag == "SUMMARY") {
                return;
            }
            let modifier = e.ctrl_key() || e.meta_key() || e.alt_key();
            let Some(action) = key_action(&key, is_typing_target(&tag, editable), modifier) else {
                return;
            };
            let simulated = !matches!(
                action,
                KeyAction::ToggleHelp | KeyAction::CloseHelp | KeyAction::ToggleProjector
            );
            if real && simulated {
                return;
            }
            e.prevent_default();
            match action {
                KeyAction::TogglePlay => clock.dispatch(if clock.playing {
                    ClockAction::Pause
                } else {
                    ClockAction::Play
                }),
                KeyAction::Step => {
                    clock.dispatch(ClockAction::Pause);
                    session.step();
                }
                KeyAction::Back | KeyAction::Forward => {
                    clock.dispatch(ClockAction::Pause);
                    session.travel(action == KeyAction::Back);
                }
                KeyAction::Scenario(i) => {
                    if let Some(s) = &scenarios {
                        s.0.emit(i);
                    }
                }
                KeyAction::ToggleHelp => super::help::show_help(&ui, !ui.help),
                KeyAction::CloseHelp if ui.help => super::help::show_help(&ui, false),
                KeyAction::CloseHelp | KeyAction::ToggleTour if ui.tour.is_some() => {
                    ui.dispatch(UiAction::TourClose)
                }
                KeyAction::ToggleTour => ui.dispatch(tour::go(0, true)),
                KeyAction::CloseHelp => {}
                KeyAction::TourNext | KeyAction::TourBack => {
                    let back = action == KeyAction::TourBack;
                    let to = ui
                        .tour
                        .and_then(|i| if back { i.checked_sub(1) } else { Some(i + 1) });
                    if let Some(step) = to {
                        ui.dispatch(tour::go(step, true));
                    }
                }
                KeyAction::ToggleProjector => ui.dispatch(UiAction::ToggleProjector),
            }
        });
        let window = web_sys::window();
        if let Some(w) = &window {
            let _ =
                w.add_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(w) = &window {
                let _ = w.remove_event_listener_with_callback(
                    "keydown",
                    listener.as_ref().unchecked_ref(),
                );
            }
            drop(listener);
        }
    });
}
