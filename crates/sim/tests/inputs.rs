//! The input log: every change to a world is an `Input` applied by `World::apply`, control
//! methods included, and rebuilding a run replays the same inputs through the same `apply`,
//! with or without a scenario driving time.
#![cfg(not(target_arch = "wasm32"))]

use idem_sim::{
    CheckoutId, CheckoutOutcome, Command, Faults, Input, Scenario, ScenarioRun, SimConfig,
    SimError, Strategy, World,
};

fn quiet(seed: u64) -> SimConfig {
    let mut config = SimConfig {
        seed,
        ..SimConfig::default()
    };
    config.workload.orders = 0;
    config.faults = Faults {
        drop_response: 0.3,
        ..Faults::default()
    };
    config
}

#[test]
fn control_methods_record_what_apply_records() {
    let mut by_methods = World::new(quiet(3));
    let c = by_methods.start_checkout(Strategy::SameKey).unwrap();
    by_methods.run_until(40);
    by_methods.drop_next_request();
    by_methods.resend_with_other_cart(c).unwrap();
    by_methods.resend_later(c, true, 300).unwrap();
    by_methods.run_until(900);
    by_methods.reload(c).unwrap();
    by_methods.reload_tab();

    let mut by_apply = World::new(quiet(3));
    for input in by_methods.inputs() {
        by_apply.run_until(input.at);
        by_apply.apply(input.command.clone()).unwrap();
    }
    assert_eq!(by_apply.inputs(), by_methods.inputs());
    assert_eq!(by_apply.history_hash(), by_methods.history_hash());
    // The later resend left 300 ms after it was applied, as a request outside the operation.
    let late_cart = by_methods
        .history()
        .messages
        .iter()
        .find(|m| m.attempt == 0 && m.sent_at == 340);
    assert!(late_cart.is_some(), "{:?}", by_methods.history().messages);
    let kinds: Vec<&Command> = by_methods.inputs().iter().map(|i| &i.command).collect();
    assert!(matches!(
        kinds[..],
        [
            Command::StartCheckout { .. },
            Command::DropNextRequest,
            Command::Resend {
                other_cart: true,
                after_ms: 0,
                ..
            },
            Command::Resend {
                other_cart: true,
                after_ms: 300,
                ..
            },
            Command::Reload { .. },
            Command::ReloadTab
        ]
    ));
}

#[test]
fn a_command_naming_no_checkout_is_refused_and_not_recorded() {
    let mut w = World::new(quiet(1));
    let missing = CheckoutId(7);
    assert_eq!(
        w.apply(Command::Reload { checkout: missing }),
        Err(SimError::NoSuchCheckout(7))
    );
    let resend = Command::Resend {
        checkout: missing,
        other_cart: false,
        after_ms: 0,
    };
    assert_eq!(w.apply(resend), Err(SimError::NoSuchCheckout(7)));
    assert!(w.inputs().is_empty());
}

#[test]
fn reloading_the_tab_reloads_every_pending_checkout_and_no_other() {
    let mut config = quiet(5);
    config.faults.drop_response = 1.0;
    let mut w = World::new(config);
    let paid = w.start_checkout(Strategy::NoKey).unwrap();
    w.set_faults(Faults {
        drop_response: 0.0,
        ..w.faults().clone()
    });
    // The first checkout's answers are lost: it is still pending. The others settle.
    w.run_until(3_000);
    let pending = w.start_checkout(Strategy::SameKey).unwrap();
    w.set_faults(Faults {
        drop_response: 1.0,
        ..w.faults().clone()
    });
    w.run_until(3_010);
    let before = w.counters().reloads;
    w.reload_tab();
    let reloaded = w.counters().reloads - before;
    let still_pending = [paid, pending]
        .iter()
        .filter(|c| w.checkout(**c).unwrap().outcome == CheckoutOutcome::Pending)
        .count() as u64;
    assert_eq!(reloaded, still_pending, "{:?}", w.checkouts());
    assert!(reloaded >= 1);
    assert_eq!(
        w.inputs().last().map(|i| &i.command),
        Some(&Command::ReloadTab)
    );
}

#[test]
fn a_scenario_run_with_extra_inputs_replays_through_the_same_apply() {
    // What the demo does after a page reload: the scenario drives time (its script applies its
    // own controls), the page's own inputs are replayed where they were recorded.
    let scenario = Scenario::by_id("lost-response").unwrap();
    let (mut run, mut world) = ScenarioRun::start(scenario, false);
    let mut page_inputs: Vec<Input> = Vec::new();
    let mut apply = |world: &mut World, command: Command| {
        page_inputs.push(Input {
            at: world.now(),
            after_events: world.events_run(),
            command: command.clone(),
        });
        world.apply(command).unwrap();
    };
    run.run_until(&mut world, 10, false);
    apply(&mut world, Command::DropNextRequest);
    let start = Command::StartCheckout {
        strategy: Strategy::KeyPerAttempt,
        amount: None,
        host_journal: false,
    };
    for _ in 0..20 {
        apply(&mut world, start.clone());
    }
    // Stop between two events of one millisecond, as a page tick out of budget does.
    while world.next_event_at() != Some(world.now()) {
        assert!(run.step(&mut world), "two events in one millisecond");
    }
    apply(&mut world, Command::DropNextResponse);
    run.run_until(&mut world, 5_000, false);
    let (at, events) = (world.now(), world.events_run());

    let (mut again_run, mut again) = ScenarioRun::start(scenario, false);
    again.replay_inputs(&page_inputs, &mut again_run);
    again.reach(at, events, &mut again_run);
    assert_eq!((again.now(), again.events_run()), (at, events));
    assert_eq!(again.history_hash(), world.history_hash());
    assert_eq!(
        again.inputs(),
        world.inputs(),
        "script and page inputs, in order"
    );
}
