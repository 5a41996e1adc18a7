//! The checkout's phases after its claim, as a state machine driven by its caller: each input
//! (`order_ready`, `charged`, `settled`, …) returns the next [`Step`] to perform, and the caller
//! performs it and feeds back what happened. The same machine runs in the simulator (each step
//! an event in virtual time) and in idem-server (each step SQL or HTTP).
//!
//! ```text
//! claimed ─ resume(point) ─▶ ResumeOrder ─ order_ready ─┐
//!    │            └───────▶ CreateOrder ─ order_ready ─┤
//!    └──────────── order_ready (created with the claim) ┴▶ Charge ─ charged ─┬▶ Settle ─ settled ─▶ Answer
//!                                                                            └▶ Release ─ released ─▶ Answer (502)
//! ```

use idem_store::http::{self, HttpResponse};

use crate::answer::{self, Receipt};
use crate::request::CheckoutRequest;

/// What the caller does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Create the order `pending` (in the claim's transaction, its id the recovery point),
    /// then [`Checkout::order_ready`].
    CreateOrder,
    /// Read the order the claim's recovery point names, then [`Checkout::order_ready`] with
    /// it, or [`Checkout::order_missing`] if there is no such order.
    ResumeOrder(i64),
    /// Charge PayCo, outside any transaction, then [`Checkout::charged`].
    Charge(ChargeCall),
    /// Record the order's outcome and end the claim with the answer, fenced and together,
    /// then [`Checkout::settled`].
    Settle(Settle),
    /// PayCo's outcome is unknown: save nothing, release the claim (fenced), then
    /// [`Checkout::released`].
    Release,
    /// Send this answer; the work is over.
    Answer(HttpResponse),
}

/// A charge to ask PayCo for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeCall {
    /// `charge:<order>`: every worker of the order charges under it.
    pub key: String,
    /// The order paid for.
    pub order: i64,
    /// Cents.
    pub amount: i64,
    /// The card token.
    pub card: String,
}

/// What PayCo answered, as the caller understood it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeOutcome {
    /// Charged (now, or earlier under the same key): PayCo's charge id.
    Charged {
        /// `ch_<n>`.
        charge: String,
    },
    /// Declined, now or earlier under the same key.
    Declined,
    /// No answer the caller can rely on (timeout, connection lost, garbled reply): money may
    /// or may not have moved.
    Unknown {
        /// Why, for the 502's detail.
        reason: String,
    },
}

/// The order's outcome, written with the claim's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderStatus {
    /// Paid by this charge.
    Paid {
        /// PayCo's charge id.
        charge: String,
    },
    /// The card was declined.
    Declined,
}

impl OrderStatus {
    /// The `orders.status` value.
    pub fn name(&self) -> &'static str {
        match self {
            OrderStatus::Paid { .. } => "paid",
            OrderStatus::Declined => "declined",
        }
    }

    /// The `orders.charge_id` value.
    pub fn charge(&self) -> Option<&str> {
        match self {
            OrderStatus::Paid { charge } => Some(charge),
            OrderStatus::Declined => None,
        }
    }
}

/// How the work ended, for the claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It succeeded: save the answer for replay.
    Success,
    /// It failed for good (a declined card): the route's declared error policy decides
    /// between saving the answer and releasing the claim (`idem_store::rules::finish`).
    Failure,
}

/// The settlement the caller writes, fenced by the claim's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settle {
    /// The order.
    pub order: i64,
    /// Its outcome.
    pub status: OrderStatus,
    /// The first answer: saved with it, or (a failure under `release-claim`) only sent.
    pub answer: HttpResponse,
    /// Which end of the claim.
    pub ending: Ending,
}

/// How the settlement's write went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The order and the claim's end committed together.
    Committed,
    /// The lease had been taken over: nothing written; the new owner's answer will be
    /// replayed.
    Fenced,
}

/// Where the work is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Claimed; no order yet.
    Claimed,
    /// Waiting for PayCo's answer on the order.
    Charging { order: i64 },
    /// Waiting for the settlement's write.
    Settling { answer: HttpResponse },
    /// Waiting for the release.
    Releasing { reason: String },
    /// Answered.
    Done,
}

/// One checkout's work under its claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    amount: i64,
    card: String,
    phase: Phase,
}

impl Checkout {
    /// The work of `request`, just claimed.
    pub fn new(request: &CheckoutRequest) -> Checkout {
        Checkout {
            amount: request.amount,
            card: request.card.clone(),
            phase: Phase::Claimed,
        }
    }

    /// The claim was taken over or claimed again after a release: resume the order its
    /// recovery point names, or create one if it names none.
    pub fn resume(&mut self, point: Option<i64>) -> Step {
        match (&self.phase, point) {
            (Phase::Claimed, Some(order)) => Step::ResumeOrder(order),
            (Phase::Claimed, None) => Step::CreateOrder,
            _ => self.misused(),
        }
    }

    /// The recovery point named an order that is not there (a hand-edited table): a new one
    /// is made, and PayCo's key for it is new too.
    pub fn order_missing(&mut self) -> Step {
        match self.phase {
            Phase::Claimed => Step::CreateOrder,
            _ => self.misused(),
        }
    }

    /// The work's order exists, created or resumed: charge PayCo for it under its key.
    pub fn order_ready(&mut self, order: i64) -> Step {
        if self.phase != Phase::Claimed {
            return self.misused();
        }
        self.phase = Phase::Charging { order };
        Step::Charge(ChargeCall {
            key: crate::charge_key(order),
            order,
            amount: self.amount,
            card: self.card.clone(),
        })
    }

