//! Every message and its fate, and what each party did at one instant: the data a sequence
//! diagram draws.
//!
//! The diagram has four lanes, [`Party::Browser`], the network between, [`Party::Server`] and
//! [`Party::PayCo`]. Each [`Message`] is an arrow from its sender's lane at `sent_at` to its
//! receiver's lane at each arrival: cut at the network when [`Fate::Lost`], drawn twice when
//! [`Fate::Duplicated`], marked `late` when it arrived after its receiver had stopped waiting
//! for it. Each [`Step`] is a mark on one lane: the journal write before the first send
//! (browser), the store's decision at each arrival and the end of the work (server), PayCo's
//! charge, dedupe or decline (PayCo).
//!
//! A message's arrival times are the network's decision, taken when it is sent; a diagram drawn
//! at virtual time `now` shows an arrow whose arrival is later than `now` as still on its way.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::ids::{CheckoutId, OrderId};
use crate::payco::{ChargeId, ChargeKey};

/// Index of a message in [`History::messages`](super::History::messages).
pub type MessageId = u32;

/// A lane of the sequence diagram: who sends, receives or acts. The network is between the
/// browser and the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Party {
    /// The checkout page (its `Operation` and its journal).
    Browser,
    /// The server: idem-store and the checkout handler.
    Server,
    /// The payment provider.
    #[serde(rename = "payco")]
    PayCo,
}

/// What a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum MessageKind {
    /// A checkout request, browser → server.
    Request {
        /// The `Idempotency-Key` sent, if any.
        key: Option<Uuid>,
        /// The amount in the body.
        amount: u32,
    },
    /// The server's answer to `request`, server → browser.
    Response {
        /// The request it answers.
        request: MessageId,
        /// HTTP status.
        status: u16,
        /// `Idempotent-Replayed: true`.
        replayed: bool,
    },
    /// The handler's charge call for `order`, server → PayCo.
    Charge {
        /// The order charged.
        order: OrderId,
        /// The downstream key (`charge:<order>`), unless a bug leaves it out.
        key: Option<ChargeKey>,
    },
    /// PayCo's answer to `call`, PayCo → server.
    ChargeAnswer {
        /// The call it answers.
        call: MessageId,
        /// The charge it names, or `None` for a decline.
        charge: Option<ChargeId>,
    },
}

/// What became of a message on the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Fate {
    /// Lost: it never arrived.
    Lost,
    /// Arrived once.
    Delivered {
        /// Virtual time of the arrival.
        at: u64,
    },
    /// Duplicated by the network: arrived twice.
    Duplicated {
        /// The first arrival.
        at: u64,
        /// The second.
        again: u64,
    },
}

impl Fate {
    /// The arrival times, in order (none when lost).
    pub fn arrivals(self) -> impl Iterator<Item = u64> {
        let (a, b) = match self {
            Fate::Lost => (None, None),
            Fate::Delivered { at } => (Some(at), None),
            Fate::Duplicated { at, again } => (Some(at), Some(again)),
        };
        a.into_iter().chain(b)
    }
}

/// One message, from its sender to its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// The checkout it belongs to.
    pub checkout: CheckoutId,
    /// The page's attempt it carries or answers (1-based); 0 for a request the page sent
    /// outside its operation (a double click, another cart) and the messages that follow it.
    pub attempt: u32,
    /// What it carries (and so who sends and receives it).
    pub kind: MessageKind,
    /// When it was sent.
    pub sent_at: u64,
    /// What the network did with it.
    pub fate: Fate,
    /// A copy arrived after its receiver had stopped waiting for it: a request whose attempt
    /// had timed out (or whose tab had reloaded), a response the page no longer expected.
    pub late: bool,
}

impl Message {
    /// The sender's lane.
    pub fn from(&self) -> Party {
        match self.kind {
            MessageKind::Request { .. } => Party::Browser,
            MessageKind::Response { .. } | MessageKind::Charge { .. } => Party::Server,
            MessageKind::ChargeAnswer { .. } => Party::PayCo,
        }
    }

    /// The receiver's lane.
    pub fn to(&self) -> Party {
        match self.kind {
            MessageKind::Request { .. } | MessageKind::ChargeAnswer { .. } => Party::Server,
            MessageKind::Response { .. } => Party::Browser,
            MessageKind::Charge { .. } => Party::PayCo,
        }
    }
}

