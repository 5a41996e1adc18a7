//! The server: idem-store plus the checkout, idem-checkout's state machine driven in virtual
//! time. The work takes time (create order → charge PayCo → save), so faults land in the
//! middle of it; each [`Step`] the machine asks for becomes an event here, and every answer is
//! one it or the store wrote (`response_for`, `lease_lost`), as idem-server's are. The classic
//! bugs replace named steps (`bugs.rs`), never the store or the machine.

use idem_checkout::{ChargeOutcome, Checkout as Work, Ending, Settle, Settled, Step};
use idem_store::http::{self, to_saved, HttpResponse};
use idem_store::{
    Begin, Fingerprint, IdRef, Lease, MemoryTable, RecordId, RouteConfig, Status, Store,
    StoreConfig, Table,
};
use uuid::Uuid;

use super::client::request_for;
use super::recovery::RecoveryPoints;
use super::wire::{Arrival, Origin};
use super::{Ev, World, OPERATION, SCOPE};
use crate::config::ServerConfig;
use crate::history::{Decision, Fate, MessageKind, PaycoDecision, StepKind, WorkEnd};
use crate::ids::OrderId;
use crate::payco::{ChargeAnswer, ChargeCall};

/// Share of timed-out PayCo calls that reached PayCo (lost on the way back, not on the way
/// there): PayCo decided and saved its answer, the worker never heard it.
const TIMED_OUT_AFTER_PAYCO: f64 = 0.5;

/// Why a PayCo call that timed out has no outcome (the 502's detail).
pub(super) const PAYCO_TIMED_OUT: &str =
    "PayCo did not answer in time; the charge may or may not have happened";

/// The answer a decision that needs no work calls for (every `Begin` but `Execute` and
/// `Unkeyed`): the store's wire value.
fn decided(begin: &Begin) -> HttpResponse {
    // `response_for` answers every decision but Execute and Unkeyed, which never reach here.
    http::response_for(begin).unwrap_or_else(http::internal_error)
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
    pub fingerprint: Fingerprint,
    /// The checkout's state machine.
    pub work: Work,
    /// The settlement the machine asked for, written at [`Phase::Save`].
    pub settle: Option<Settle>,
}

