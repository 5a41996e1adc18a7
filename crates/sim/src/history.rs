//! The history: every attempt as Jepsen records operations (`ok`, `fail`, `info` = unknown),
//! every checkout's final outcome, and a SHA-256 over a canonical encoding of it all.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::config::Strategy;
use crate::ids::CheckoutId;
use crate::payco::Charge;
use crate::receipt::Receipt;

/// Why an attempt's outcome is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InfoCause {
    /// No answer before the client's timeout.
    Timeout,
    /// The server answered 5xx (e.g. its save was fenced): the work may have run.
    ServerError,
    /// The tab reloaded while the attempt was out.
    Reloaded,
    /// The page stopped waiting: the checkout ended (a late answer to an earlier attempt
    /// settled it, or its window closed).
    Abandoned,
}

/// One attempt's result, Jepsen-style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum AttemptResult {
    /// `ok`: a 2xx with a receipt (`replayed` when the server answered from its table).
    Ok {
        /// HTTP status.
        status: u16,
        /// `Idempotent-Replayed: true`.
        replayed: bool,
        /// The body.
        receipt: Receipt,
    },
    /// `fail`: a definite refusal (409, 422, 400): this attempt changed nothing.
    Fail {
        /// HTTP status.
        status: u16,
    },
    /// `info`: the outcome is unknown.
    Info {
        /// Why.
        cause: InfoCause,
    },
}

impl AttemptResult {
    /// Jepsen's name: `ok`, `fail` or `info`.
    pub fn kind(&self) -> &'static str {
        match self {
            AttemptResult::Ok { .. } => "ok",
            AttemptResult::Fail { .. } => "fail",
            AttemptResult::Info { .. } => "info",
        }
    }
}

/// One request a client sent, and what became of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// Whose attempt.
    pub checkout: CheckoutId,
    /// 1-based attempt number within the checkout.
    pub n: u32,
    /// The idempotency key sent, if any.
    pub key: Option<Uuid>,
    /// The amount in the body (differs from the checkout's only for a buggy page's other cart).
    pub amount: u32,
    /// When it was sent.
    pub sent_at: u64,
    /// When its result was known.
    pub ended_at: u64,
    /// The result.
    pub result: AttemptResult,
}

/// How a checkout ended, as its page reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum CheckoutOutcome {
    /// Still retrying.
    Pending,
    /// Paid: the receipt the page showed.
    Paid {
        /// The receipt.
        receipt: Receipt,
        /// Whether that answer was a replay.
        replayed: bool,
    },
    /// Refused for good (422 or another 4xx).
    Rejected {
        /// HTTP status.
        status: u16,
    },
    /// The retry window closed without an answer: reported as unknown.
    Unknown,
}

/// One checkout's line in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutRecord {
    /// Its id.
    pub id: CheckoutId,
    /// How its page uses keys.
    pub strategy: Strategy,
    /// The cart's amount.
    pub amount: u32,
    /// The checkout's key, for same-key pages.
    pub key: Option<Uuid>,
    /// When Pay was pressed.
    pub started_at: u64,
    /// Attempts sent.
    pub attempts: u32,
    /// How it ended.
    pub outcome: CheckoutOutcome,
    /// When it ended.
    pub finished_at: Option<u64>,
}

/// Every attempt (when recorded in full) and every checkout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// Attempts in the order their results became known.
    pub attempts: Vec<AttemptRecord>,
    /// Checkouts by id.
    pub checkouts: Vec<CheckoutRecord>,
}

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
}

impl History {
    /// SHA-256 (lowercase hex) of the canonical encoding of the attempts, the checkouts and
    /// PayCo's `charges`. Equal hashes mean byte-identical histories.
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
        let digest = c.0.finalize();
        let mut out = String::with_capacity(64);
        for b in digest {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
        out
    }

    /// The attempts of one checkout, in order.
    pub fn attempts_of(&self, checkout: CheckoutId) -> impl Iterator<Item = &AttemptRecord> {
        self.attempts.iter().filter(move |a| a.checkout == checkout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::OrderId;
    use crate::payco::ChargeId;

    fn sample() -> History {
        let receipt = Receipt {
            order: OrderId(1),
            charge: ChargeId(1),
            amount: 10,
            served_at: 5,
        };
        History {
            attempts: vec![AttemptRecord {
                checkout: CheckoutId(0),
                n: 1,
                key: None,
                amount: 10,
                sent_at: 0,
                ended_at: 9,
                result: AttemptResult::Ok {
                    status: 201,
                    replayed: false,
                    receipt,
                },
            }],
            checkouts: vec![],
        }
    }

    #[test]
    fn hash_is_stable_and_sensitive() {
        let h = sample();
        assert_eq!(h.hash(&[]), sample().hash(&[]));
        assert_eq!(h.hash(&[]).len(), 64);
        let mut g = sample();
        g.attempts[0].ended_at = 10;
        assert_ne!(h.hash(&[]), g.hash(&[]));
        assert_eq!(h.attempts[0].result.kind(), "ok");
    }
}
