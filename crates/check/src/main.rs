//! `idem-check`: the command. Reads the configuration file, applies the flags over it, runs
//! both phases, prints the table (and writes JSON and JUnit XML when asked), and exits 0 only
//! when every counted case passed (1 when one failed, 2 when the run could not start).

use std::{io::Write, process::ExitCode, sync::Arc};

use clap::Parser;
use idem_check::{config::Config, Run};

/// Check a server against the idempotency rules idem's SDK relies on.
///
/// The configuration file (JSON) names the target and the request template; see the
/// "Is my server safe for the SDK's retries?" page (docs/check.md) for every field. Flags
/// override the file.
#[derive(Parser, Debug)]
#[command(name = "idem-check", version)]
struct Cli {
    /// The configuration file (JSON).
    #[arg(long, short)]
    config: String,
    /// The server's base URL (overrides `target`).
    #[arg(long)]
    target: Option<String>,
    /// The seed of keys, fresh values and fault draws (default: a random one, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Logical operations in the chaos phase (default: the file's, else 40).
    #[arg(long)]
    operations: Option<usize>,
    /// Chaos operations in flight at once (default: the file's, else 4).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Skip the chaos phase.
    #[arg(long, default_value_t = false)]
    no_chaos: bool,
    /// Write the report as JSON to this file.
    #[arg(long)]
    json: Option<String>,
    /// Write the report as JUnit XML to this file.
    #[arg(long)]
    junit: Option<String>,
    /// Write every line of the chaos phase (proxy decisions, attempts) to this file.
    #[arg(long)]
    log: Option<String>,
    /// Show no progress while the chaos phase runs.
    #[arg(long, default_value_t = false)]
    quiet: bool,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut config = match Config::from_file(&cli.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("idem-check: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(target) = &cli.target {
        config.target.clone_from(target);
    }
    if cli.seed.is_some() {
        config.chaos.seed = cli.seed;
    }
    if let Some(n) = cli.operations {
        config.chaos.operations = n;
    }
    if let Some(n) = cli.concurrency {
        config.chaos.concurrency = n;
    }
    if cli.no_chaos {
        config.chaos.enabled = false;
    }
    if let Err(e) = config.validate() {
        eprintln!("idem-check: {e}");
        return ExitCode::from(2);
    }
    let lines: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let kept = lines.clone();
    let quiet = cli.quiet;
    let mut command = format!("idem-check --config {}", cli.config);
    if let Some(target) = &cli.target {
        command.push_str(&format!(" --target {target}"));
    }
    for (flag, value) in [
        ("--operations", cli.operations),
        ("--concurrency", cli.concurrency),
    ] {
        if let Some(value) = value {
            command.push_str(&format!(" {flag} {value}"));
        }
    }
    if cli.no_chaos {
        command.push_str(" --no-chaos");
    }
    let run = Run {
        config,
        log: Arc::new(move |line| {
            kept.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(line);
        }),
        progress: Box::new(move |settled, total| {
            if !quiet {
                eprint!("\rchaos: {settled}/{total} operations settled");
                if settled == total {
                    eprintln!();
                }
                let _ = std::io::stderr().flush();
            }
        }),
        command,
    };
    let report = match run.run().await {
        Ok(report) => report,
        Err(e) => {
            eprintln!("idem-check: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", report.table());
    let write = |path: &Option<String>, text: String| -> bool {
        match path {
            Some(path) => match std::fs::write(path, text) {
                Ok(()) => true,
                Err(e) => {
                    eprintln!("idem-check: cannot write {path}: {e}");
                    false
                }
            },
            None => true,
        }
    };
    let lines = lines
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .join("\n");
    let written = write(&cli.json, report.json())
        & write(&cli.junit, report.junit())
        & write(&cli.log, lines);
    match (report.passed(), written) {
        (true, true) => ExitCode::SUCCESS,
        (false, _) => ExitCode::from(1),
        (true, false) => ExitCode::from(2),
    }
}
