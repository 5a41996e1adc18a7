//! The pages: naive ones (no key, a key per attempt) and same-key ones, which drive
//! idem-client's `Operation` (the world only carries its `Action`s; it never re-implements
//! them). A naive page reads a reply with the client's own status table (`Reply::class`), so
//! the two kinds of page differ only in their keys.

use idem_checkout::CheckoutRequest;
use idem_client::{
    backoff_delay_ms, Action, CanonicalPayload, Operation, OperationSpec, OutcomeKind, ReplyClass,
};
use uuid::Uuid;

use super::wire::{Delivery, Origin};
use super::{Ev, World};
use crate::config::Strategy;
use crate::history::{
    AttemptRecord, AttemptResult, CheckoutOutcome, CheckoutRecord, InfoCause, StepKind,
};
use crate::ids::CheckoutId;
use crate::receipt::Receipt;
use crate::SimError;

/// Token of a buggy page's other-cart request (never an attempt of the operation).
pub(super) const OTHER_CART: u32 = u32::MAX;

/// The attempt a client is waiting on.
#[derive(Clone, Copy, Debug)]
pub(super) struct Out {
    pub token: u32,
    pub n: u32,
    pub key: Option<Uuid>,
    pub sent_at: u64,
    pub deadline: u64,
}

/// One checkout's page.
#[derive(Debug)]
pub(super) struct Client {
    /// The strategy the page actually follows (same-key turns into a key per attempt under
    /// the new-key-per-attempt bug).
    pub strategy: Strategy,
    pub amount: u32,
    pub journal: usize,
    /// Same-key pages: the operation; `None` while the tab reloads.
    pub op: Option<Operation>,
    pub failures: u32,
    pub window_start: u64,
    pub out: Option<Out>,
    pub epoch: u32,
    pub reloading: bool,
    pub next_token: u32,
    pub done: bool,
    /// A buggy page that reuses its key for another cart as soon as an attempt of its own
    /// fails (402 or 5xx): the moment a release has left the key to be claimed again.
    pub reuse_after_failure: bool,
}

/// The operation name a same-key checkout's page journals under: `checkout:co_N`.
pub fn op_name(c: CheckoutId) -> String {
    format!("checkout:{c}")
}

/// The card every simulated page pays with (PayCo's declines are the world's draw, not the
/// card's).
pub const CARD: &str = "tok_visa";

/// The checkout request a page sends: idem-checkout's, for cart `co_N`.
pub fn request_for(c: CheckoutId, amount: u32) -> CheckoutRequest {
    CheckoutRequest {
        cart: c.to_string(),
        amount: i64::from(amount),
        card: CARD.to_owned(),
    }
}

/// The canonical request body `{"amount":A,"card":"tok_visa","cart":"co_N"}` (RFC 8785 orders
/// the keys): idem-checkout's canonical bytes, the ones idem-client makes of the same object.
pub fn body_for(c: CheckoutId, amount: u32) -> Vec<u8> {
    request_for(c, amount).canonical()
}

/// What one attempt carries besides its body: the headers the server reads, and its number.
#[derive(Clone, Copy)]
struct Sent {
    key: Option<Uuid>,
    first_sent: Option<u64>,
    n: u32,
}

