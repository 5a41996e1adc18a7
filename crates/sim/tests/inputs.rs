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

/// A world with no faults and no jitter: the first request is still on its way at 5 ms.
fn calm() -> World {
    let mut config = quiet(1);
    config.faults = Faults {
        jitter_ms: 0,
        ..Faults::default()
    };
    World::new(config)
}

/// Pay pressed again while the checkout is pending: a naive page (no key, a key per attempt)
/// sends the cart again as its next attempt of the same checkout, so PayCo charges that
/// checkout twice; a same-key page resumes its pending operation and sends nothing.
#[test]
fn pay_again_sends_the_cart_again_unless_the_page_keeps_one_key() {
    for strategy in Strategy::ALL {
        let mut w = calm();
        let c = w.start_checkout(strategy).unwrap();
        w.run_until(5);
        w.pay_again_for(c).unwrap();
        w.finish();
        let h = w.history();
        let keys: Vec<Option<uuid::Uuid>> = h
            .messages
            .iter()
            .filter_map(|m| match m.kind {
                idem_sim::MessageKind::Request { key, .. } if m.checkout == c => Some(key),
                _ => None,
            })
            .collect();
        let charged = w.payco().charge_count(c);
        let naive = strategy != Strategy::SameKey;
        assert_eq!(
            keys.len(),
            if naive { 2 } else { 1 },
            "{strategy:?}: {keys:?}"
        );
        assert_eq!(charged, if naive { 2 } else { 1 }, "{strategy:?}");
        assert_eq!(
            w.payco().charges().len() as u32,
            charged,
            "one checkout, one ledger row"
        );
        match strategy {
            Strategy::NoKey => assert!(keys.iter().all(Option::is_none)),
            Strategy::KeyPerAttempt => assert!(keys[0].is_some() && keys[0] != keys[1]),
            Strategy::SameKey => {}
        }
        if naive {
            // The first attempt was given up for the second; its answer came back late.
            let first = w.attempts_of(c)[0].result;
            assert_eq!(
                first,
                idem_sim::AttemptResult::Info {
                    cause: idem_sim::InfoCause::Abandoned
                }
            );
            let late = h
                .messages
                .iter()
                .any(|m| m.late && matches!(m.kind, idem_sim::MessageKind::Response { .. }));
            assert!(late, "{strategy:?}: the first answer arrives late");
            assert_eq!(w.checkout(c).unwrap().attempts, 2);
        }
        assert!(matches!(
            w.checkout(c).unwrap().outcome,
            CheckoutOutcome::Paid { .. }
        ));
        assert!(matches!(
            w.inputs()[1].command,
            Command::PayAgain { checkout } if checkout == c
        ));
        let again = World::replay(&w.export()).unwrap();
        assert_eq!(again.history_hash(), w.history_hash(), "{strategy:?}");
    }
}

#[test]
fn pay_again_on_an_ended_checkout_or_none_changes_nothing() {
    let mut w = calm();
    let c = w.start_checkout(Strategy::NoKey).unwrap();
    w.run_until(1_000);
    assert!(matches!(
        w.checkout(c).unwrap().outcome,
        CheckoutOutcome::Paid { .. }
    ));
    let attempts = w.counters().attempts;
    w.pay_again_for(c).unwrap();
    w.run_until(2_000);
    assert_eq!(w.counters().attempts, attempts);
    assert_eq!(w.payco().charge_count(c), 1);
    assert!(matches!(
        w.pay_again_for(CheckoutId(9)),
        Err(SimError::NoSuchCheckout(9))
    ));
}
