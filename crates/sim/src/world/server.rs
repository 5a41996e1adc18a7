//! The server: idem-store plus the checkout handler. The handler's work takes virtual time
//! (create order → charge PayCo → save), so faults land in the middle of it. Every answer is an
//! `idem_store::http::HttpResponse` built by the store's own writers (`response_for`,
//! `lease_lost`, `problem`), as idem-server answers; the classic bugs replace named steps
//! (`bugs.rs`), never the store.

use idem_store::http::{self, HttpResponse};
use idem_store::{
    Begin, Fingerprint, IdRef, Lease, MemoryTable, RecordId, RouteConfig, SavedResponse, Status,
    Store, StoreConfig, Table,
};
use uuid::Uuid;

use super::recovery::RecoveryPoints;
use super::wire::{Arrival, Origin};
use super::{Ev, World, OPERATION, SCOPE};
use crate::config::ServerConfig;
use crate::history::{Decision, Fate, MessageKind, PaycoDecision, StepKind, WorkEnd};
use crate::ids::OrderId;
use crate::payco::{ChargeAnswer, ChargeCall, ChargeId};
use crate::receipt::Receipt;

/// Problem `type`s of the example checkout's own errors (idem-server's `problems::kind` has
/// the declined card too).
pub mod problem {
    /// 402: PayCo declined the card. Final for this key.
    pub const PAYMENT_DECLINED: &str = "/problems/payment-declined";
    /// 504: PayCo did not answer in time; whether it charged is unknown.
    pub const PAYMENT_PROVIDER_TIMEOUT: &str = "/problems/payment-provider-timeout";
}

/// Share of timed-out PayCo calls that reached PayCo (lost on the way back, not on the way
/// there): PayCo decided and saved its answer, the worker never heard it.
const TIMED_OUT_AFTER_PAYCO: f64 = 0.5;

/// Why the handler's work failed after the claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WorkError {
    /// PayCo declined the card (its answer under the order's key): final for this key.
    Declined,
    /// PayCo did not answer in time: the worker cannot tell whether money moved.
    PaycoTimeout,
}

impl WorkError {
    /// The error's answer, written by the store's problem writer like every other problem.
    fn response(self) -> HttpResponse {
        match self {
            WorkError::Declined => http::problem(
                402,
                problem::PAYMENT_DECLINED,
                "Payment declined",
                "PayCo declined the card",
                None,
            ),
            WorkError::PaycoTimeout => http::problem(
                504,
                problem::PAYMENT_PROVIDER_TIMEOUT,
                "Payment provider timeout",
                "PayCo did not answer in time; the charge may or may not have happened",
                None,
            ),
        }
    }
}

/// The answer a decision that needs no work calls for (every `Begin` but `Execute` and
/// `Unkeyed`): the store's wire value.
fn decided(begin: &Begin) -> HttpResponse {
    // `response_for` answers every decision but Execute and Unkeyed, which never reach here.
    http::response_for(begin).unwrap_or_else(http::internal_error)
}

/// A first answer as it is saved for replay: status, content type and body.
fn saved(first: &HttpResponse) -> SavedResponse {
    let content_type = first
        .header(http::CONTENT_TYPE)
        .unwrap_or("application/json");
    SavedResponse {
        content_type: content_type.to_owned(),
        ..SavedResponse::json(first.status, first.body.clone())
    }
}

/// Which step of the work is next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Create (or, on a takeover, resume) the order.
    Order,
    /// Charge PayCo.
    Charge,
    /// Save the response (fenced) and answer.
    Save,
}

/// How a job holds its key.
#[derive(Debug)]
pub(super) enum Claim {
    /// No key: nothing to hold.
    Unkeyed,
    /// A claim under this lease.
    Leased {
        id: RecordId,
        lease: Lease,
        taken_over: bool,
    },
}

/// One execution of the handler.
#[derive(Debug)]
pub(super) struct Job {
    pub origin: Origin,
    pub claim: Claim,
    pub order: OrderId,
    pub charge: ChargeId,
    pub fingerprint: Fingerprint,
}

impl Job {
    pub(super) fn new(origin: Origin, claim: Claim, fingerprint: Fingerprint) -> Job {
        Job {
            origin,
            claim,
            order: OrderId(0),
            charge: ChargeId(0),
            fingerprint,
        }
    }
}

/// Server state besides the store: orders and the handler's recovery points.
pub(super) struct Server {
    pub store: Store,
    config: ServerConfig,
    next_order: u64,
    /// The order each key and payload's work created, written with the claim's first phase:
    /// a takeover, or a claim after a release, resumes it, so PayCo sees the same
    /// `charge:<orderId>`.
    recovery: RecoveryPoints,
    pub jobs: super::Slab<Job>,
}

