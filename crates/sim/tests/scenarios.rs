//! Every classroom scenario reaches its pause and shows its promised effect there; every fixed
//! run reaches its own pause, shows the good result, and not the bug's.

use idem_sim::{ScenarioRun, World, SCENARIOS};

/// Virtual time any scenario must pause within.
const LIMIT_MS: u64 = 20_000;

fn run(id: &str, fixed: bool) -> (ScenarioRun, World) {
    let scenario = idem_sim::Scenario::by_id(id).unwrap();
    let (mut run, mut world) = ScenarioRun::start(scenario, fixed);
    assert!(
        run.run_to_pause(&mut world, LIMIT_MS),
        "{id} (fixed: {fixed}) never reached its pause {:?}; counters {:?}",
        run.pause(),
        world.counters()
    );
    (run, world)
}

#[test]
fn every_scenario_pauses_and_shows_its_effect() {
    for s in &SCENARIOS {
        let (run, world) = run(s.id, false);
        for e in s.expect {
            assert!(
                e.holds(&world),
                "{}: {e:?} does not hold at the pause (t={} ms, {:?}, charges {})",
                s.id,
                world.now(),
                world.counters(),
                world.charges()
            );
        }
        assert!(run.paused_at().is_some());
    }
}

#[test]
fn every_fix_pauses_with_the_good_result() {
    for s in SCENARIOS.iter().filter(|s| s.fix.is_some()) {
        let (_, mut world) = run(s.id, true);
        for e in s.expect(true) {
            assert!(
                e.holds(&world),
                "{} fixed: {e:?} does not hold (t={} ms, {:?})",
                s.id,
                world.now(),
                world.counters()
            );
        }
        // And the whole fixed run stays clean.
        let verdict = world.finish();
        assert!(verdict.is_clean(), "{} fixed: {verdict:?}", s.id);
        assert_eq!(world.double_charged(), 0, "{} fixed", s.id);
    }
}

/// Each bug scenario breaks a live property by its pause, at a moment no later than the pause;
/// its fixed run (same seed and script, the cause removed) breaks none, neither at its own
/// pause nor once it has run to the end.
#[test]
fn bug_scenarios_break_a_property_and_the_fix_does_not() {
    for s in SCENARIOS.iter().filter(|s| s.fix.is_some()) {
        let (_, world) = run(s.id, false);
        let props = world.properties();
        let broken: Vec<_> = props.all().iter().filter_map(|p| p.broke.clone()).collect();
        assert!(!broken.is_empty(), "{}: no property broke", s.id);
        for b in &broken {
            assert!(
                b.at <= world.now() && b.event <= world.events_run(),
                "{}: {b:?}",
                s.id
            );
        }
        let (_, mut fixed) = run(s.id, true);
        let at_pause = fixed.properties();
        assert!(
            at_pause.all().iter().all(|p| p.ok()),
            "{} fixed, at its pause: {at_pause:?}",
            s.id
        );
        fixed.finish();
        let at_end = fixed.properties();
        assert!(
            at_end.all().iter().all(|p| p.ok()),
            "{} fixed, at the end: {at_end:?}",
            s.id
        );
    }
}

#[test]
fn a_scenario_run_exports_and_replays_to_the_same_hash() {
    for s in &SCENARIOS {
        let (_, mut world) = run(s.id, false);
        world.finish();
        let export = world.export();
        let again = World::replay(&export).unwrap();
        assert_eq!(again.history_hash(), export.hash, "{}", s.id);
    }
}

#[test]
fn slicing_time_differently_gives_the_same_run() {
    let s = idem_sim::Scenario::by_id("stale-lock").unwrap();
    let (mut a, mut wa) = ScenarioRun::start(s, false);
    a.run_until(&mut wa, 6_000, false);
    let (mut b, mut wb) = ScenarioRun::start(s, false);
    let mut t = 0;
    while t < 6_000 {
        t += 7;
        b.run_until(&mut wb, t.min(6_000), false);
    }
    assert_eq!(wa.history_hash(), wb.history_hash());
    assert_eq!(a.paused_at(), b.paused_at());
}

#[test]
fn pause_moments_are_plausible() {
    for s in &SCENARIOS {
        for fixed in [false, true] {
            if fixed && s.fix.is_none() {
                continue;
            }
            let (r, w) = run(s.id, fixed);
            let (at, _) = r.paused_at().unwrap();
            eprintln!(
                "{:28} fixed={fixed:5} pause {:?} at {at} ms, charges {}, {:?}",
                s.id,
                r.pause(),
                w.charges(),
                w.counters()
            );
            assert!(at < 10_000, "{}: paused late, at {at} ms", s.id);
        }
    }
}

/// A declined charge under each error policy: released (the key stays bound to the cart: the
/// same cart runs again and PayCo repeats its decline from its key, another cart is 422) or
/// saved (retries replay the 402). No money moves either way.
#[test]
fn a_declined_charge_follows_the_error_policy() {
    use idem_sim::{CheckoutOutcome, ErrorPolicy, SimConfig, Strategy};
    for policy in [ErrorPolicy::ReleaseClaim, ErrorPolicy::SaveResponse] {
        let mut config = SimConfig::default();
        config.workload.orders = 0;
        config.server.on_error = policy;
        let mut w = World::new(config);
        w.decline_next_charge();
        let c = w.start_checkout(Strategy::SameKey).unwrap();
        w.run_until(500);
        assert_eq!(w.charges(), 0);
        assert_eq!(w.counters().declines, 1);
        assert!(matches!(
            w.checkout(c).unwrap().outcome,
            CheckoutOutcome::Rejected { status: 402 }
        ));
        let rows = w.rows();
        match policy {
            ErrorPolicy::ReleaseClaim => {
                assert_eq!(rows.len(), 1);
                assert_eq!(rows[0].state, idem_store::RowState::Released, "{rows:?}");
                w.resend_with_other_cart(c).unwrap();
                w.run_until(1_000);
                assert_eq!(w.counters().released_mismatches, 1, "another cart: 422");
                w.resend_same_cart(c).unwrap();
                w.run_until(1_500);
                assert_eq!(w.counters().executions, 2, "the same cart ran again");
                assert_eq!(w.counters().deduped, 1, "PayCo repeated its decline");
                assert_eq!(w.counters().replays, 0);
            }
            ErrorPolicy::SaveResponse => {
                assert_eq!(rows.len(), 1);
                assert_eq!(rows[0].response_status, Some(402));
                w.resend_same_cart(c).unwrap();
                w.run_until(1_000);
                assert_eq!(w.counters().replays, 1, "the saved 402 is replayed");
            }
        }
        assert_eq!(w.charges(), 0);
        let replayed = World::replay(&w.export()).unwrap();
        assert_eq!(replayed.history_hash(), w.history_hash());
    }
}
