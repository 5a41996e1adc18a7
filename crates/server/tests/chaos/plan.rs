//! The seed, and everything drawn from it before a run starts: the checkouts (payload, card,
//! shape, start time, each one's own seed for its fault proxy and its clients) and the
//! nemesis's schedule. A proxy draws one fault per connection from its checkout's seed as the
//! connections come, so the k-th connection of checkout n meets the same fault for the same
//! seed. What threads, processes and PostgreSQL do in between is not seeded: a seed replays
//! the schedule, not the interleaving.

use std::fmt;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The environment variable that replaces every run's default seed.
pub const SEED_ENV: &str = "IDEM_CHAOS_SEED";

/// Every claim's lease (`--lock-ms`): short, so stale claims are taken over within a run.
pub const LOCK_MS: u64 = 1_000;
/// How long a client waits for one attempt's answer before it gives up on it and closes the
/// connection (the SDK's `attempt_timeout_ms`).
pub const ATTEMPT_TIMEOUT_MS: u64 = 1_500;
/// How long a held response is held: past the client's attempt timeout.
pub const HOLD_MS: u64 = ATTEMPT_TIMEOUT_MS + 700;
/// How long a client keeps retrying one checkout (the SDK's `retry_window_ms`).
pub const RETRY_WINDOW_MS: u64 = 8_000;
/// How long the nemesis stops a server: longer than a lease, so its claims go stale.
pub const PAUSE_MS: u64 = LOCK_MS + 600;

/// The seeds to run: the one `IDEM_CHAOS_SEED` names when set, else `defaults`.
pub fn seeds(defaults: &[u64]) -> Vec<u64> {
    match std::env::var(SEED_ENV) {
        Ok(text) => vec![text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_ENV}={text:?} is not a u64"))],
        Err(_) => defaults.to_vec(),
    }
}

/// A run's size.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Logical checkouts.
    pub checkouts: usize,
    /// Their start times are spread over this many ms.
    pub spread_ms: u64,
    /// `serve` processes (the nemesis picks among them).
    pub servers: usize,
    /// Whether the nemesis acts at all.
    pub nemesis: bool,
}

impl Sizes {
    /// A run's size: `careful` clients (36 checkouts over 11 s, the nemesis on) or the
    /// control's (16 over 4 s, no nemesis), on `servers` servers.
    pub fn of_run(careful: bool, servers: usize) -> Sizes {
        Sizes {
            checkouts: if careful { 36 } else { 16 },
            spread_ms: if careful { 11_000 } else { 4_000 },
            servers,
            nemesis: careful,
        }
    }
}

/// What one checkout pays for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payload {
    /// Unique in the run: the checker finds a checkout's orders by it.
    pub cart: String,
    pub amount: i64,
    /// `tok_visa` (charged) or `tok_decline` (PayCo declines it, always).
    pub card: &'static str,
}

impl Payload {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({ "cart": self.cart, "amount": self.amount, "card": self.card })
    }
}

/// How a checkout's client behaves.
#[derive(Clone, Debug)]
pub enum Shape {
    /// One operation.
    Single,
    /// Pay pressed twice: two operations of one journal entry (one key, the same bytes),
    /// sent concurrently.
    DoubleClick,
    /// Another payload sent under the same key `after_ms` after the first operation started:
    /// a page that reuses a key, or a second device.
    OtherPayload { after_ms: u64, other: Payload },
}

/// One logical checkout.
#[derive(Clone, Debug)]
pub struct CheckoutPlan {
    pub index: usize,
    pub start_ms: u64,
    pub payload: Payload,
    pub shape: Shape,
    /// Its fault proxy's and its clients' generator.
    pub seed: u64,
}

impl CheckoutPlan {
    /// `c07`: how the log names it.
    pub fn label(&self) -> String {
        format!("c{:02}", self.index)
    }
}

/// What the nemesis does to one `serve`.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    /// SIGKILL, then the same command on the same port and database after `restart_after_ms`.
    Kill { restart_after_ms: u64 },
    /// SIGSTOP for `ms` (longer than a lease), then SIGCONT.
    Pause { ms: u64 },
    /// Arm the checkpoint `step` process-wide with the verdict `action` for `ms`, on the
    /// `serve` (the checkout's points and `relay-after-send`) or on the receipts service
    /// (`consumer-after-effect`): `hang` (a request stops there holding its claim until its
    /// client gives up; the relay's pass stops there), `crash` (the process
    /// aborts; it is restarted), `drop` (the work stops there and the connection closes
    /// unanswered), `hold:MS` (it waits, then carries on) or `unavailable` (a 503 there; after
    /// the claim, the claim is left in flight).
    Failpoint {
        step: &'static str,
        action: &'static str,
        ms: u64,
    },
}

/// One nemesis action at a time of the run.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub at_ms: u64,
    pub server: usize,
    pub action: Action,
}

/// Everything a seed decides before the run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub seed: u64,
    pub checkouts: Vec<CheckoutPlan>,
    pub nemesis: Vec<Event>,
    /// `serve --wait-ms`: wait mode (a duplicate of a checkout in flight waits for its answer
    /// instead of a 409) in about half the runs, the wait below or above what a held answer
    /// and a lease take; `None`: 409 at once.
    pub wait_ms: Option<u64>,
}

/// Every checkpoint of the checkout (`checkout::checkpoint::Point`).
const STEPS: [&str; 5] = [
    "arrival",
    "after-claim",
    "after-charge",
    "before-commit",
    "after-commit",
];