impl World {
    pub(super) fn begin_checkout(
        &mut self,
        strategy: Strategy,
        amount: u32,
        journal: usize,
    ) -> Result<CheckoutId, SimError> {
        let id = CheckoutId(self.clients.len() as u32);
        let effective = (self.steps.page_strategy)(strategy);
        let op = if effective == Strategy::SameKey {
            // `body_for` is the canonical JSON the SDK makes of `{"cart", "amount", "card"}` (a test
            // pins it), so the page hands it over canonical, as the JS bindings do: the demo's wasm
            // then needs no JSON canonicaliser.
            let body = String::from_utf8(body_for(id, amount)).unwrap_or_default();
            let spec =
                OperationSpec::post_canonical(op_name(id), CanonicalPayload::from_canonical(body));
            let rng = &mut self.rng;
            let op = Operation::start(
                spec,
                self.policy.clone(),
                self.now,
                self.journals[journal].as_mut(),
                &mut || rng.uuid(),
            )
            .map_err(|e| SimError::Start(e.to_string()))?;
            Some(op)
        } else {
            None
        };
        let key = op.as_ref().and_then(Operation::key);
        if let Some(key) = key {
            // `Operation::start` returned: the key and payload are in the journal already.
            self.record_step(id, StepKind::Journaled { key });
        }
        self.clients.push(Client {
            strategy: effective,
            amount,
            journal,
            op,
            failures: 0,
            window_start: self.now,
            out: None,
            epoch: 0,
            reloading: false,
            next_token: 0,
            done: false,
            reuse_after_failure: false,
        });
        self.history.checkouts.push(CheckoutRecord {
            id,
            strategy,
            amount,
            key,
            started_at: self.now,
            attempts: 0,
            outcome: CheckoutOutcome::Pending,
            finished_at: None,
        });
        self.counters.checkouts += 1;
        let faults = self.net.faults();
        let (p_reload, p_other) = (faults.tab_reload, faults.reuse_key_other_cart);
        if self.rng.chance(p_reload) {
            let at = self.now + self.rng.upto(3 * self.client_cfg.timeout_ms);
            self.schedule(at, Ev::Reload(id));
        }
        if key.is_some() && self.rng.chance(p_other) {
            // Half of the buggy pages send the other cart soon after Pay, half as soon as an
            // attempt fails: the swarm then draws releases followed by another payload.
            if self.rng.chance(0.5) {
                self.clients[id.0 as usize].reuse_after_failure = true;
            } else {
                let at = self.now + self.rng.upto(300);
                self.schedule(at, Ev::Resend(id, true));
            }
        }
        if effective == Strategy::SameKey {
            self.pump(id);
        } else {
            self.send_naive(id);
        }
        Ok(id)
    }

    fn arm_timer(&mut self, c: CheckoutId, at: u64) {
        let cl = &mut self.clients[c.0 as usize];
        cl.epoch = cl.epoch.wrapping_add(1);
        let epoch = cl.epoch;
        self.schedule(at, Ev::Timer(c, epoch));
    }

    fn cancel_timer(&mut self, c: CheckoutId) {
        let cl = &mut self.clients[c.0 as usize];
        cl.epoch = cl.epoch.wrapping_add(1);
    }

    /// Ask the operation what it wants and do it.
    pub(super) fn pump(&mut self, c: CheckoutId) {
        let i = c.0 as usize;
        let cl = &mut self.clients[i];
        let Some(op) = cl.op.as_mut() else { return };
        let journal = self.journals[cl.journal].as_mut();
        match op.poll(self.now, journal, self.rng.core()) {
            Action::Send(attempt) => {
                let amount = cl.amount;
                // The header as the wire carries it, read back as a server reads it.
                let first_sent = attempt
                    .first_sent_header()
                    .and_then(|value| idem_store::first_sent::parse(&value).ok());
                let sent = Sent {
                    key: attempt.key,
                    first_sent,
                    n: attempt.number,
                };
                self.send(c, sent, amount, attempt.body);
                self.arm_timer(c, attempt.deadline);
            }
            Action::WaitUntil(at) => self.arm_timer(c, at),
            Action::Finished(outcome) => {
                let replayed = matches!(outcome.kind, OutcomeKind::Replayed { .. });
                let result = match outcome.kind {
                    OutcomeKind::Succeeded { body, .. } | OutcomeKind::Replayed { body, .. } => {
                        match Receipt::from_body(&body) {
                            Some(receipt) => CheckoutOutcome::Paid { receipt, replayed },
                            None => CheckoutOutcome::Unknown,
                        }
                    }
                    OutcomeKind::Rejected { status, .. } => CheckoutOutcome::Rejected { status },
                    OutcomeKind::Unknown { .. } => CheckoutOutcome::Unknown,
                };
                self.finish_checkout(c, result);
            }
        }
    }

