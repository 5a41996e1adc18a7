//! The page: reducers, effects and the layout. Panels live in `components/`; they get the
//! reducers' handles as props or arguments (no contexts: each costs the bundle a provider).

use std::rc::Rc;

use gloo_timers::callback::Interval;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::browser;
use crate::components::checkout::checkout;
use crate::components::header::header;
use crate::components::help::help;
use crate::components::keyboard::{use_keyboard, ScenarioKeys};
use crate::components::lab_view::LabView;
use crate::components::ledger::Ledger;
use crate::components::network::network;
use crate::components::real_banner::real_banner;
use crate::components::scenario_bar::scenario_bar;
use crate::components::sequence::Sequence;
use crate::components::server::server;
use crate::components::share_bar::{share_bar, use_share_state};
use crate::components::storage_record::storage_record;
use crate::components::timeline::Timeline;
use crate::components::tour::{tour, use_tour_steps};
use crate::model::clock::{Clock, ClockAction};
use crate::model::keyboard::{Tab, Ui, UiAction};
use crate::model::scenario::{ScenarioAction, ScenarioMenu};
use crate::model::settings::{Settings, SettingsAction};
use crate::model::view::View;
use crate::real::use_real;
use crate::session::Session;

/// Wall-clock milliseconds between driver ticks.
const TICK_MS: u32 = 16;

/// The demo page.
#[function_component]
pub fn App() -> Html {
    let view = use_reducer(View::default);
    let session = {
        let dispatcher = view.dispatcher();
        (*use_memo((), move |_| Session::boot(dispatcher))).clone()
    };
    let settings = {
        let session = session.clone();
        use_reducer(move || session.initial_settings())
    };
    // Real-server mode (`real/`): while it is on, the panels show its view, not the world's.
    let (real, real_view) = use_real(&settings);
    let real_on = real_view.real.is_some();
    let banner = real_view
        .real
        .as_deref()
        .map(|info| real_banner(&real, info));
    // A link opens paused at its moment; a fresh run plays.
    let from_link = session.boot_info().from_link;
    let clock = use_reducer(move || Clock {
        playing: !from_link,
        ..Clock::default()
    });
    let ui = {
        let (projector, tab) = (session.boot_info().projector, session.boot_info().tab);
        use_reducer(move || Ui {
            tab: Tab::at(tab),
            ..Ui::new(projector)
        })
    };
    {
        let session = session.clone();
        use_effect_with(ui.projector, move |on| session.set_projector(*on));
    }
    {
        // A link's tour step: shown at the moment the link was saved, or run afresh.
        let (ui, tour) = (ui.clone(), session.boot_info().tour);
        use_effect_with((), move |_| {
            if let Some((step, run)) = tour {
                ui.dispatch(crate::model::tour::go(step, run));
            }
        });
    }
    {
        let session = session.clone();
        use_effect_with(ui.tour, move |step| session.set_tour(*step));
    }
    {
        // The last tick may have advanced the world without a refresh (they are throttled):
        // show exactly where time stopped.
        let session = session.clone();
        use_effect_with(clock.playing, move |playing| {
            if !*playing {
                session.refresh();
            }
        });
    }
    // Scenario hook: digits 1–9 emit the scenario index to this callback once the scenario
    // picker provides one (`ScenarioKeys(Callback<usize>)`); `None` means digits do nothing.
    let scenarios = use_reducer(ScenarioMenu::default);
    let scenario_keys = {
        let m = scenarios.clone();
        Some(ScenarioKeys(Callback::from(move |i: usize| {
            m.dispatch(ScenarioAction::Run(i))
        })))
    };
    use_scenarios(&session, &scenarios, &clock, &view, &ui, &settings);
    use_tour_steps(&ui, &scenarios, real_on);
    let share = use_share_state(&session);
    use_keyboard(&session, &clock, &ui, scenario_keys, real_on);

    use_first_snapshot_and_save_on_leave(&session);
    let save_soon = use_save_soon(&session);
    use_settings_sync(&session, &settings, &save_soon);
    {
        let save_soon = save_soon.clone();
        use_effect_with(view.log_rev, move |_| save_soon.emit(()));
    }
    use_driver(&session, *clock, real_on);
    let fast = clock.factor() > 5.0;
    let shown = if real_on { real_view } else { view };

    html! {
            // Above 5×, row flashes would only be noise (and style work every frame): off.
            <div class={classes!("app", fast.then_some("fast"), ui.projector.then_some("projector"))}>
                { header(&shown, &clock, &session) }
                if let Some(banner) = banner { { banner } } else {
                    { scenario_bar(&scenarios, &ui, &shown) }
                    { tour(&ui) }
                }
                <main class="layout">
                    <div class="col left">
                        { checkout(&settings, &shown, &session, &real) }
                        { storage_record(&shown) }
                        { network(&settings, &session, &real, real_on) }
                    </div>
                    <div class="col mid">
                        { share_bar(&session, &ui, &shown, &share) }
                        { match ui.tab.shown(real_on) {
                            Tab::Server => server(&shown, &settings, &session, &real),
                            // Keyed by the mode: switching keeps nothing of the other's picks.
                            Tab::Sequence => html! { <Sequence key={if real_on { "real" } else { "sim" }} view={shown.clone()} session={session.clone()} /> },
                            Tab::Timeline => html! { <Timeline view={shown.clone()} session={session.clone()} /> },
                            Tab::Lab => html! { <LabView session={session.clone()} ui={ui.clone()} /> },
                        } }
                    </div>
                    <div class="col right">
                        <Ledger view={shown.clone()} session={session.clone()} clock={clock.clone()} />
                    </div>
                </main>
                if ui.help { { help(&ui) } }
            </div>
    }
}

