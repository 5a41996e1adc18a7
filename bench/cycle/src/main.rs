//! idem-bench-cycle: one loop per invocation, for callgrind, or every loop timed, for the
//! wasm-vs-native comparison.
//!
//! ```text
//! idem-bench-cycle once VARIANT KEYS     run one loop once (valgrind --tool=callgrind ...)
//! idem-bench-cycle time KEYS ROUNDS      best ns/op of every loop over ROUNDS rounds, as JSON
//! ```
//! VARIANT: setup | map | store | store-noevents | store-hashed.

use std::{process::ExitCode, time::Instant};

use idem_bench_cycle::{run, Fixture, Variant, OPS_PER_KEY};

fn usage() -> ExitCode {
    eprintln!("usage: idem-bench-cycle once VARIANT KEYS | time KEYS ROUNDS");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| args.get(i).and_then(|s| s.parse::<usize>().ok());
    match args.first().map(String::as_str) {
        Some("once") => {
            let (Some(variant), Some(n)) = (args.get(1).and_then(|v| Variant::parse(v)), num(2))
            else {
                return usage();
            };
            let fixture = Fixture::new(n);
            let replays = run(&fixture, variant, true);
            if variant != Variant::Setup && replays as usize != n {
                eprintln!("{}: {replays} replays for {n} keys", variant.name());
                return ExitCode::FAILURE;
            }
            std::mem::forget(fixture);
            ExitCode::SUCCESS
        }
        Some("time") => {
            let (Some(n), Some(rounds)) = (num(1), num(2)) else {
                return usage();
            };
            let fixture = Fixture::new(n);
            let mut fields = Vec::new();
            for variant in Variant::ALL.into_iter().skip(1) {
                let mut best = f64::MAX;
                for _ in 0..rounds.max(1) {
                    let start = Instant::now();
                    let replays = run(&fixture, variant, false);
                    best = best.min(start.elapsed().as_nanos() as f64);
                    if replays as usize != n {
                        eprintln!("{}: {replays} replays for {n} keys", variant.name());
                        return ExitCode::FAILURE;
                    }
                }
                let per_op = best / (n as f64 * f64::from(OPS_PER_KEY));
                fields.push(format!("\"{}\": {per_op:.3}", variant.name()));
            }
            println!("{{{}}}", fields.join(", "));
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}