    /// Put one attempt on the wire.
    fn send(&mut self, c: CheckoutId, sent: Sent, amount: u32, body: Vec<u8>) {
        let Sent { key, first_sent, n } = sent;
        let cl = &mut self.clients[c.0 as usize];
        let token = cl.next_token;
        cl.next_token += 1;
        let deadline = self.now + self.client_cfg.timeout_ms;
        cl.out = Some(Out {
            token,
            n,
            key,
            sent_at: self.now,
            deadline,
        });
        self.history.checkouts[c.0 as usize].attempts = n;
        let origin = Origin {
            checkout: c,
            token,
            attempt: n,
            key,
            first_sent,
            amount,
            message: 0,
        };
        self.post(origin, body);
    }

    /// Whether a message for `origin` comes after its page stopped waiting for it: the attempt
    /// timed out, the tab reloaded or the checkout ended. A request the page sent outside its
    /// operation was never waited for, so it is never late.
    pub(super) fn arrives_late(&self, origin: &Origin) -> bool {
        let cl = &self.clients[origin.checkout.0 as usize];
        let waiting = !cl.done && !cl.reloading && cl.out.is_some_and(|o| o.token == origin.token);
        origin.token != OTHER_CART && !waiting
    }

    fn send_naive(&mut self, c: CheckoutId) {
        let cl = &self.clients[c.0 as usize];
        let n = self.history.checkouts[c.0 as usize].attempts + 1;
        let key = match cl.strategy {
            Strategy::NoKey => None,
            _ => Some(self.rng.uuid()),
        };
        let amount = cl.amount;
        // A naive page sends no first-sent time: the guard cannot help it.
        let sent = Sent {
            key,
            first_sent: None,
            n,
        };
        self.send(c, sent, amount, body_for(c, amount));
        let deadline = self.now + self.client_cfg.timeout_ms;
        self.arm_timer(c, deadline);
    }

    fn record_attempt(&mut self, c: CheckoutId, out: Out, amount: u32, result: AttemptResult) {
        if self.records_in_full() {
            self.history.attempts.push(AttemptRecord {
                checkout: c,
                n: out.n,
                key: out.key,
                amount,
                sent_at: out.sent_at,
                ended_at: self.now,
                result,
            });
        }
    }

    /// Naive retry: back off (or honour Retry-After), or give up when the window would close.
    fn naive_backoff(&mut self, c: CheckoutId, retry_after_ms: Option<u64>) {
        let cl = &mut self.clients[c.0 as usize];
        cl.failures += 1;
        let failures = cl.failures;
        let window_end = cl.window_start + self.client_cfg.retry_window_ms;
        let delay = match retry_after_ms {
            Some(ms) => ms,
            None => backoff_delay_ms(&self.policy, failures, self.rng.core()),
        };
        if self.now + delay >= window_end {
            self.finish_checkout(c, CheckoutOutcome::Unknown);
        } else {
            self.arm_timer(c, self.now + delay);
        }
    }

    pub(super) fn on_timer(&mut self, c: CheckoutId, epoch: u32) {
        let cl = &mut self.clients[c.0 as usize];
        if cl.epoch != epoch || cl.done || cl.reloading {
            return;
        }
        let timed_out = cl.out.filter(|o| self.now >= o.deadline);
        if let Some(out) = timed_out {
            cl.out = None;
            let amount = cl.amount;
            self.counters.timeouts += 1;
            self.record_attempt(
                c,
                out,
                amount,
                AttemptResult::Info {
                    cause: InfoCause::Timeout,
                },
            );
            let cl = &mut self.clients[c.0 as usize];
            if let Some(op) = cl.op.as_mut() {
                op.handle_timeout(self.now);
                self.pump(c);
            } else {
                self.naive_backoff(c, None);
            }
            return;
        }
        if cl.op.is_some() {
            self.pump(c);
        } else {
            self.send_naive(c);
        }
    }

