//! The history's hash: SHA-256 over a canonical, platform-independent encoding (fixed-width
//! little-endian integers, tags as bytes), so the same run gives the same hash natively and on
//! wasm32 (`tests/golden/history-hashes.txt` pins three).

use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::messages::{
    Decision, Fate, Message, MessageKind, PaycoDecision, Step, StepKind, WorkEnd,
};
use super::{AttemptResult, CheckoutOutcome, History};
use crate::payco::{Charge, ChargeId};
use crate::receipt::Receipt;

/// Canonical, platform-independent bytes: fixed-width little-endian integers, tags as bytes.
struct Canon(Sha256);

impl Canon {
    fn u8(&mut self, v: u8) {
        self.0.update([v]);
    }
    fn u64(&mut self, v: u64) {
        self.0.update(v.to_le_bytes());
    }
    fn key(&mut self, k: &Option<Uuid>) {
        match k {
            None => self.u8(0),
            Some(u) => {
                self.u8(1);
                self.0.update(u.as_bytes());
            }
        }
    }
    fn receipt(&mut self, r: &Receipt) {
        self.u64(r.order.0);
        self.u64(r.charge.0);
        self.u64(u64::from(r.amount));
        self.u64(r.served_at);
    }
    fn charge(&mut self, id: Option<ChargeId>) {
        match id {
            None => self.u8(0),
            Some(id) => {
                self.u8(1);
                self.u64(id.0);
            }
        }
    }
    fn message(&mut self, m: &Message) {
        self.u64(u64::from(m.checkout.0));
        self.u64(u64::from(m.attempt));
        match m.kind {
            MessageKind::Request { key, amount } => {
                self.u8(0);
                self.key(&key);
                self.u64(u64::from(amount));
            }
            MessageKind::Response {
                request,
                status,
                replayed,
            } => {
                self.u8(1);
                self.u64(u64::from(request));
                self.u64(u64::from(status));
                self.u8(u8::from(replayed));
            }
            MessageKind::Charge { order, key } => {
                self.u8(2);
                self.u64(order.0);
                self.u64(key.map_or(u64::MAX, |k| k.0 .0));
            }
            MessageKind::ChargeAnswer { call, charge } => {
                self.u8(3);
                self.u64(u64::from(call));
                self.charge(charge);
            }
        }
        self.u64(m.sent_at);
        match m.fate {
            Fate::Lost => self.u8(0),
            Fate::Delivered { at } => {
                self.u8(1);
                self.u64(at);
            }
            Fate::Duplicated { at, again } => {
                self.u8(2);
                self.u64(at);
                self.u64(again);
            }
        }
        self.u8(u8::from(m.late));
    }
    fn step(&mut self, s: &Step) {
        self.u64(s.at);
        self.u64(u64::from(s.checkout.0));
        match s.kind {
            StepKind::Journaled { key } => {
                self.u8(0);
                self.key(&Some(key));
            }
            StepKind::Decided { request, decision } => {
                self.u8(1);
                self.u64(u64::from(request));
                let (tag, n) = match decision {
                    Decision::Claimed { token } => (0, token),
                    Decision::TakenOver { token } => (1, token),
                    Decision::Unkeyed => (2, 0),
                    Decision::Replayed => (3, 0),
                    Decision::InFlight => (4, 0),
                    Decision::Mismatch => (5, 0),
                    Decision::Invalid { status } => (6, u64::from(status)),
                    Decision::KeyExpired => (7, 0),
                };
                self.u8(tag);
                self.u64(n);
            }
            StepKind::Worked { request, end } => {
                self.u8(2);
                self.u64(u64::from(request));
                let (tag, status) = match end {
                    WorkEnd::Saved { status } => (0, status),
                    WorkEnd::Released { status } => (1, status),
                    WorkEnd::Fenced => (2, 0),
                    WorkEnd::Answered { status } => (3, status),
                    WorkEnd::Crashed => (4, 0),
                };
                self.u8(tag);
                self.u64(u64::from(status));
            }
            StepKind::DeclinedUnasked { request } => {
                self.u8(3);
                self.u64(u64::from(request));
            }
            StepKind::Paid { call, decision } => {
                self.u8(4);
                self.u64(u64::from(call));
                match decision {
                    PaycoDecision::Charged { charge } => {
                        self.u8(0);
                        self.u64(charge.0);
                    }
                    PaycoDecision::Deduped { charge } => {
                        self.u8(1);
                        self.charge(charge);
                    }
                    PaycoDecision::Declined => self.u8(2),
                }
            }
        }
    }
}