impl Server {
    pub fn new(store: Store, config: ServerConfig) -> Self {
        Self {
            store,
            config,
            next_order: 0,
            recovery: RecoveryPoints::default(),
            jobs: super::Slab::default(),
        }
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The checkout route: keys optional (no-key pages send none); a failed work follows the
    /// configured error policy.
    pub fn route(&self) -> RouteConfig {
        RouteConfig::optional(OPERATION, self.config.on_error)
    }

    pub fn reconfigure(&mut self, config: ServerConfig, store: StoreConfig) {
        self.store.set_config(store);
        self.config = config;
    }

    fn new_order(&mut self) -> OrderId {
        self.next_order += 1;
        OrderId(self.next_order)
    }
}

pub(super) fn key_str<'b>(key: &Uuid, buf: &'b mut [u8; 36]) -> &'b str {
    key.hyphenated().encode_lower(buf)
}

/// The store's fingerprint of a request body. Every body the simulated clients send is already
/// canonical JSON (RFC 8785: the SDK's `CanonicalPayload`, or `body_for`, which a test pins to
/// it), and the store's fingerprint is SHA-256 of the canonical JSON, so the sim hashes the bytes
/// as they are instead of parsing and re-canonicalising them. That keeps a second JSON parser and
/// the canonicaliser out of the demo's wasm. Debug builds (the tests) check every body against
/// [`idem_store::fingerprint`].
pub(super) fn canonical_fingerprint(body: &[u8]) -> Fingerprint {
    let fp = Fingerprint::of_canonical(OPERATION, body);
    debug_assert_eq!(
        idem_store::fingerprint(OPERATION, body).ok(),
        Some(fp),
        "a simulated request body is not canonical JSON"
    );
    fp
}

impl World {
    /// A request arrived: the store decides, then the work runs or the decision is the answer.
    pub(super) fn handle_request(&mut self, arrival: Arrival) {
        let Arrival { origin, body } = arrival;
        let fingerprint = (self.steps.fingerprint)(&body);
        let claim_later = self.steps.claim_later;
        if claim_later(self, &origin, fingerprint) {
            return;
        }
        let now = self.now;
        if let (Some(trace), Some(key)) = (self.trace.as_mut(), origin.key) {
            trace.push(super::StoreOp::Begin {
                at: now,
                checkout: origin.checkout,
                amount: origin.amount,
                key,
            });
        }
        let mut buf = [0u8; 36];
        let key = origin.key.as_ref().map(|k| key_str(k, &mut buf));
        let route = self.server.route();
        let store = &mut self.server.store;
        let begin = store.begin_with_fingerprint(now, SCOPE, key, fingerprint, &route);
        let decision = match &begin {
            Begin::Execute {
                lease, taken_over, ..
            } => {
                if *taken_over {
                    self.counters.takeovers += 1;
                    Decision::TakenOver { token: lease.token }
                } else {
                    Decision::Claimed { token: lease.token }
                }
            }
            Begin::Unkeyed => Decision::Unkeyed,
            Begin::Replay(_) => {
                self.counters.replays += 1;
                Decision::Replayed
            }
            Begin::InFlight { .. } => {
                self.counters.conflicts += 1;
                Decision::InFlight
            }
            Begin::Mismatch => {
                self.counters.mismatches += 1;
                // The key stays bound to its first payload after a release: count those 422s.
                let released = key.is_some_and(|key| {
                    let row = self.server.store.table().get(IdRef { scope: SCOPE, key });
                    row.is_some_and(|r| matches!(r.status, Status::Released { .. }))
                });
                self.counters.released_mismatches += u64::from(released);
                Decision::Mismatch
            }
            Begin::Invalid(e) => Decision::Invalid { status: e.status() },
        };
        let request = origin.message;
        self.record_step(origin.checkout, StepKind::Decided { request, decision });
        match begin {
            Begin::Execute {
                id,
                lease,
                taken_over,
            } => {
                let claim = Claim::Leased {
                    id,
                    lease,
                    taken_over,
                };
                self.start_job(Job::new(origin, claim, fingerprint));
            }
            Begin::Unkeyed => self.start_job(Job::new(origin, Claim::Unkeyed, fingerprint)),
            answered => {
                let http = decided(&answered);
                self.respond(origin, http);
            }
        }
    }

    /// The work starts: the order comes first.
    pub(super) fn start_job(&mut self, job: Job) {
        self.counters.executions += 1;
        if let (Claim::Leased { .. }, Some(key)) = (&job.claim, job.origin.key) {
            self.checker
                .observe_run(job.origin.checkout, key, job.origin.amount);
        }
        let job = self.server.jobs.insert(job);
        self.schedule(
            self.now + self.server.config.order_ms,
            Ev::Work(job, Phase::Order),
        );
    }