    /// A response reached the page.
    pub(super) fn handle_reply(&mut self, delivery: Delivery) {
        let Delivery {
            origin,
            reply,
            message,
        } = delivery;
        let c = origin.checkout;
        let class = reply.class();
        let receipt = match class {
            ReplyClass::Succeeded { .. } => Receipt::from_body(&reply.body),
            _ => None,
        };
        if let Some(r) = receipt {
            self.checker.observe_ok(c, origin.key, origin.amount, r);
        }
        let status = reply.status;
        if let (422, Some(key)) = (status, origin.key) {
            self.checker.observe_mismatch(c, key, origin.amount);
        }
        let result = match receipt {
            Some(receipt) => AttemptResult::Ok {
                status,
                replayed: reply.replayed,
                receipt,
            },
            None if status >= 500 || matches!(class, ReplyClass::Succeeded { .. }) => {
                AttemptResult::Info {
                    cause: InfoCause::ServerError,
                }
            }
            None => AttemptResult::Fail { status },
        };
        if origin.token == OTHER_CART {
            let out = Out {
                token: OTHER_CART,
                n: 0,
                key: origin.key,
                sent_at: self.now,
                deadline: self.now,
            };
            self.record_attempt(c, out, origin.amount, result);
            return;
        }
        if self.arrives_late(&origin) {
            self.mark_late(message);
        }
        let cl = &mut self.clients[c.0 as usize];
        if cl.done || cl.reloading {
            return;
        }
        let current = cl.out.filter(|o| o.token == origin.token);
        if let Some(out) = current {
            cl.out = None;
            let amount = cl.amount;
            let reuse =
                (status == 402 || status >= 500) && std::mem::take(&mut cl.reuse_after_failure);
            if reuse {
                self.schedule(self.now, Ev::Resend(c, true));
            }
            self.record_attempt(c, out, amount, result);
            self.cancel_timer(c);
            let cl = &mut self.clients[c.0 as usize];
            if let Some(op) = cl.op.as_mut() {
                op.handle_reply(self.now, reply);
                self.pump(c);
                return;
            }
            match (class, receipt) {
                (ReplyClass::Succeeded { replayed }, Some(receipt)) => {
                    self.finish_checkout(c, CheckoutOutcome::Paid { receipt, replayed })
                }
                (ReplyClass::Succeeded { .. }, None) => self.naive_backoff(c, None),
                (ReplyClass::RetryAfter(wait), _) => self.naive_backoff(c, wait),
                (ReplyClass::Rejected, _) => {
                    self.finish_checkout(c, CheckoutOutcome::Rejected { status })
                }
                // A naive page sends no first-sent time, so no server refuses it as expired;
                // were one to, the page would not know what became of its payment.
                (ReplyClass::KeyExpired, _) => self.finish_checkout(c, CheckoutOutcome::Unknown),
            }
            return;
        }
        // A late answer to an earlier attempt: the SDK still uses a final one (same key).
        if let Some(op) = cl.op.as_mut() {
            op.handle_reply(self.now, reply);
            if op.outcome().is_some() {
                self.pump(c);
            }
        }
    }

    pub(super) fn finish_checkout(&mut self, c: CheckoutId, outcome: CheckoutOutcome) {
        let i = c.0 as usize;
        let cl = &mut self.clients[i];
        if let Some(out) = cl.out.take() {
            let amount = cl.amount;
            self.record_attempt(
                c,
                out,
                amount,
                AttemptResult::Info {
                    cause: InfoCause::Abandoned,
                },
            );
        }
        let cl = &mut self.clients[i];
        cl.done = true;
        cl.epoch = cl.epoch.wrapping_add(1);
        let rec = &mut self.history.checkouts[i];
        let was_unknown = rec.outcome == CheckoutOutcome::Unknown;
        rec.outcome = outcome;
        rec.finished_at = Some(self.now);
        self.check_answer(c);
        match outcome {
            CheckoutOutcome::Paid { .. } => self.counters.paid += 1,
            CheckoutOutcome::Rejected { .. } => self.counters.rejected += 1,
            CheckoutOutcome::Unknown if !was_unknown => {
                self.counters.unknown += 1;
                self.reported_unknown.push(c);
            }
            _ => {}
        }
    }

