//! idem-check: checks any HTTP server (Express, Django, Rails, Go, idem-server) against the
//! idempotency rules idem's SDK relies on when it retries a payment.
//!
//! What it does: from a target URL and a request template ([`config`]), a **conformance
//! phase** ([`cases`]) sends one logical operation per rule (fresh values, a fresh key) and
//! checks the answers and, given an effect observer ([`effects`]), the effects: the first
//! request runs once; its repeat is the same answer, marked, with no second effect; another
//! body or endpoint under the key is 422; key limits; a missing key is 400; tenants do not
//! share keys; a concurrent duplicate gets 409 with `Retry-After` or waits for the replay;
//! errors are RFC 9457 problems; CORS lets a browser page use the headers. Then a **chaos
//! phase** ([`chaos`]) drives many operations with idem's SDK itself through its own fault
//! proxy ([`proxy`]: dropped requests and answers, held answers, duplicates, cut
//! connections) and counts the effects. Every case states its basis (required, needed by the
//! SDK, advisory) and the [`report`] is a table, JSON and JUnit XML; the run passes only when
//! every counted case does.
//!
//! What it does not do: read the server's code or database (it sees only HTTP and the effect
//! observer), prove a rule (a pass means these exchanges went right, seeded and reproducible),
//! or send anywhere but the configured target and its own loopback proxy.
#![warn(missing_docs)]

pub mod cases;
pub mod chaos;
pub mod config;
pub mod effects;
pub mod exchange;
pub mod proxy;
pub mod report;

use config::Config;
use effects::Observer;
use exchange::Target;
use proxy::LogSink;
use report::Report;

/// How a run was asked for: the seed (drawn when absent), where the lines of the chaos phase
/// go, how progress is shown, and the command line that reruns it.
pub struct Run {
    /// The configuration.
    pub config: Config,
    /// Where the proxy's and the clients' lines go.
    pub log: LogSink,
    /// Called as chaos operations settle: `(settled, total)`.
    pub progress: Box<dyn Fn(usize, usize) + Send + Sync>,
    /// The command line that reruns this run, without its seed.
    pub command: String,
}

impl Run {
    /// A run of `config` that logs and shows nothing.
    pub fn quiet(config: Config) -> Run {
        Run {
            config,
            log: std::sync::Arc::new(|_| {}),
            progress: Box::new(|_, _| {}),
            command: "idem-check".to_owned(),
        }
    }

    /// Both phases; the report.
    pub async fn run(self) -> Result<Report, String> {
        let seed = self.config.chaos.seed.unwrap_or_else(random_seed);
        let target = Target::new(self.config.clone())?;
        let observer = self
            .config
            .effects
            .clone()
            .map(|effects| Observer::new(effects, &self.config.target));
        if let Some(setup) = &self.config.setup {
            let op = exchange::Fresh::new(seed, 0);
            let answer = target.send(target.endpoint(setup, &op, None)).await;
            match answer.answer() {
                Ok(a) if a.is_success() => {}
                Ok(a) => {
                    return Err(format!(
                        "the setup request got {}:\n{}",
                        a.status,
                        answer.render()
                    ))
                }
                Err(e) => return Err(e),
            }
        }
        let mut cases = cases::Conformance::new(&target, observer.as_ref(), seed)
            .run()
            .await;
        cases.extend(
            chaos::run(
                &target,
                observer.as_ref(),
                seed,
                self.log.clone(),
                &*self.progress,
            )
            .await,
        );
        Ok(Report {
            target: self.config.target.clone(),
            seed,
            cases,
            rerun: format!("{} --seed {seed}", self.command),
        })
    }
}

/// A seed when none was asked for, from the system's randomness (a v4 UUID's bits).
fn random_seed() -> u64 {
    uuid::Uuid::new_v4().as_u64_pair().0
}
