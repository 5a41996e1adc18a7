//! Pause conditions and promised effects: predicates the world can evaluate cheaply (counters,
//! PayCo's totals, the checker's capped violation list), so they run after every event.

use crate::checker::Violation;
use crate::world::World;

/// When a scenario pauses: the first moment this holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    /// The store replayed a saved answer.
    FirstReplay,
    /// The script is done and every checkout ended (paid, refused or unknown).
    Settled,
    /// PayCo answered a charge from its key table: no money moved.
    Deduped,
    /// The store answered 409 (in flight).
    Conflict,
    /// The store answered 422 (same key, other request).
    Mismatch,
    /// A stale claim was taken over.
    TakenOver,
    /// A zombie's write was refused.
    Fenced,
    /// Some order was charged twice.
    DoubleCharge,
    /// A client got an answer that differs from the first one under its key, or answers other
    /// parameters than it sent.
    WrongAnswer,
    /// A page's attempt timed out: it got no answer and cannot tell what happened.
    TimedOut,
    /// The outbox's consumer sent an order its second receipt.
    DuplicateReceipt,
    /// The outbox's consumer skipped a delivery whose message id it had handled.
    RedeliverySkipped,
    /// Virtual time reached this many milliseconds.
    At(u64),
}

/// A promised effect, checked at the pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// PayCo moved money exactly this many times.
    Charges(u32),
    /// Whether some order was charged twice.
    DoubleCharged(bool),
    /// At least this many requests were sent.
    AttemptsAtLeast(u32),
    /// The store replayed a saved answer.
    Replayed,
    /// A 409 was answered.
    Conflict,
    /// A 422 was answered.
    Mismatch,
    /// A stale claim was taken over.
    TakenOver,
    /// A zombie's write was refused.
    Fenced,
    /// PayCo deduped a charge on its key.
    Deduped,
    /// Whether a client saw a wrong or differing answer.
    WrongAnswer(bool),
    /// The expired-key guard refused a request (412).
    KeyExpired,
    /// A page gave up with an unknown outcome.
    Unknown,
    /// The outbox's consumer sent exactly this many receipts.
    Receipts(u32),
    /// Whether some order got a second receipt.
    DuplicateReceipt(bool),
    /// The consumer skipped a redelivered message.
    RedeliverySkipped,
}

fn wrong_answer(world: &World) -> bool {
    world.violations().iter().any(|v| {
        matches!(
            v,
            Violation::ReplayDiffers { .. } | Violation::WrongAnswer { .. }
        )
    })
}

impl Pause {
    /// True when the pause condition holds (`script_done`: no scripted control is left).
    pub fn holds(&self, world: &World, script_done: bool) -> bool {
        let c = world.counters();
        match *self {
            Pause::FirstReplay => c.replays > 0,
            Pause::Settled => {
                script_done && c.checkouts > 0 && c.paid + c.rejected + c.unknown >= c.checkouts
            }
            Pause::Deduped => c.deduped > 0,
            Pause::Conflict => c.conflicts > 0,
            Pause::Mismatch => c.mismatches > 0,
            Pause::TakenOver => c.takeovers > 0,
            Pause::Fenced => c.fenced > 0,
            Pause::DoubleCharge => world.double_charged() > 0,
            Pause::WrongAnswer => wrong_answer(world),
            Pause::DuplicateReceipt => c.duplicate_receipts > 0,
            Pause::RedeliverySkipped => c.redeliveries_skipped > 0,
            Pause::TimedOut => c.timeouts > 0,
            Pause::At(t) => world.now() >= t,
        }
    }
}

impl Effect {
    /// True when the effect shows in `world`.
    pub fn holds(&self, world: &World) -> bool {
        let c = world.counters();
        match *self {
            Effect::Charges(n) => world.charges() == n as usize,
            Effect::DoubleCharged(b) => (world.double_charged() > 0) == b,
            Effect::AttemptsAtLeast(n) => c.attempts >= u64::from(n),
            Effect::Replayed => c.replays > 0,
            Effect::Conflict => c.conflicts > 0,
            Effect::Mismatch => c.mismatches > 0,
            Effect::TakenOver => c.takeovers > 0,
            Effect::Fenced => c.fenced > 0,
            Effect::Deduped => c.deduped > 0,
            Effect::WrongAnswer(b) => wrong_answer(world) == b,
            Effect::KeyExpired => c.key_expired > 0,
            Effect::Unknown => c.unknown > 0,
            Effect::Receipts(n) => c.receipts == u64::from(n),
            Effect::DuplicateReceipt(b) => (c.duplicate_receipts > 0) == b,
            Effect::RedeliverySkipped => c.redeliveries_skipped > 0,
        }
    }
}