impl History {
    /// SHA-256 (lowercase hex) of the canonical encoding of the attempts, the checkouts, the
    /// messages, the steps and PayCo's `charges`. Equal hashes mean byte-identical histories.
    pub fn hash(&self, charges: &[Charge]) -> String {
        let mut c = Canon(Sha256::new());
        c.u64(self.attempts.len() as u64);
        for a in &self.attempts {
            c.u64(u64::from(a.checkout.0));
            c.u64(u64::from(a.n));
            c.key(&a.key);
            c.u64(u64::from(a.amount));
            c.u64(a.sent_at);
            c.u64(a.ended_at);
            match a.result {
                AttemptResult::Ok {
                    status,
                    replayed,
                    receipt,
                } => {
                    c.u8(0);
                    c.u64(u64::from(status));
                    c.u8(u8::from(replayed));
                    c.receipt(&receipt);
                }
                AttemptResult::Fail { status } => {
                    c.u8(1);
                    c.u64(u64::from(status));
                }
                AttemptResult::Info { cause } => {
                    c.u8(2);
                    c.u8(cause as u8);
                }
            }
        }
        c.u64(self.checkouts.len() as u64);
        for k in &self.checkouts {
            c.u64(u64::from(k.id.0));
            c.u8(k.strategy as u8);
            c.u64(u64::from(k.amount));
            c.key(&k.key);
            c.u64(k.started_at);
            c.u64(u64::from(k.attempts));
            match k.outcome {
                CheckoutOutcome::Pending => c.u8(0),
                CheckoutOutcome::Paid { receipt, replayed } => {
                    c.u8(1);
                    c.receipt(&receipt);
                    c.u8(u8::from(replayed));
                }
                CheckoutOutcome::Rejected { status } => {
                    c.u8(2);
                    c.u64(u64::from(status));
                }
                CheckoutOutcome::Unknown => c.u8(3),
            }
            c.u64(k.finished_at.map_or(u64::MAX, |t| t));
        }
        c.u64(self.messages.len() as u64);
        for m in &self.messages {
            c.message(m);
        }
        c.u64(self.steps.len() as u64);
        for s in &self.steps {
            c.step(s);
        }
        c.u64(charges.len() as u64);
        for ch in charges {
            c.u64(ch.id.0);
            c.u64(ch.order.0);
            c.u64(u64::from(ch.checkout.0));
            c.u64(u64::from(ch.amount));
            match ch.key {
                None => c.u8(0),
                Some(k) => {
                    c.u8(1);
                    c.u64(k.0 .0);
                }
            }
            c.u64(ch.at);
        }
        hex::encode(c.0.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::*;
    use crate::ids::CheckoutId;

    #[test]
    fn hash_is_stable_and_sensitive() {
        let h = sample();
        assert_eq!(h.hash(&[]), sample().hash(&[]));
        assert_eq!(h.hash(&[]).len(), 64);
        let mut g = sample();
        g.attempts[0].ended_at = 10;
        assert_ne!(h.hash(&[]), g.hash(&[]));
    }

    #[test]
    fn messages_and_steps_are_in_the_hash() {
        let h = sample();
        let mut m = sample();
        let message = Message {
            checkout: CheckoutId(0),
            attempt: 1,
            kind: MessageKind::Request {
                key: None,
                amount: 10,
            },
            sent_at: 0,
            fate: Fate::Delivered { at: 20 },
            late: false,
        };
        m.messages.push(message);
        assert_ne!(h.hash(&[]), m.hash(&[]));
        let mut late = m.clone();
        late.messages[0].late = true;
        assert_ne!(m.hash(&[]), late.hash(&[]));
        let mut lost = m.clone();
        lost.messages[0].fate = Fate::Lost;
        assert_ne!(m.hash(&[]), lost.hash(&[]));
        let mut s = sample();
        s.steps.push(Step {
            at: 20,
            checkout: CheckoutId(0),
            kind: StepKind::Decided {
                request: 0,
                decision: Decision::Claimed { token: 1 },
            },
        });
        let mut t = s.clone();
        t.steps[0].kind = StepKind::Decided {
            request: 0,
            decision: Decision::TakenOver { token: 1 },
        };
        assert_ne!(h.hash(&[]), s.hash(&[]));
        assert_ne!(s.hash(&[]), t.hash(&[]));
    }
}