/// The checkpoints of the outbox's delivery: the relay's (on a `serve`) and the consumer's
/// (on the receipts service). A failpoint event picks one of them instead of a checkout's
/// point 2 times in 7, as if all seven were drawn alike.
pub const DELIVERY_STEPS: [&str; 2] = ["relay-after-send", "consumer-after-effect"];

/// Every point the nemesis may arm (the test `the_nemesis_draws_every_checkpoint` holds this
/// to `checkout::checkpoint::Point::ALL`).
pub fn every_step() -> impl Iterator<Item = &'static str> {
    STEPS.into_iter().chain(DELIVERY_STEPS)
}

/// What a failpoint event may arm, with its share of those events: every verdict of the
/// checkpoints but `panic` (a 500 by design; see `nemesis.rs`).
const VERDICTS: [(&str, u32); 5] = [
    ("hang", 25),
    ("crash", 25),
    ("drop", 20),
    ("hold:800", 15),
    ("unavailable", 15),
];

/// The verdict whose share of [`VERDICTS`] holds `draw` (0..100).
fn verdict(draw: u32) -> &'static str {
    let mut below = 0;
    for (verdict, share) in VERDICTS {
        below += share;
        if draw < below {
            return verdict;
        }
    }
    VERDICTS[0].0
}

impl Plan {
    pub fn draw(seed: u64, sizes: Sizes) -> Plan {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut checkouts: Vec<CheckoutPlan> = (0..sizes.checkouts)
            .map(|index| {
                // Every run has every combination of card and shape (4 × 3 divides the
                // count): a quarter of the checkouts decline, a third are double clicks, a
                // third send another payload under their key. The seed decides the rest.
                let payload = Payload {
                    cart: format!("cart-{index:02}"),
                    amount: 1_000 + index as i64,
                    card: if index % 4 == 0 {
                        "tok_decline"
                    } else {
                        "tok_visa"
                    },
                };
                let shape = match index % 3 {
                    1 => Shape::DoubleClick,
                    2 => Shape::OtherPayload {
                        after_ms: rng.random_range(0..=1_500),
                        other: Payload {
                            cart: format!("cart-{index:02}-other"),
                            amount: 5_000 + index as i64,
                            card: if rng.random_bool(0.2) {
                                "tok_decline"
                            } else {
                                "tok_visa"
                            },
                        },
                    },
                    _ => Shape::Single,
                };
                CheckoutPlan {
                    index,
                    start_ms: rng.random_range(0..=sizes.spread_ms),
                    payload,
                    shape,
                    seed: rng.next_u64(),
                }
            })
            .collect();
        checkouts.sort_by_key(|c| c.start_ms);
        let mut nemesis = Vec::new();
        // The verdicts come from a stream of their own, so the seed's other draws (its
        // checkouts, its nemesis times and servers, its wait mode) stay what they were.
        let mut verdicts = ChaCha8Rng::seed_from_u64(seed ^ 0x7e7d_1c75);
        // And the outbox's points from another, for the same reason.
        let mut delivery = ChaCha8Rng::seed_from_u64(seed ^ 0x0b0c_5e1d);
        let mut at_ms = 800;
        while sizes.nemesis && at_ms < sizes.spread_ms + RETRY_WINDOW_MS / 2 {
            let action = match rng.random_range(0..100) {
                0..30 => Action::Kill {
                    restart_after_ms: rng.random_range(50..=400),
                },
                30..55 => Action::Pause { ms: PAUSE_MS },
                _ => {
                    let checkout_step = STEPS[rng.random_range(0..STEPS.len())];
                    let step = if delivery.random_ratio(2, 7) {
                        DELIVERY_STEPS[delivery.random_range(0..DELIVERY_STEPS.len())]
                    } else {
                        checkout_step
                    };
                    Action::Failpoint {
                        step,
                        action: verdict(verdicts.random_range(0..100)),
                        ms: 1_200,
                    }
                }
            };
            nemesis.push(Event {
                at_ms,
                server: rng.random_range(0..sizes.servers),
                action,
            });
            at_ms += rng.random_range(1_500..=2_800);
        }
        // Drawn last, so the checkouts and the nemesis of a seed are what they were before
        // wait mode existed.
        let wait_ms = rng.random_bool(0.5).then(|| rng.random_range(300..=1_400));
        Plan {
            seed,
            checkouts,
            nemesis,
            wait_ms,
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}", self.seed)?;
        match self.wait_ms {
            Some(ms) => writeln!(
                f,
                "  wait mode: duplicates wait up to {ms} ms for the answer"
            )?,
            None => writeln!(f, "  no wait mode: a duplicate in flight is answered 409")?,
        }
        for c in &self.checkouts {
            let p = &c.payload;
            write!(
                f,
                "  {} at {} ms: {} {} {}",
                c.label(),
                c.start_ms,
                p.cart,
                p.amount,
                p.card
            )?;
            match &c.shape {
                Shape::Single => writeln!(f)?,
                Shape::DoubleClick => writeln!(f, ", double click")?,
                Shape::OtherPayload { after_ms, other } => writeln!(
                    f,
                    ", then {} {} {} under the same key {after_ms} ms later",
                    other.cart, other.amount, other.card
                )?,
            }
        }
        for e in &self.nemesis {
            writeln!(
                f,
                "  nemesis at {} ms on serve{}: {:?}",
                e.at_ms, e.server, e.action
            )?;
        }
        Ok(())
    }
}