/// What the store decided for one arrival of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Decision {
    /// No record: claimed under a new lease; the work runs.
    Claimed {
        /// The lease's token.
        token: u64,
    },
    /// The record's lease was stale: taken over under a new one; the work runs again.
    TakenOver {
        /// The new lease's token.
        token: u64,
    },
    /// No key: the work runs unprotected.
    Unkeyed,
    /// The saved answer, replayed.
    Replayed,
    /// 409: a live lease holds the key.
    InFlight,
    /// 422: the key was first used with another payload.
    Mismatch,
    /// 400 or 413: refused before any record was read.
    Invalid {
        /// The status.
        status: u16,
    },
    /// 412: no record of the key, and the request was first sent longer ago than retention
    /// (the expired-key guard): not run again.
    KeyExpired,
}

/// How the work a request started ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum WorkEnd {
    /// The answer was saved under the key (the commit, or a failed work's answer kept by the
    /// save-response policy), then sent.
    Saved {
        /// The saved status.
        status: u16,
    },
    /// The claim was given back (a failed work under release-claim, or another payload on a
    /// released key), then the error was sent.
    Released {
        /// The status sent.
        status: u16,
    },
    /// The store refused the write: the claim had been taken over. The worker answers the
    /// lease-lost 409, never its own result.
    Fenced,
    /// Unkeyed work: nothing to save; the answer was sent.
    Answered {
        /// The status sent.
        status: u16,
    },
    /// The worker died after the charge, before saving: nothing saved, nothing sent.
    Crashed,
}

/// What PayCo decided for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum PaycoDecision {
    /// Money moved: a new charge.
    Charged {
        /// Its id.
        charge: ChargeId,
    },
    /// The key was seen: the saved answer again (a charge, or `None` for a saved decline); no
    /// money moved.
    Deduped {
        /// The charge it names.
        charge: Option<ChargeId>,
    },
    /// The card was declined (saved under the key).
    Declined,
}

/// What happened at one point of one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum StepKind {
    /// Browser: the page wrote the operation's key and payload to its journal (the demo's is
    /// localStorage), before its first send.
    Journaled {
        /// The key written.
        key: Uuid,
    },
    /// Server: the store's decision for an arrival of `request`.
    Decided {
        /// The request.
        request: MessageId,
        /// What it decided.
        decision: Decision,
    },
    /// Server: the work `request` started ended.
    Worked {
        /// The request whose arrival started the work.
        request: MessageId,
        /// How.
        end: WorkEnd,
    },
    /// Server: the handler declined the card itself, before asking PayCo (the
    /// decline-before-lookup bug).
    DeclinedUnasked {
        /// The request whose work it was.
        request: MessageId,
    },
    /// PayCo: its decision on `call`.
    Paid {
        /// The call.
        call: MessageId,
        /// What it decided.
        decision: PaycoDecision,
    },
}

impl StepKind {
    /// The lane it happens on.
    pub fn party(&self) -> Party {
        match self {
            StepKind::Journaled { .. } => Party::Browser,
            StepKind::Decided { .. }
            | StepKind::Worked { .. }
            | StepKind::DeclinedUnasked { .. } => Party::Server,
            StepKind::Paid { .. } => Party::PayCo,
        }
    }
}

/// One mark on one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Virtual time.
    pub at: u64,
    /// The checkout it concerns.
    pub checkout: CheckoutId,
    /// What happened.
    pub kind: StepKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_goes_between_its_lanes() {
        let at = |kind| Message {
            checkout: CheckoutId(0),
            attempt: 1,
            kind,
            sent_at: 0,
            fate: Fate::Lost,
            late: false,
        };
        let lanes = |m: Message| (m.from(), m.to());
        let request = MessageKind::Request {
            key: None,
            amount: 1,
        };
        let response = MessageKind::Response {
            request: 0,
            status: 201,
            replayed: false,
        };
        let call = MessageKind::Charge {
            order: OrderId(1),
            key: None,
        };
        let answer = MessageKind::ChargeAnswer {
            call: 2,
            charge: None,
        };
        assert_eq!(lanes(at(request)), (Party::Browser, Party::Server));
        assert_eq!(lanes(at(response)), (Party::Server, Party::Browser));
        assert_eq!(lanes(at(call)), (Party::Server, Party::PayCo));
        assert_eq!(lanes(at(answer)), (Party::PayCo, Party::Server));
    }

    #[test]
    fn arrivals_of_each_fate() {
        assert_eq!(Fate::Lost.arrivals().count(), 0);
        assert!(Fate::Delivered { at: 5 }.arrivals().eq([5]));
        assert!(Fate::Duplicated { at: 5, again: 9 }.arrivals().eq([5, 9]));
    }
}