impl Job {
    pub(super) fn new(origin: Origin, claim: Claim, fingerprint: Fingerprint) -> Job {
        let request = request_for(origin.checkout, origin.amount);
        Job {
            origin,
            claim,
            order: OrderId(0),
            fingerprint,
            work: Work::new(&request),
            settle: None,
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
        let begin = store.begin_first_sent(now, SCOPE, key, origin.first_sent, fingerprint, &route);
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
            Begin::KeyExpired => {
                self.counters.key_expired += 1;
                Decision::KeyExpired
            }
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
        let looked = recoverable.filter(|&(_, _, taken_over)| recovery.looks(taken_over));
        let point = looked.and_then(|(k, fp, _)| self.server.recovery.find(k, fp, now));
        let Some(j) = self.server.jobs.get_mut(job) else {
            return;
        };
        // The machine says whether to resume the point's order or create one; the simulated
        // orders table always has the order a point names.
        let step = match looked {
            Some(_) => j.work.resume(point.map(|o| wire_id(o.0))),
            None => Step::CreateOrder,
        };
        let order = match step {
            Step::ResumeOrder(id) => OrderId(id.unsigned_abs()),
            _ => self.server.new_order(),
        };
        let Some(j) = self.server.jobs.get_mut(job) else {
            return;
        };
        j.order = order;
        let charge = j.work.order_ready(wire_id(order.0));
        debug_assert!(
            matches!(&charge, Step::Charge(call) if call.key == crate::payco::ChargeKey(order).to_string())
        );
        if let Some((k, fp, _)) = recoverable {
            // The recovery point, written in the claim's transaction; it lives as long as the
            // key's record may.
            self.server
                .recovery
                .record(k, fp, order, now.saturating_add(retention));
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
        let outcome = self.charge_payco(&origin, call);
        if let ChargeOutcome::Charged { .. } = outcome {
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
        }
        let save_at = self.now + self.server.config.save_ms;
        let Some(j) = self.server.jobs.get_mut(job) else {
            return;
        };
        // A paid order's receipt is served when its save lands.
        match j.work.charged(outcome, save_at) {
            Step::Settle(settle) if settle.ending == Ending::Success => {
                j.settle = Some(settle);
                self.schedule(save_at, Ev::Work(job, Phase::Save));
            }
            // A decline is settled at once, by the route's policy.
            Step::Settle(settle) => self.settle_failure(job, settle),
            Step::Release => self.release_unknown(job),
            // The machine answered at once (an input out of order): send what it says.
            other => {
                if let Some(j) = self.server.jobs.take(job) {
                    let end = WorkEnd::Answered { status: 500 };
                    self.work_ended(&j, end, other);
                }
            }
        }
    }

    /// Ask PayCo for `call` (or, under decline-before-lookup, decide a decline without it),
    /// recording the messages and PayCo's decision: what the worker learned.
    fn charge_payco(&mut self, origin: &Origin, call: ChargeCall) -> ChargeOutcome {
        let (c, n) = (origin.checkout, origin.attempt);
        let decline_unasked = self.steps.decline_unasked;
        if decline_unasked(self) {
            let request = origin.message;
            self.record_step(c, StepKind::DeclinedUnasked { request });
            return ChargeOutcome::Declined;
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
        match (timed_out, answer) {
            (true, _) => {
                self.counters.payco_timeouts += 1;
                ChargeOutcome::Unknown {
                    reason: PAYCO_TIMED_OUT.to_owned(),
                }
            }
            (false, Some(ChargeAnswer::Charged(id))) => ChargeOutcome::Charged {
                charge: id.to_string(),
            },
            (false, _) => ChargeOutcome::Declined,
        }
    }

    /// PayCo declined: the order is declined and the claim follows the route's error policy
    /// (released: a retry resumes the order under the same PayCo key; saved: retries replay
    /// this answer); the client gets the 402.
    fn settle_failure(&mut self, job: u32, settle: Settle) {
        let Some(mut j) = self.server.jobs.take(job) else {
            return;
        };
        self.counters.declines += 1;
        let status = settle.answer.status;
        let (end, settled) = match &j.claim {
            Claim::Unkeyed => {
                // No key, nothing to fence: the order is paid and its message written at once.
                self.write_outbox(j.order, j.origin.checkout);
                (WorkEnd::Answered { status }, Settled::Committed)
            }
            Claim::Leased { id, lease, .. } => {
                let policy = self.server.config.on_error;
                let fail = self.steps.fail;
                match fail(self, id, lease, to_saved(&settle.answer)) {
                    Err(_) => (WorkEnd::Fenced, Settled::Fenced),
                    Ok(()) if policy == idem_store::ErrorPolicy::SaveResponse => {
                        (WorkEnd::Saved { status }, Settled::Committed)
                    }
                    Ok(()) => (WorkEnd::Released { status }, Settled::Committed),
                }
            }
        };
        let answer = j.work.settled(settled);
        self.work_ended(&j, end, answer);
    }

    /// PayCo's outcome is unknown: the claim is released whatever the route's policy (a retry
    /// resumes the order and asks PayCo again under its key), and the client gets the 502.
    fn release_unknown(&mut self, job: u32) {
        let Some(mut j) = self.server.jobs.take(job) else {
            return;
        };
        let Step::Answer(answer) = j.work.released() else {
            return;
        };
        let status = answer.status;
        let end = match &j.claim {
            Claim::Unkeyed => WorkEnd::Answered { status },
            Claim::Leased { id, lease, .. } => {
                let unknown = self.steps.unknown;
                match unknown(self, id, lease, to_saved(&answer)) {
                    Err(_) => WorkEnd::Fenced,
                    Ok(true) => WorkEnd::Saved { status },
                    Ok(false) => WorkEnd::Released { status },
                }
            }
        };
        self.work_ended(&j, end, Step::Answer(answer));
    }

    fn work_save(&mut self, job: u32) {
        let Some(mut j) = self.server.jobs.take(job) else {
            return;
        };
        let Some(settle) = j.settle.take() else {
            return;
        };
        let status = settle.answer.status;
        let (end, settled) = match &j.claim {
            Claim::Unkeyed => (WorkEnd::Answered { status }, Settled::Committed),
            Claim::Leased { id, lease, .. } => {
                let save = self.steps.save;
                if save(self, id, lease, &j.fingerprint, to_saved(&settle.answer)) {
                    // The order paid and its order.paid message, in the same fenced step.
                    self.write_outbox(j.order, j.origin.checkout);
                    (WorkEnd::Saved { status }, Settled::Committed)
                } else {
                    // Someone took the claim over: this zombie answers the lease-lost 409,
                    // never its own result.
                    (WorkEnd::Fenced, Settled::Fenced)
                }
            }
        };
        let answer = j.work.settled(settled);
        self.work_ended(&j, end, answer);
    }

    /// The work ended: record how, and send the machine's answer.
    fn work_ended(&mut self, j: &Job, end: WorkEnd, answer: Step) {
        if end == WorkEnd::Fenced {
            self.counters.fenced += 1;
        }
        if let (WorkEnd::Saved { status }, Some(key)) = (end, j.origin.key) {
            self.checker.observe_saved(j.origin.checkout, key, status);
        }
        let (c, request) = (j.origin.checkout, j.origin.message);
        self.record_step(c, StepKind::Worked { request, end });
        let answer = match answer {
            Step::Answer(answer) => answer,
            _ => http::internal_error(),
        };
        self.respond(j.origin, answer);
    }

    /// The store's table, for the bugs that bypass the store's rules.
    pub(super) fn table_mut(&mut self) -> &mut MemoryTable {
        self.server.store.table_mut()
    }
}

/// An order id as the checkout machine (and idem-server's database) writes it.
fn wire_id(order: u64) -> i64 {
    i64::try_from(order).unwrap_or(i64::MAX)
}
