//! The gate: 1,000 seeds × 100 orders with swarm-drawn faults, zero violations for the correct
//! store; and, for each classic bug, a violation within 200 seeds (a checker that cannot fail
//! is not a checker).
#![cfg(not(target_arch = "wasm32"))]

use idem_sim::lab::sweep::sweep;
use idem_sim::Bug;

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
}

#[test]
fn every_classic_bug_is_caught_within_200_seeds() {
    for bug in Bug::ALL {
        let report = sweep(1, 200, 100, &[bug], 1);
        assert!(
            !report.failures.is_empty(),
            "{bug}: no violation in 200 seeds; the checker cannot see this bug"
        );
        let v = &report.failures[0];
        assert!(
            v.reproduce.contains(&format!("--bug {bug}")),
            "{}",
            v.reproduce
        );
        assert!(v.reproduce.contains(&format!("--first-seed {}", v.seed)));
    }
}
