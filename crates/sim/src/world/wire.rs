//! The network, both directions, and the messages' fates in the history.
//!
//! A page's request goes onto the wire with [`World::post`]; the network's verdict (lost,
//! delivered, duplicated, after which delays) is taken then and recorded with the message.
//! [`World::take_request`] hands each arriving copy to the server. The server answers with an
//! `idem_store::http::HttpResponse`, the same value idem-server writes, through
//! [`World::respond`]; on arrival [`World::take_response`] turns it into the `idem_client::Reply`
//! a page sees with [`Reply::from_http`], the conversion the SDK's `fetch` driver uses, so the
//! simulator reads `Retry-After` and `Idempotent-Replayed` from headers as a browser would.
//!
//! This module only carries: what a request or a reply means is the server's and the page's
//! business (`server.rs`, `client.rs`); `mod.rs` hands each arrival to them.

use idem_client::Reply;
use idem_store::http::{self, HttpResponse};
use uuid::Uuid;

use super::{Ev, World};
use crate::history::{Fate, MessageId, MessageKind};
use crate::ids::CheckoutId;
use crate::network::{Direction, Verdict};

/// Who sent a request, and so where its answers go: enough to answer it and to record what
/// became of it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Origin {
    /// The checkout whose page sent it.
    pub checkout: CheckoutId,
    /// The page's token for the attempt (`OTHER_CART` outside its operation).
    pub token: u32,
    /// The attempt number (0 outside the page's operation).
    pub attempt: u32,
    /// The `Idempotency-Key` sent.
    pub key: Option<Uuid>,
    /// The `Repeatability-First-Sent` sent, as the server reads it back (ms: the header's
    /// whole seconds); only the SDK's pages send one.
    pub first_sent: Option<u64>,
    /// The amount in the body.
    pub amount: u32,
    /// The request's message in the history.
    pub message: MessageId,
}

/// A request on the wire.
#[derive(Debug)]
pub(super) struct Request {
    pub origin: Origin,
    pub body: Vec<u8>,
    /// Copies still to arrive (two when the network duplicated it).
    pub copies: u8,
}

/// A response on the wire: the server's HTTP answer, for `origin`.
#[derive(Debug)]
pub(super) struct Response {
    pub origin: Origin,
    pub http: HttpResponse,
    /// The response's message in the history.
    pub message: MessageId,
}

/// One arriving copy of a request, for the server.
#[derive(Debug)]
pub(super) struct Arrival {
    pub origin: Origin,
    pub body: Vec<u8>,
}

/// An arriving response, as the page reads it.
#[derive(Debug)]
pub(super) struct Delivery {
    pub origin: Origin,
    pub reply: Reply,
    /// The response's message in the history.
    pub message: MessageId,
}

fn fate(now: u64, verdict: Verdict) -> Fate {
    match verdict {
        Verdict::Drop => Fate::Lost,
        Verdict::Deliver(d) => Fate::Delivered { at: now + d },
        Verdict::Duplicate(a, b) => Fate::Duplicated {
            at: now + a,
            again: now + b,
        },
    }
}

impl World {
    /// Put a page's request on the wire (`origin.message` is filled in here).
    pub(super) fn post(&mut self, mut origin: Origin, body: Vec<u8>) {
        self.counters.attempts += 1;
        let verdict = self.net.route(Direction::Request, &mut self.rng);
        let kind = MessageKind::Request {
            key: origin.key,
            amount: origin.amount,
        };
        let fate = fate(self.now, verdict);
        origin.message = self.record_message(origin.checkout, origin.attempt, kind, fate);
        let copies = match verdict {
            Verdict::Drop => return,
            Verdict::Deliver(_) => 1,
            Verdict::Duplicate(..) => 2,
        };
        let slot = self.requests.insert(Request {
            origin,
            body,
            copies,
        });
        for at in fate.arrivals() {
            self.schedule(at, Ev::Arrive(slot));
        }
    }

    /// One copy of a request arrives: the request, and its body (the last copy takes it).
    pub(super) fn take_request(&mut self, slot: u32) -> Option<Arrival> {
        let r = self.requests.get_mut(slot)?;
        r.copies -= 1;
        let origin = r.origin;
        let body = if r.copies == 0 {
            self.requests.take(slot).map(|r| r.body).unwrap_or_default()
        } else {
            r.body.clone()
        };
        Some(Arrival { origin, body })
    }

    /// The server answers `origin` with `http`: onto the wire, back to the page.
    pub(super) fn respond(&mut self, origin: Origin, http: HttpResponse) {
        let verdict = self.net.route(Direction::Response, &mut self.rng);
        // Responses are never duplicated; a lost one never arrives.
        let fate = fate(self.now, verdict);
        let kind = MessageKind::Response {
            request: origin.message,
            status: http.status,
            replayed: http.header(http::IDEMPOTENT_REPLAYED) == Some(http::REPLAYED_TRUE),
        };
        let message = self.record_message(origin.checkout, origin.attempt, kind, fate);
        if self.records_in_full() {
            self.history.responses.push((message, http.clone()));
        }
        if let Some(at) = fate.arrivals().next() {
            let slot = self.responses.insert(Response {
                origin,
                http,
                message,
            });
            self.schedule(at, Ev::Reply(slot));
        }
    }

    /// A response arrives: the reply the page reads from it.
    pub(super) fn take_response(&mut self, slot: u32) -> Option<Delivery> {
        let Response {
            origin,
            http,
            message,
        } = self.responses.take(slot)?;
        let HttpResponse {
            status,
            headers,
            body,
        } = http;
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        // The store writes `Retry-After` in delay-seconds, which need no clock; the virtual one
        // is what this world has.
        let reply = Reply::from_http(status, header, body, self.now);
        Some(Delivery {
            origin,
            reply,
            message,
        })
    }
}
