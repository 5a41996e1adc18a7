//! The history: every attempt as Jepsen records operations (`ok`, `fail`, `info` = unknown),
//! every checkout's final outcome, every message and what became of it, and what each party did
//! at one instant ([`messages`]); a SHA-256 over a canonical encoding of it all (`hash`).
//!
//! It records what happened; it decides nothing. The world writes it as events run, the checker
//! and the live properties read the attempts and outcomes, and the demo's timeline reads the
//! messages and steps (the ground truth a real client never sees).

mod hash;
pub mod messages;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::config::Strategy;
use crate::ids::CheckoutId;
use crate::receipt::Receipt;

pub use messages::{
    Decision, Fate, Message, MessageId, MessageKind, Party, PaycoDecision, Step, StepKind, WorkEnd,
};

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
    /// settled it, or its window closed), or Pay was pressed again and a naive page now waits
    /// for the request that click sent.
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

/// Every checkout, and when recorded in full ([`HistoryDetail::Full`](crate::HistoryDetail)),
/// every attempt, message and step.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// Attempts in the order their results became known.
    pub attempts: Vec<AttemptRecord>,
    /// Checkouts by id.
    pub checkouts: Vec<CheckoutRecord>,
    /// Every message sent (requests, responses, PayCo calls and answers), in the order sent;
    /// a [`MessageId`] is an index here.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// What each party did at one instant (journal writes, the store's decisions, the ends of
    /// the work, PayCo's decisions), in time order.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Each response's HTTP as the server wrote it (status, headers, body), by the response's
    /// [`MessageId`], in the order sent: what a diagram shows when a response is clicked. Not
    /// exported and not hashed: the recorded messages and steps determine it, and a replayed
    /// run writes it again.
    #[serde(skip)]
    pub responses: Vec<(MessageId, idem_store::http::HttpResponse)>,
}

impl History {
    /// The HTTP response recorded for message `id`, if it is a response.
    pub fn response_http(&self, id: MessageId) -> Option<&idem_store::http::HttpResponse> {
        let i = self.responses.binary_search_by_key(&id, |(m, _)| *m).ok()?;
        self.responses.get(i).map(|(_, r)| r)
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

    pub(super) fn sample() -> History {
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
            messages: vec![],
            steps: vec![],
            responses: vec![],
        }
    }

    #[test]
    fn jepsen_kinds() {
        assert_eq!(sample().attempts[0].result.kind(), "ok");
        assert_eq!(AttemptResult::Fail { status: 409 }.kind(), "fail");
        let info = AttemptResult::Info {
            cause: InfoCause::Timeout,
        };
        assert_eq!(info.kind(), "info");
    }
}