    pub(super) fn on_work(&mut self, job: u32, phase: Phase) {
        match phase {
            Phase::Order => self.work_order(job),
            Phase::Charge => self.work_charge(job),
            Phase::Save => self.work_save(job),
        }
    }

    fn work_order(&mut self, job: u32) {
        let now = self.now;
        let retention = self.server.store.config().retention_ms;
        let recovery = self.steps.recovery;
        let Some(j) = self.server.jobs.get(job) else {
            return;
        };
        // The recovery point (the order of this key and payload): written with the claim,
        // looked up first, unless a bug says otherwise.
        let recoverable = match (&j.claim, j.origin.key) {
            (Claim::Leased { taken_over, .. }, Some(k)) if recovery.writes() => {
                Some((k, j.fingerprint, *taken_over))
            }
            _ => None,
        };
        let point = recoverable.and_then(|(k, fp, taken_over)| {
            recovery
                .looks(taken_over)
                .then(|| self.server.recovery.find(k, fp, now))
                .flatten()
        });
        let order = match point {
            Some(order) => order,
            None => self.server.new_order(),
        };
        if let Some((k, fp, _)) = recoverable {
            // The recovery point, written in the claim's transaction; it lives as long as the
            // key's record may.
            self.server
                .recovery
                .record(k, fp, order, now.saturating_add(retention));
        }
        if let Some(j) = self.server.jobs.get_mut(job) {
            j.order = order;
        }
        let mut delay = self.server.config.charge_ms;
        let p_slow = self.net.faults().slow_worker;
        if std::mem::take(&mut self.oneshot.slow) {
            // The one-shot is the worst case: it outlives its lease by the whole margin.
            self.counters.slow_workers += 1;
            delay += self.server.store.config().lock_ms + self.server.config.slow_extra_ms;
        } else if self.rng.chance(p_slow) {
            self.counters.slow_workers += 1;
            delay += self.server.store.config().lock_ms
                + self.rng.upto(self.server.config.slow_extra_ms);
        }
        self.schedule(self.now + delay, Ev::Work(job, Phase::Charge));
    }

    fn work_charge(&mut self, job: u32) {
        let Some(j) = self.server.jobs.get(job) else {
            return;
        };
        let origin = j.origin;
        let call = ChargeCall {
            order: j.order,
            checkout: origin.checkout,
            amount: origin.amount,
            key: (self.steps.charge_key)(j.order),
            at: self.now,
        };
        let decline_unasked = self.steps.decline_unasked;
        if decline_unasked(self) {
            let request = origin.message;
            self.record_step(origin.checkout, StepKind::DeclinedUnasked { request });
            return self.work_failed(job, WorkError::Declined);
        }
        let p_timeout = self.net.faults().payco_timeout;
        let timed_out =
            std::mem::take(&mut self.oneshot.payco_timeout) || self.rng.chance(p_timeout);
        // A timed-out call was lost on the way to PayCo or on the way back: the worker cannot
        // tell which. One that reached PayCo was decided and saved under its key.
        let reached = !timed_out || self.rng.chance(TIMED_OUT_AFTER_PAYCO);
        let sent = MessageKind::Charge {
            order: call.order,
            key: call.key,
        };
        let here = Fate::Delivered { at: self.now };
        let lost_if = |lost: bool| if lost { Fate::Lost } else { here };
        let (c, n) = (origin.checkout, origin.attempt);
        let call_id = self.record_message(c, n, sent, lost_if(!reached));
        let answer = if reached {
            let decides = self.steps.payco_declines;
            let p_decline = self.net.faults().decline;
            let (oneshot, rng) = (&mut self.oneshot, &mut self.rng);
            // PayCo's own decision, asked only for a key it has not seen.
            let reply = self.payco.charge(call, || decides(oneshot, rng, p_decline));
            let decision = match (reply.answer, reply.deduped) {
                (ChargeAnswer::Charged(charge), false) => PaycoDecision::Charged { charge },
                (ChargeAnswer::Charged(charge), true) => PaycoDecision::Deduped {
                    charge: Some(charge),
                },
                (ChargeAnswer::Declined, true) => PaycoDecision::Deduped { charge: None },
                (ChargeAnswer::Declined, false) => PaycoDecision::Declined,
            };
            let step = StepKind::Paid {
                call: call_id,
                decision,
            };
            self.record_step(c, step);
            let charge = match reply.answer {
                ChargeAnswer::Charged(id) => Some(id),
                ChargeAnswer::Declined => None,
            };
            let back = MessageKind::ChargeAnswer {
                call: call_id,
                charge,
            };
            self.record_message(c, n, back, lost_if(timed_out));
            if let PaycoDecision::Charged { .. } = decision {
                // Money moved: an answer the checkout already got may no longer hold.
                self.check_answer(call.checkout);
            }
            Some(reply.answer)
        } else {
            None
        };
        let charge = match (timed_out, answer) {
            (true, _) => {
                self.counters.payco_timeouts += 1;
                return self.work_failed(job, WorkError::PaycoTimeout);
            }
            (false, Some(ChargeAnswer::Charged(id))) => id,
            (false, _) => return self.work_failed(job, WorkError::Declined),
        };
        if let Some(j) = self.server.jobs.get_mut(job) {
            j.charge = charge;
        }
        let p_crash = self.net.faults().crash_after_charge;
        if std::mem::take(&mut self.oneshot.crash) || self.rng.chance(p_crash) {
            // The worker dies: nothing saved, nothing answered; the claim stays in flight.
            self.counters.crashes += 1;
            self.server.jobs.take(job);
            let (c, request) = (origin.checkout, origin.message);
            let end = WorkEnd::Crashed;
            self.record_step(c, StepKind::Worked { request, end });
            return;
        }
        self.schedule(
            self.now + self.server.config.save_ms,
            Ev::Work(job, Phase::Save),
        );
    }