    pub(super) fn on_reload(&mut self, c: CheckoutId) {
        let i = c.0 as usize;
        let cl = &mut self.clients[i];
        if cl.done || cl.reloading {
            return;
        }
        self.counters.reloads += 1;
        cl.reloading = true;
        cl.op = None;
        let out = cl.out.take();
        let amount = cl.amount;
        let naive = cl.strategy != Strategy::SameKey;
        if let Some(out) = out {
            self.record_attempt(
                c,
                out,
                amount,
                AttemptResult::Info {
                    cause: InfoCause::Reloaded,
                },
            );
        }
        self.cancel_timer(c);
        let mut back = self.client_cfg.reload_ms;
        if naive {
            back += self.client_cfg.think_ms;
        }
        self.schedule(self.now + back, Ev::Reloaded(c));
    }

    pub(super) fn on_reloaded(&mut self, c: CheckoutId) {
        let i = c.0 as usize;
        let cl = &mut self.clients[i];
        if cl.done || !cl.reloading {
            return;
        }
        cl.reloading = false;
        if cl.strategy != Strategy::SameKey {
            // The page forgot everything; the customer presses Pay again.
            cl.failures = 0;
            cl.window_start = self.now;
            self.send_naive(c);
            return;
        }
        let name = op_name(c);
        match Operation::resume(
            &name,
            self.policy.clone(),
            self.journals[cl.journal].as_ref(),
        ) {
            Ok(Some(op)) => {
                self.clients[i].op = Some(op);
                self.pump(c);
            }
            // Nothing (or nothing readable) in the journal: the page cannot know the outcome.
            Ok(None) | Err(_) => self.finish_checkout(c, CheckoutOutcome::Unknown),
        }
    }

    /// Pay pressed again while checkout `c` is pending ([`Command::PayAgain`](super::Command)).
    /// A naive page stops waiting for the attempt it has out (recorded as abandoned: its
    /// answer, if one comes, arrives late) and sends its next attempt now, with no key or a
    /// fresh one; a same-key page's pending operation goes on, nothing new is sent.
    pub(super) fn pay_again(&mut self, c: CheckoutId) {
        let cl = &mut self.clients[c.0 as usize];
        if cl.done || cl.reloading || cl.strategy == Strategy::SameKey {
            return;
        }
        if let Some(out) = cl.out.take() {
            let amount = cl.amount;
            let cause = InfoCause::Abandoned;
            self.record_attempt(c, out, amount, AttemptResult::Info { cause });
        }
        self.send_naive(c);
    }

    /// Send a request outside the page's operation under the checkout's key, with the cart's
    /// amount plus `extra` (0: the same request again; 1: another cart).
    pub(super) fn send_extra(&mut self, c: CheckoutId, extra: u32) {
        let key = self.history.checkouts[c.0 as usize].key;
        let amount = self.clients[c.0 as usize].amount + extra;
        let origin = Origin {
            checkout: c,
            token: OTHER_CART,
            attempt: 0,
            key,
            first_sent: None,
            amount,
            message: 0,
        };
        self.post(origin, body_for(c, amount));
    }

    /// After faults stop: resume each unknown same-key checkout from its journal with a fresh
    /// window, as a page reconciling on its next visit would.
    pub(super) fn reconcile(&mut self) {
        let unknown: Vec<CheckoutId> = self.reported_unknown.clone();
        for c in unknown {
            let i = c.0 as usize;
            if self.clients[i].strategy != Strategy::SameKey {
                continue;
            }
            let name = op_name(c);
            let created = self.history.checkouts[i].started_at;
            let mut policy = self.policy.clone();
            policy.retry_window_ms = self.now - created + self.client_cfg.retry_window_ms;
            let journal = self.journals[self.clients[i].journal].as_ref();
            if let Ok(Some(op)) = Operation::resume(&name, policy, journal) {
                let cl = &mut self.clients[i];
                cl.op = Some(op);
                cl.done = false;
                self.pump(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_body_is_the_sdk_canonical_body() {
        let c = CheckoutId(42);
        let sdk = idem_client::CanonicalPayload::new(&serde_json::json!({
            "cart": format!("{c}"), "amount": 1299, "card": CARD
        }))
        .unwrap();
        assert_eq!(body_for(c, 1299), sdk.json.into_bytes());
    }
}