    /// PayCo answered (or did not) at `now`: settle the order, or release the claim.
    pub fn charged(&mut self, outcome: ChargeOutcome, now: u64) -> Step {
        let Phase::Charging { order } = self.phase else {
            return self.misused();
        };
        let (status, answer, ending) = match outcome {
            ChargeOutcome::Charged { charge } => {
                let answer = Receipt::paid(order, &charge, self.amount, now).answer();
                (OrderStatus::Paid { charge }, answer, Ending::Success)
            }
            // PayCo saved its decline under the order's key: final for this checkout.
            ChargeOutcome::Declined => (
                OrderStatus::Declined,
                answer::declined(order),
                Ending::Failure,
            ),
            ChargeOutcome::Unknown { reason } => {
                // Whatever the route's policy: an answer that does not know the outcome is
                // never saved. The retry resumes the order and asks PayCo again.
                self.phase = Phase::Releasing { reason };
                return Step::Release;
            }
        };
        self.phase = Phase::Settling {
            answer: answer.clone(),
        };
        Step::Settle(Settle {
            order,
            status,
            answer,
            ending,
        })
    }

    /// The settlement's write: its answer, or the lease-lost 409 when another worker owns the
    /// claim now (its answer is the one that will be replayed).
    pub fn settled(&mut self, settled: Settled) -> Step {
        let Phase::Settling { answer } = std::mem::replace(&mut self.phase, Phase::Done) else {
            return self.misused();
        };
        Step::Answer(match settled {
            Settled::Committed => answer,
            Settled::Fenced => http::lease_lost(),
        })
    }

    /// The claim is released (or was already taken over): the 502 that says the outcome is
    /// unknown; the client retries under the same key.
    pub fn released(&mut self) -> Step {
        let Phase::Releasing { reason } = std::mem::replace(&mut self.phase, Phase::Done) else {
            return self.misused();
        };
        Step::Answer(answer::outcome_unknown(&reason))
    }

    /// An input out of order is the driver's bug; it ends the work with a 500 rather than a
    /// panic.
    fn misused(&mut self) -> Step {
        debug_assert!(false, "checkout input out of order in {:?}", self.phase);
        self.phase = Phase::Done;
        Step::Answer(http::internal_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn request() -> CheckoutRequest {
        CheckoutRequest {
            cart: "c-1".to_owned(),
            amount: 4200,
            card: "tok_visa".to_owned(),
        }
    }

    fn charging(order: i64) -> Checkout {
        let mut c = Checkout::new(&request());
        let Step::Charge(call) = c.order_ready(order) else {
            panic!("not charging");
        };
        assert_eq!(
            call,
            ChargeCall {
                key: "charge:7".to_owned(),
                order: 7,
                amount: 4200,
                card: "tok_visa".to_owned()
            }
        );
        c
    }

    #[test]
    fn a_paid_order_is_settled_with_its_receipt_and_answered() {
        let mut c = charging(7);
        let outcome = ChargeOutcome::Charged {
            charge: "ch_9".to_owned(),
        };
        let Step::Settle(settle) = c.charged(outcome, 55) else {
            panic!("not settling");
        };
        assert_eq!(
            settle.status,
            OrderStatus::Paid {
                charge: "ch_9".into()
            }
        );
        assert_eq!(
            (settle.status.name(), settle.status.charge()),
            ("paid", Some("ch_9"))
        );
        assert_eq!(settle.ending, Ending::Success);
        assert_eq!(
            Receipt::from_body(&settle.answer.body),
            Some(Receipt::paid(7, "ch_9", 4200, 55))
        );
        assert_eq!(c.settled(Settled::Committed), Step::Answer(settle.answer));
    }

    #[test]
    fn a_decline_is_a_failure_the_policy_ends() {
        let mut c = charging(7);
        let Step::Settle(settle) = c.charged(ChargeOutcome::Declined, 1) else {
            panic!("not settling");
        };
        assert_eq!(
            (settle.status.name(), settle.status.charge()),
            ("declined", None)
        );
        assert_eq!(
            (settle.ending, settle.answer.status),
            (Ending::Failure, 402)
        );
    }

    #[test]
    fn an_unknown_outcome_releases_and_answers_502_never_saved() {
        let mut c = charging(7);
        let unknown = ChargeOutcome::Unknown {
            reason: "PayCo timed out".to_owned(),
        };
        assert_eq!(c.charged(unknown, 1), Step::Release);
        let Step::Answer(answer) = c.released() else {
            panic!("no answer");
        };
        assert_eq!(answer.status, 502);
        assert!(String::from_utf8_lossy(&answer.body).contains("PayCo timed out"));
    }

    #[test]
    fn a_fenced_settlement_answers_lease_lost_never_its_own_result() {
        let mut c = charging(7);
        let outcome = ChargeOutcome::Charged {
            charge: "ch_1".to_owned(),
        };
        assert!(matches!(c.charged(outcome, 1), Step::Settle(_)));
        assert_eq!(c.settled(Settled::Fenced), Step::Answer(http::lease_lost()));
    }

    #[test]
    fn a_resumed_claim_works_on_its_recovery_points_order() {
        let mut c = Checkout::new(&request());
        assert_eq!(c.resume(Some(7)), Step::ResumeOrder(7));
        assert!(matches!(c.order_ready(7), Step::Charge(call) if call.key == "charge:7"));
        let mut lost = Checkout::new(&request());
        assert_eq!(lost.resume(Some(7)), Step::ResumeOrder(7));
        assert_eq!(
            lost.order_missing(),
            Step::CreateOrder,
            "the point's order is gone"
        );
        let mut fresh = Checkout::new(&request());
        assert_eq!(fresh.resume(None), Step::CreateOrder);
    }
}
