//! The gate: 1,000 seeds × 100 orders with swarm-drawn faults (every fault of `Faults`, short
//! leases, both error policies, other carts on released keys), zero violations of all six
//! properties for the correct store;
//! the swarm draws every fault field; and each classic bug is caught, within 200 seeds, by the
//! property it breaks (a checker that cannot fail is not a checker).
#![cfg(not(target_arch = "wasm32"))]

use idem_sim::lab::sweep::{run_seed, swarm_config, sweep};
use idem_sim::{Bug, ErrorPolicy, Faults, World};

#[test]
fn thousand_seeds_are_clean_for_the_correct_store() {
    let report = sweep(1, 1_000, 100, &[], 10);
    let lines: Vec<String> = report
        .failures
        .iter()
        .map(|v| {
            format!(
                "seed {}: {:?}\n  reproduce: {}",
                v.seed,
                v.violations.first(),
                v.reproduce
            )
        })
        .collect();
    assert!(
        report.failures.is_empty(),
        "violations:\n{}",
        lines.join("\n")
    );
    assert_eq!(report.seeds, 1_000);
    // The gate ran what the swarm promises: every fault happened somewhere, takeovers in most
    // seeds, both error policies.
    let (t, net) = (&report.totals, &report.net);
    eprintln!(
        "{t:?}\n{net:?}\ntakeovers in {} seeds, save-response in {}",
        report.seeds_with_takeovers, report.seeds_save_response
    );
    for (what, n) in [
        ("requests lost", net.requests_dropped),
        ("responses lost", net.responses_dropped),
        ("requests duplicated", net.duplicated),
        ("crashes after the charge", t.crashes),
        ("slow workers", t.slow_workers),
        ("tab reloads", t.reloads),
        ("other-cart 422s", t.mismatches),
        ("other-cart 422s on a released key", t.released_mismatches),
        ("declines", t.declines),
        ("PayCo timeouts", t.payco_timeouts),
        ("PayCo dedupes", t.deduped),
        ("outbox receipts", t.receipts),
        ("relay crashes between send and mark", t.relay_crashes),
        (
            "consumer crashes between effect and ack",
            t.consumer_crashes,
        ),
        ("duplicated deliveries", t.deliveries_duplicated),
        ("reordered deliveries", t.deliveries_reordered),
    ] {
        assert!(n > 0, "the sweep never had {what}");
    }
    assert!(
        report.seeds_with_takeovers > report.seeds / 2,
        "takeovers in only {} of {} seeds",
        report.seeds_with_takeovers,
        report.seeds
    );
    assert!((100..900).contains(&report.seeds_save_response));
}

/// Every field of `f` by name, as a number, and whether the swarm may leave it out. The
/// destructuring names every field (no `..`), so a field added to `Faults` does not compile
/// here until it is listed, and then fails the test below until the swarm draws it.
fn fields(f: &Faults) -> [(&'static str, f64, bool); 15] {
    let &Faults {
        drop_request,
        drop_response,
        duplicate,
        latency_ms,
        jitter_ms,
        crash_after_charge,
        slow_worker,
        tab_reload,
        reuse_key_other_cart,
        decline,
        payco_timeout,
        relay_crash_after_send,
        consumer_crash_after_effect,
        duplicate_delivery,
        reorder_delivery,
    } = f;
    [
        ("drop_request", drop_request, true),
        ("drop_response", drop_response, true),
        ("duplicate", duplicate, true),
        ("latency_ms", latency_ms as f64, false),
        ("jitter_ms", jitter_ms as f64, false),
        ("crash_after_charge", crash_after_charge, true),
        ("slow_worker", slow_worker, true),
        ("tab_reload", tab_reload, true),
        ("reuse_key_other_cart", reuse_key_other_cart, true),
        ("decline", decline, true),
        ("payco_timeout", payco_timeout, true),
        ("relay_crash_after_send", relay_crash_after_send, true),
        (
            "consumer_crash_after_effect",
            consumer_crash_after_effect,
            true,
        ),
        ("duplicate_delivery", duplicate_delivery, true),
        ("reorder_delivery", reorder_delivery, true),
    ]
}

/// Every field of `Faults` is drawn: non-zero in most seeds and, for the probabilities, left
/// out in some (swarm testing omits faults too); both error policies; short leases.
#[test]
fn the_swarm_draws_every_fault_field_and_both_policies() {
    let configs: Vec<_> = (1..=1_000).map(|s| swarm_config(s, 100, &[])).collect();
    let n = fields(&Faults::default()).len();
    for i in 0..n {
        let (name, _, omitted_sometimes) = fields(&configs[0].faults)[i];
        let on = configs
            .iter()
            .filter(|c| fields(&c.faults)[i].1 > 0.0)
            .count();
        assert!(on >= 500, "{name} is drawn in only {on} of 1000 seeds");
        if omitted_sometimes {
            assert!(on <= 900, "{name} is never left out ({on} of 1000 seeds)");
        }
    }
    let save = configs
        .iter()
        .filter(|c| c.server.on_error == ErrorPolicy::SaveResponse)
        .count();
    assert!((300..700).contains(&save), "save-response in {save} seeds");
    let short = configs.iter().filter(|c| c.server.lock_ms <= 1_000).count();
    assert!(short >= 500, "lock_ms ≤ 1 s in only {short} seeds");
}

/// The property each classic bug breaks. Exhaustive: a new bug must say which property
/// catches it.
fn breaks(bug: Bug) -> &'static str {
    match bug {
        Bug::NewKeyPerAttempt
        | Bug::SelectThenInsert
        | Bug::KeyOnlyAtTopHop
        | Bug::ShortRetention
        | Bug::TwoStepWrite
        | Bug::FreshOrderAfterRelease => "one-charge",
        Bug::UnfencedWrites | Bug::NoFingerprintCheck => "replays-identical",
        Bug::DeclineBeforeLookup | Bug::SaveUnknownOutcome => "agrees-with-payco",
        Bug::ReleaseForgetsTheKey => "mismatch-never-ran",
        Bug::ConsumerWithoutDedupe => "one-receipt",
    }
}