/// Run the picked scenario (and play) on the sequence diagram; stop the clock at its pause;
/// let time run again on play.
#[hook]
fn use_scenarios(
    session: &Session,
    menu: &UseReducerHandle<ScenarioMenu>,
    clock: &UseReducerHandle<Clock>,
    view: &UseReducerHandle<View>,
    ui: &UseReducerHandle<Ui>,
    settings: &UseReducerHandle<Settings>,
) {
    {
        let (session, clock, m, ui) = (session.clone(), clock.clone(), **menu, ui.clone());
        let settings = settings.clone();
        use_effect_with(menu.rev, move |rev| {
            if let (true, Some(i)) = (*rev > 0, m.selected) {
                if session.start_scenario(i, m.fixed) {
                    // The panels show the scenario world's settings (its loss, its store).
                    let shown = session.initial_settings();
                    settings.dispatch(SettingsAction::Show(Rc::new(shown)));
                }
                clock.dispatch(ClockAction::Play);
                ui.dispatch(UiAction::Open(Tab::Sequence));
            }
        });
    }
    {
        let clock = clock.clone();
        let paused = view.live.scenario.and_then(|s| s.paused_at);
        use_effect_with(paused, move |p| {
            if p.is_some() {
                clock.dispatch(ClockAction::Pause);
            }
        });
    }
    {
        let session = session.clone();
        use_effect_with(clock.playing, move |playing| {
            if *playing {
                session.release_hold();
            }
        });
    }
}

/// Save the run log (session item and URL hash) in a task of its own after the next paint:
/// `history.replaceState` and the storage writes cost milliseconds, so they never share a task
/// with a render (the refresh after a batch of a thousand checkouts was the longest task of a
/// run with them), and at start-up the page shows before it writes anything. Several saves
/// asked for before it runs cost one; a reload in between still saves on `pagehide`.
#[hook]
fn use_save_soon(session: &Session) -> Callback<()> {
    let pending = use_mut_ref(|| false);
    let session = session.clone();
    use_callback((), move |_, _| {
        if pending.replace(true) {
            return;
        }
        let (session, pending) = (session.clone(), pending.clone());
        browser::after_paint(Box::new(move || {
            *pending.borrow_mut() = false;
            session.save_log();
        }));
    })
}

/// Show the world once the first frame is painted (the page first, then the world's first
/// snapshot), and save the run log when the page goes away (a reload), so the next load
/// rebuilds the same world up to this moment.
#[hook]
fn use_first_snapshot_and_save_on_leave(session: &Session) {
    let session = session.clone();
    use_effect_with((), move |_| {
        {
            let session = session.clone();
            browser::after_paint(Box::new(move || session.refresh()));
        }
        let on_leave = {
            let session = session.clone();
            Closure::<dyn Fn(web_sys::Event)>::new(move |_| session.save_log())
        };
        let window = web_sys::window();
        if let Some(w) = &window {
            let _ =
                w.add_event_listener_with_callback("pagehide", on_leave.as_ref().unchecked_ref());
        }
        move || {
            if let Some(w) = &window {
                let _ = w.remove_event_listener_with_callback(
                    "pagehide",
                    on_leave.as_ref().unchecked_ref(),
                );
            }
            drop(on_leave);
        }
    });
}

/// Tell the world about every valid settings change; a new seed starts a new run.
#[hook]
fn use_settings_sync(
    session: &Session,
    settings: &UseReducerHandle<Settings>,
    save_soon: &Callback<()>,
) {
    {
        let (session, s) = (session.clone(), settings.clone());
        use_effect_with(settings.seed.value, move |seed| session.restart(*seed, &s));
    }
    {
        let session = session.clone();
        use_effect_with(settings.network(), move |n| session.set_network(n.clone()));
    }
    {
        let session = session.clone();
        use_effect_with(settings.server(), move |s| session.set_server(s.clone()));
    }
    {
        let (session, save_soon) = (session.clone(), save_soon.clone());
        use_effect_with(settings.strategy, move |s| {
            session.set_strategy(*s);
            save_soon.emit(());
        });
    }
}

/// While playing, ask the world to advance on every tick by the wall time elapsed × speed
/// (never in real mode: the world holds still while the page talks to the real server).
#[hook]
fn use_driver(session: &Session, clock: Clock, real_on: bool) {
    let session = session.clone();
    use_effect_with((clock, real_on), move |(clock, real_on)| {
        let clock = *clock;
        let interval = (clock.playing && !*real_on).then(|| {
            let mut last = browser::wall_ms();
            Interval::new(TICK_MS, move || {
                let t = browser::wall_ms();
                let dt = clock.virtual_step(t - last);
                last = t;
                session.advance(dt);
            })
        });
        move || drop(interval)
    });
}