    /// The work failed after the claim (PayCo declined, or did not answer in time). The claim
    /// follows the route's error policy (released: a retry resumes the order under the same
    /// PayCo key; saved: retries replay this answer), and the client gets the error.
    fn work_failed(&mut self, job: u32, error: WorkError) {
        let Some(j) = self.server.jobs.take(job) else {
            return;
        };
        if error == WorkError::Declined {
            self.counters.declines += 1;
        }
        let first = error.response();
        let status = first.status;
        let end = match &j.claim {
            Claim::Unkeyed => WorkEnd::Answered { status },
            Claim::Leased { id, lease, .. } => {
                let policy = self.server.config.on_error;
                let fail = self.steps.fail;
                match fail(self, id, lease, saved(&first)) {
                    Err(_) => WorkEnd::Fenced,
                    Ok(()) if policy == idem_store::ErrorPolicy::SaveResponse => {
                        WorkEnd::Saved { status }
                    }
                    Ok(()) => WorkEnd::Released { status },
                }
            }
        };
        if end == WorkEnd::Fenced {
            self.counters.fenced += 1;
        }
        let (c, request) = (j.origin.checkout, j.origin.message);
        self.record_step(c, StepKind::Worked { request, end });
        self.respond(j.origin, first);
    }

    fn work_save(&mut self, job: u32) {
        let Some(j) = self.server.jobs.take(job) else {
            return;
        };
        let now = self.now;
        let receipt = Receipt {
            order: j.order,
            charge: j.charge,
            amount: j.origin.amount,
            served_at: now,
        };
        let response = SavedResponse::json(201, receipt.to_body());
        let first = HttpResponse::original(response.clone());
        let end = match &j.claim {
            Claim::Unkeyed => WorkEnd::Answered { status: 201 },
            Claim::Leased { id, lease, .. } => {
                let save = self.steps.save;
                if save(self, id, lease, &j.fingerprint, response) {
                    WorkEnd::Saved { status: 201 }
                } else {
                    WorkEnd::Fenced
                }
            }
        };
        let (c, request) = (j.origin.checkout, j.origin.message);
        self.record_step(c, StepKind::Worked { request, end });
        if end == WorkEnd::Fenced {
            // Fenced: someone took the claim over; this zombie answers the lease-lost 409,
            // never its own result.
            self.counters.fenced += 1;
            self.respond(j.origin, http::lease_lost());
        } else {
            self.respond(j.origin, first);
        }
    }

    /// The store's table, for the bugs that bypass the store's rules.
    pub(super) fn table_mut(&mut self) -> &mut MemoryTable {
        self.server.store.table_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler's own errors are the store's problem bodies, with relative `type`s.
    #[test]
    fn work_errors_are_the_stores_problem_bodies() {
        for (error, status, kind) in [
            (WorkError::Declined, 402, problem::PAYMENT_DECLINED),
            (
                WorkError::PaycoTimeout,
                504,
                problem::PAYMENT_PROVIDER_TIMEOUT,
            ),
        ] {
            let r = error.response();
            assert_eq!(r.status, status);
            assert_eq!(r.header(http::CONTENT_TYPE), Some(http::PROBLEM_JSON));
            let p: http::Problem = serde_json::from_slice(&r.body).unwrap();
            assert_eq!((p.kind.as_str(), p.status), (kind, status));
            assert!(kind.starts_with("/problems/"), "{kind}");
            assert!(!p.title.is_empty() && !p.detail.is_empty());
            let kept = saved(&r);
            assert_eq!((kept.status, kept.body), (status, r.body.clone()));
            assert_eq!(kept.content_type, http::PROBLEM_JSON);
        }
    }
}