#[test]
fn every_classic_bug_is_caught_by_the_property_it_breaks_within_200_seeds() {
    for bug in Bug::ALL {
        let want = breaks(bug);
        let caught = (1..=200)
            .map(|seed| run_seed(seed, 100, &[bug]))
            .find(|v| v.violations.iter().any(|x| x.property() == Some(want)));
        let Some(v) = caught else {
            panic!("{bug}: no {want} violation in 200 seeds; the checker cannot see this bug")
        };
        assert!(
            v.reproduce.contains(&format!("--bug {bug}")),
            "{}",
            v.reproduce
        );
        assert!(v.reproduce.contains(&format!("--first-seed {}", v.seed)));
    }
}

/// The expired-key guard against the short-retention bug (records kept 500 ms, retries for
/// seconds): with the guard off in every seed the bug is caught by `one-charge` (the mutation
/// check: the swarm's guard draw must not hide it), and with it on in every seed no order is
/// charged twice by the SDK's own retries; the retries it refuses are reported unknown instead.
#[test]
fn the_expired_key_guard_turns_short_retention_double_charges_into_unknowns() {
    let run = |seed: u64, guard: bool| {
        let mut config = swarm_config(seed, 100, &[Bug::ShortRetention]);
        config.server.expired_key_guard = guard;
        // The buggy page that reuses a checkout's key for another cart sends no first-sent
        // time (it is not the SDK), so no guard can refuse it: once the key is pruned its other
        // cart runs and is charged under the checkout (seed 161 shows it). Left out here; the
        // guard protects the requests that say when they were first sent.
        config.faults.reuse_key_other_cart = 0.0;
        let mut world = World::new(config);
        let verdict = world.finish();
        (verdict, world.counters())
    };
    let caught = (1..=200).find(|&seed| {
        run(seed, false)
            .0
            .violations
            .iter()
            .any(|v| v.property() == Some("one-charge"))
    });
    assert!(
        caught.is_some(),
        "short-retention not caught with the guard off"
    );
    let (mut refused, mut unknown) = (0, 0);
    for seed in 1..=200 {
        let (verdict, counters) = run(seed, true);
        let twice: Vec<_> = verdict
            .violations
            .iter()
            .filter(|v| v.property() == Some("one-charge"))
            .collect();
        assert!(twice.is_empty(), "seed {seed} with the guard: {twice:?}");
        refused += counters.key_expired;
        unknown += verdict.unknown.len();
    }
    assert!(
        refused > 0 && unknown > 0,
        "the guard never refused ({refused}, {unknown})"
    );
}

/// The swarm runs the expired-key guard in some seeds and not in others.
#[test]
fn the_swarm_draws_the_expired_key_guard_both_ways() {
    let on = (1..=1_000)
        .filter(|&s| swarm_config(s, 100, &[]).server.expired_key_guard)
        .count();
    assert!(
        (300..700).contains(&on),
        "the guard on in {on} of 1000 seeds"
    );
}
