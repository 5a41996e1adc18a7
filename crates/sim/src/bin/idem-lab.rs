//! idem-lab: the lesson's table, swarm sweeps, the benchmark and replays, from the command line.
//!
//! ```text
//! idem-lab --seed 1 --orders 100 [--preset lesson] [--bug NAME]... [--config FILE] [--json]
//! idem-lab sweep --seeds 1000 --orders 100 [--first-seed 1] [--bug NAME]... [--json]
//! idem-lab bench [--checkouts 1000000] [--batch 100000] [--json]
//! idem-lab replay history.json [--json]
//! ```

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::process::ExitCode;

    use clap::{Args, Parser, Subcommand};
    use idem_sim::lab::table::ConfigSource;
    use idem_sim::lab::{bench, sweep, table};
    use idem_sim::{bug, presets, Bug, HistoryExport, SimConfig, World};

    /// `--preset`'s help, from the preset table.
    fn preset_help() -> String {
        format!("Fault preset (default lesson): {}", presets::names())
    }

    /// `--preset`'s long help (`--help`): every preset and what it does.
    fn preset_long_help() -> String {
        format!("Fault preset (default lesson):\n{}", presets::help())
    }

    /// `--bug`'s help, from the bug list.
    fn bug_help() -> String {
        format!("Switch a classic bug on (repeatable): {}", bug::names())
    }

    /// `--bug`'s long help (`--help`): every bug and what it does.
    fn bug_long_help() -> String {
        format!("Switch a classic bug on (repeatable):\n{}", bug::help())
    }

    /// The idem simulator's lab.
    #[derive(Parser, Debug)]
    #[command(name = "idem-lab", version, about)]
    struct Cli {
        #[command(subcommand)]
        command: Option<Sub>,
        #[command(flatten)]
        table: TableArgs,
    }

    #[derive(Args, Debug)]
    struct TableArgs {
        /// The seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Checkouts per strategy.
        #[arg(long)]
        orders: Option<u32>,
        #[arg(long, conflicts_with = "config", help = preset_help(), long_help = preset_long_help())]
        preset: Option<String>,
        /// A SimConfig as JSON (missing fields take their defaults).
        #[arg(long)]
        config: Option<String>,
        #[arg(long = "bug", help = bug_help(), long_help = bug_long_help())]
        bugs: Vec<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    }

    #[derive(Subcommand, Debug)]
    enum Sub {
        /// Swarm testing: many seeds, fault rates drawn per seed, correct store expected clean.
        Sweep {
            /// Number of seeds.
            #[arg(long, default_value_t = 1000)]
            seeds: u64,
            /// First seed.
            #[arg(long, default_value_t = 1)]
            first_seed: u64,
            /// Checkouts per seed.
            #[arg(long, default_value_t = 100)]
            orders: u32,
            #[arg(long = "bug", help = bug_help(), long_help = bug_long_help())]
            bugs: Vec<String>,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// Simulated checkouts per second, and the same store work alone.
        Bench {
            /// Checkouts to simulate.
            #[arg(long, default_value_t = 1_000_000)]
            checkouts: u64,
            /// Checkouts per world.
            #[arg(long, default_value_t = 100_000)]
            batch: u32,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// Re-run an exported history (JSON from `World::export`): exits non-zero when the
        /// hash differs or the replayed run breaks an invariant; invalid recorded inputs are an
        /// error (exit 2).
        Replay {
            /// The exported history.
            file: String,
            /// Print the counts and the verdict as JSON.
            #[arg(long)]
            json: bool,
        },
    }

    fn parse_bugs(names: &[String]) -> Result<Vec<Bug>, String> {
        names
            .iter()
            .map(|n| n.parse::<Bug>().map_err(|e| e.to_string()))
            .collect()
    }

    fn to_json<T: serde::Serialize>(v: &T) -> Result<String, String> {
        serde_json::to_string_pretty(v).map_err(|e| e.to_string())
    }

    fn lab(args: TableArgs) -> Result<bool, String> {
        let (mut config, source) = match (&args.config, &args.preset) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read config {path}: {e}"))?;
                (
                    SimConfig::from_json(&text).map_err(|e| e.to_string())?,
                    ConfigSource::File(path.clone()),
                )
            }
            (None, p) => {
                let name = p.clone().unwrap_or_else(|| "lesson".to_owned());
                (
                    presets::preset(&name).map_err(|e| e.to_string())?,
                    ConfigSource::Preset(name),
                )
            }
        };
        if let Some(seed) = args.seed {
            config.seed = seed;
        }
        if let Some(orders) = args.orders {
            config.workload.orders = orders;
        }
        for b in parse_bugs(&args.bugs)? {
            if !config.bugs.contains(&b) {
                config.bugs.push(b);
            }
        }
        let t = table::run_table(&config, Some(&source));
        if args.json {
            println!("{}", to_json(&t)?);
        } else {
            print!("{}", t.render());
        }
        Ok(true)
    }

    fn run(cli: Cli) -> Result<bool, String> {
        match cli.command {
            None => lab(cli.table),
            Some(Sub::Sweep {
                seeds,
                first_seed,
                orders,
                bugs,
                json,
            }) => {
                let bugs = parse_bugs(&bugs)?;
                let report = sweep::sweep(first_seed, seeds, orders, &bugs, usize::MAX);
                if json {
                    println!("{}", to_json(&report)?);
                } else {
                    println!(
                        "{} seeds × {} orders: {} with violations; {} unknown outcomes reported, {} unresolved after reconciliation",
                        report.seeds,
                        orders,
                        report.failures.len(),
                        report.unknown,
                        report.unresolved
                    );
                    for v in &report.failures {
                        let mut kinds: Vec<&str> = v.violations.iter().map(|x| x.name()).collect();
                        kinds.dedup();
                        println!(
                            "seed {}: {} — reproduce: {}",
                            v.seed,
                            kinds.join(", "),
                            v.reproduce
                        );
                    }
                }
                Ok(report.failures.is_empty() || !bugs.is_empty())
            }
            Some(Sub::Bench {
                checkouts,
                batch,
                json,
            }) => {
                let r = bench::run_bench(checkouts, batch.max(1));
                if json {
                    println!("{}", to_json(&r)?);
                } else {
                    print!("{}", r.render());
                }
                Ok(r.double_charged == 0)
            }
            Some(Sub::Replay { file, json }) => {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read {file}: {e}"))?;
                let export: HistoryExport = serde_json::from_str(&text)
                    .map_err(|e| format!("invalid history {file}: {e}"))?;
                let world =
                    World::replay(&export).map_err(|e| format!("invalid history {file}: {e}"))?;
                let report = ReplayReport::of(&export, &world);
                if json {
                    println!("{}", to_json(&report)?);
                } else {
                    print!("{}", report.render());
                }
                // A replay fails when the history differs or when the run breaks an invariant.
                Ok(report.identical && report.clean)
            }
        }
    }

    /// The kinds of `violations`, each once, in first-seen order.
    fn distinct_names(violations: &[idem_sim::Violation]) -> Vec<&'static str> {
        let mut names = Vec::new();
        for v in violations {
            if !names.contains(&v.name()) {
                names.push(v.name());
            }
        }
        names
    }

    /// What `replay` reports: whether the history is identical, the replayed run's counts and
    /// the checker's verdict (with the invariants' names, so a page can compare its badges).
    #[derive(serde::Serialize)]
    struct ReplayReport {
        seed: u64,
        identical: bool,
        hash: String,
        export_hash: String,
        events_run: u64,
        finished: bool,
        counters: idem_sim::Counters,
        charges: usize,
        double_charged: u64,
        clean: bool,
        violations: Vec<&'static str>,
        verdict: idem_sim::Verdict,
    }

    impl ReplayReport {
        fn of(export: &HistoryExport, world: &World) -> ReplayReport {
            let verdict = world.verdict();
            let hash = world.history_hash();
            ReplayReport {
                seed: export.config.seed,
                identical: hash == export.hash,
                hash,
                export_hash: export.hash.clone(),
                events_run: world.events_run(),
                finished: export.finished,
                counters: world.counters(),
                charges: world.charges(),
                double_charged: world.double_charged(),
                clean: verdict.is_clean(),
                violations: distinct_names(&verdict.violations),
                verdict,
            }
        }

        fn render(&self) -> String {
            let c = &self.counters;
            let mut out = if self.identical {
                format!(
                    "replayed seed {}: identical history ({})\n",
                    self.seed, self.hash
                )
            } else {
                format!(
                    "replayed seed {}: history differs (export {}, replay {})\n",
                    self.seed, self.export_hash, self.hash
                )
            };
            out.push_str(&format!(
                "events {} · checkouts {} · attempts {} · charges {} · double-charged orders {} · 409 {} · 422 {} · takeovers {} · fenced {} · unknown {}\n",
                self.events_run, c.checkouts, c.attempts, self.charges, self.double_charged,
                c.conflicts, c.mismatches, c.takeovers, c.fenced, c.unknown
            ));
            if self.clean {
                out.push_str("invariants: all hold (≤ 1 charge per order, replays identical, nothing stuck, answers agree with PayCo)\n");
            } else {
                out.push_str(&format!(
                    "invariants broken: {}\n",
                    self.violations.join(", ")
                ));
            }
            out
        }
    }

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        match run(cli) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
