//! Play, pause, single step and speed. The world runs in virtual time; these only decide how
//! much of it the driver (see `driver.rs`) asks for on each tick.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::model::clock::{speed_value, Clock, ClockAction, SPEEDS};
use crate::model::view::View;
use crate::session::Session;

/// The time controls, in the header.
#[function_component]
pub fn TimeControls() -> Html {
    let clock = use_context::<UseReducerHandle<Clock>>().expect("Clock context is provided by App");
    let session = use_context::<Session>().expect("Session context is provided by App");
    let play = {
        let clock = clock.clone();
        Callback::from(move |_| clock.dispatch(ClockAction::Play))
    };
    let pause = {
        let clock = clock.clone();
        Callback::from(move |_| clock.dispatch(ClockAction::Pause))
    };
    let step = {
        let (clock, session) = (clock.clone(), session.clone());
        Callback::from(move |_| {
            clock.dispatch(ClockAction::Pause);
            session.step();
        })
    };
    let on_speed = {
        let clock = clock.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(v) = speed_value(&v) {
                clock.dispatch(ClockAction::Speed(v));
            }
        })
    };
    if use_context::<UseReducerHandle<View>>()
        .expect("View context is provided by App")
        .real
        .is_some()
    {
        return html! {
            <div class="time" role="group" aria-label="Time controls">
                <span class="play-state" data-testid="real-time-note">{ "real time: speed is off" }</span>
            </div>
        };
    }
    html! {
        <div class="time" role="group" aria-label="Time controls">
            <button class={classes!("btn", "icon", clock.playing.then_some("active"))} data-testid="play"
                onclick={play} aria-pressed={clock.playing.to_string()} title="Play">{ "▶ Play" }</button>
            <button class={classes!("btn", "icon", (!clock.playing).then_some("active"))} data-testid="pause"
                onclick={pause} aria-pressed={(!clock.playing).to_string()} title="Pause: virtual time stops">{ "❚❚ Pause" }</button>
            <button class="btn icon" data-testid="step" onclick={step} title="Advance to the next event">{ "Step ›" }</button>
            <label class="speed">
                <span>{ "Speed" }</span>
                <select data-testid="speed" onchange={on_speed} aria-label="Speed (virtual ms per real ms)">
                    { for SPEEDS.iter().enumerate().map(|(i, (v, _))| html! {
                        <option value={*v} selected={i == clock.speed}>{ format!("{v}×") }</option>
                    }) }
                </select>
            </label>
            <span class="play-state" data-testid="play-state" data-playing={clock.playing.to_string()}>
                { if clock.playing { "running" } else { "paused" } }
            </span>
        </div>
    }
}
