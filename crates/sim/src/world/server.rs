//! The server: idem-store plus the checkout handler. The handler's work takes virtual time
//! (create order → charge PayCo → save), so faults land in the middle of it. The classic bugs
//! live here, on top of the store's public table primitives; the store itself stays correct.

use idem_client::Reply;
use idem_store::{
    http, Begin, Fingerprint, IdRef, Lease, MemoryTable, Record, RecordId, RouteConfig,
    SavedResponse, Status, Store, StoreConfig, Table,
};
use uuid::Uuid;

use super::client::Response;
use super::recovery::RecoveryPoints;
use super::{Ev, World, OPERATION, SCOPE};
use crate::config::ServerConfig;
use crate::ids::{CheckoutId, OrderId};
use crate::payco::{ChargeAnswer, ChargeCall, ChargeId, ChargeKey};
use crate::receipt::Receipt;

/// The store's 422 for a key reused with another payload (its wire format, not a copy).
fn mismatch() -> http::HttpResponse {
    // `response_for` answers every decision but Execute and Unkeyed, so this is always Some.
    http::response_for(&Begin::Mismatch).unwrap_or_else(|| http::in_flight(1))
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
    fn status(self) -> u16 {
        match self {
            WorkError::Declined => 402,
            WorkError::PaycoTimeout => 504,
        }
    }

    fn body(self) -> &'static [u8] {
        match self {
            WorkError::Declined => {
                br#"{"type":"https://idem.dev/problems/payment-declined","status":402}"#
            }
            WorkError::PaycoTimeout => {
                br#"{"type":"https://idem.dev/problems/payment-provider-timeout","status":504}"#
            }
        }
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
enum Claim {
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
    checkout: CheckoutId,
    token: u32,
    key: Option<Uuid>,
    amount: u32,
    claim: Claim,
    order: OrderId,
    charge: ChargeId,
    fingerprint: Fingerprint,
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

fn key_str<'b>(key: &Uuid, buf: &'b mut [u8; 36]) -> &'b str {
    key.hyphenated().encode_lower(buf)
}

/// The store's fingerprint of a request body. Every body the simulated clients send is already
/// canonical JSON (RFC 8785: the SDK's `CanonicalPayload`, or `body_for`, which a test pins to
/// it), and the store's fingerprint is SHA-256 of the canonical JSON, so the sim hashes the bytes
/// as they are instead of parsing and re-canonicalising them. That keeps a second JSON parser and
/// the canonicaliser out of the demo's wasm. Debug builds (the tests) check every body against
/// [`idem_store::fingerprint`].
fn canonical_fingerprint(body: &[u8]) -> Fingerprint {
    let fp = Fingerprint::of_canonical(OPERATION, body);
    debug_assert_eq!(
        idem_store::fingerprint(OPERATION, body).ok(),
        Some(fp),
        "a simulated request body is not canonical JSON"
    );
    fp
}

fn reply_from(saved: &SavedResponse, replayed: bool) -> Reply {
    Reply {
        status: saved.status,
        retry_after_ms: None,
        replayed,
        body: saved.body.clone(),
    }
}

impl World {
    pub(super) fn on_arrive(&mut self, slot: u32) {
        let Some(r) = self.requests.get_mut(slot) else {
            return;
        };
        r.copies -= 1;
        let (checkout, token, key, amount) = (r.checkout, r.token, r.key, r.amount);
        let body = if r.copies == 0 {
            self.requests.take(slot).map(|r| r.body).unwrap_or_default()
        } else {
            r.body.clone()
        };
        let now = self.now;
        let mut buf = [0u8; 36];
        let key_s = key.as_ref().map(|k| key_str(k, &mut buf));
        let store = &mut self.server.store;
        let fingerprint = if self.bugs.no_fingerprint_check {
            // The bug: every request under a key looks like the first one.
            Fingerprint([0; 32])
        } else {
            canonical_fingerprint(&body)
        };
        if self.bugs.select_then_insert {
            if let Some(k) = key_s {
                let lock_ms = store.config().lock_ms;
                let id = IdRef {
                    scope: SCOPE,
                    key: k,
                };
                let seen = store
                    .table()
                    .get(id)
                    .is_some_and(|r| !r.is_expired(now, lock_ms));
                if !seen {
                    // SELECT saw nothing; the INSERT comes after a gap, unconditionally.
                    let job = self.server.jobs.insert(Job {
                        checkout,
                        token,
                        key,
                        amount,
                        claim: Claim::Unkeyed,
                        order: OrderId(0),
                        charge: ChargeId(0),
                        fingerprint,
                    });
                    let at = now + self.server.config.claim_gap_ms;
                    self.schedule(at, Ev::Insert(job));
                    return;
                }
            }
        }
        if let (Some(trace), Some(key)) = (self.trace.as_mut(), key) {
            trace.push(super::StoreOp::Begin {
                at: now,
                checkout,
                amount,
                key,
            });
        }
        let route = self.server.route();
        let store = &mut self.server.store;
        match store.begin_with_fingerprint(now, SCOPE, key_s, fingerprint, &route) {
            Begin::Execute {
                id,
                lease,
                taken_over,
            } => {
                if taken_over {
                    self.counters.takeovers += 1;
                }
                let claim = Claim::Leased {
                    id,
                    lease,
                    taken_over,
                };
                self.start_job(checkout, token, key, amount, claim, fingerprint);
            }
            Begin::Unkeyed => {
                self.start_job(checkout, token, key, amount, Claim::Unkeyed, fingerprint)
            }
            Begin::Replay(saved) => {
                self.counters.replays += 1;
                let reply = reply_from(&saved, true);
                self.respond(Response {
                    checkout,
                    token,
                    key,
                    sent_amount: amount,
                    reply,
                });
            }
            Begin::InFlight { retry_after_ms } => {
                self.counters.conflicts += 1;
                let resp = http::in_flight(retry_after_ms);
                let wait = http::retry_after_secs(retry_after_ms) * 1000;
                self.answer(checkout, token, key, amount, 409, &resp.body, Some(wait));
            }
            Begin::Mismatch => {
                self.counters.mismatches += 1;
                let resp = mismatch();
                self.answer(checkout, token, key, amount, resp.status, &resp.body, None);
            }
            Begin::Invalid(e) => {
                let resp = http::problem_for(&e);
                self.answer(checkout, token, key, amount, resp.status, &resp.body, None);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn answer(
        &mut self,
        checkout: CheckoutId,
        token: u32,
        key: Option<Uuid>,
        amount: u32,
        status: u16,
        body: &[u8],
        retry_after_ms: Option<u64>,
    ) {
        self.respond(Response {
            checkout,
            token,
            key,
            sent_amount: amount,
            reply: Reply {
                status,
                retry_after_ms,
                replayed: false,
                body: body.to_vec(),
            },
        });
    }

    /// SELECT-then-INSERT bug: the unconditional insert after the gap.
    pub(super) fn on_insert(&mut self, job: u32) {
        let now = self.now;
        let retention = self.server.store.config().retention_ms;
        let Some(j) = self.server.jobs.get_mut(job) else {
            return;
        };
        let Some(key) = j.key else { return };
        let mut buf = [0u8; 36];
        let k = key_str(&key, &mut buf);
        let table: &mut MemoryTable = self.server.store.table_mut();
        let lease = Lease {
            locked_at: now,
            token: table.next_token(),
        };
        let record = Record {
            fingerprint: j.fingerprint,
            on_error: self.server.config.on_error,
            status: Status::InFlight { lease },
            created_at: now,
            expires_at: now + retention,
            retention_ms: retention,
        };
        let token = lease.token;
        table.put(
            IdRef {
                scope: SCOPE,
                key: k,
            },
            record,
        );
        // The bug's INSERT bypassed the store: note it where the store's events go.
        let text = format!("INSERT after a SELECT that saw nothing: lease #{token}, the work runs");
        self.server.store.push_event(now, SCOPE, Some(k), text);
        // A hyphenated UUID is always a valid key; were it not, the job would just not run.
        let Ok(parsed) = idem_store::IdempotencyKey::parse(k) else {
            return;
        };
        let id = RecordId::new(SCOPE, parsed);
        j.claim = Claim::Leased {
            id,
            lease,
            taken_over: false,
        };
        self.counters.executions += 1;
        self.schedule(
            now + self.server.config.order_ms,
            Ev::Work(job, Phase::Order),
        );
    }

    fn start_job(
        &mut self,
        checkout: CheckoutId,
        token: u32,
        key: Option<Uuid>,
        amount: u32,
        claim: Claim,
        fingerprint: Fingerprint,
    ) {
        self.counters.executions += 1;
        let job = self.server.jobs.insert(Job {
            checkout,
            token,
            key,
            amount,
            claim,
            order: OrderId(0),
            charge: ChargeId(0),
            fingerprint,
        });
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
        let bugs = self.bugs;
        let Some(j) = self.server.jobs.get(job) else {
            return;
        };
        // Two-step writes commit the order on its own, unlinked from the key: no recovery point.
        let recoverable = match (&j.claim, j.key) {
            (Claim::Leased { taken_over, .. }, Some(k)) if !bugs.two_step_write => {
                Some((k, j.fingerprint, *taken_over))
            }
            _ => None,
        };
        let point = recoverable.and_then(|(k, _, taken_over)| {
            // Both bugs below believe a fresh claim has no history: only a takeover looks.
            let looks = taken_over || !(bugs.fresh_order_after_release || bugs.select_then_insert);
            looks.then(|| self.server.recovery.find(k, now)).flatten()
        });
        let order = match (point, recoverable) {
            (Some(p), Some((_, fp, _))) if p.fingerprint != fp => {
                return self.refuse_other_payload(job)
            }
            (Some(p), _) => p.order,
            (None, _) => self.server.new_order(),
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
        let call = ChargeCall {
            order: j.order,
            checkout: j.checkout,
            amount: j.amount,
            key: (!self.bugs.key_only_at_top_hop).then_some(ChargeKey(j.order)),
            at: self.now,
        };
        let faults = self.net.faults();
        let (p_decline, p_timeout) = (faults.decline, faults.payco_timeout);
        let decline_first = self.bugs.decline_before_lookup;
        if decline_first
            && (std::mem::take(&mut self.oneshot.decline) || self.rng.chance(p_decline))
        {
            // The bug: the handler "declines" without asking PayCo what the key already holds.
            return self.work_failed(job, WorkError::Declined);
        }
        let timed_out =
            std::mem::take(&mut self.oneshot.payco_timeout) || self.rng.chance(p_timeout);
        // A timed-out call was lost on the way to PayCo or on the way back: the worker cannot
        // tell which. One that reached PayCo was decided and saved under its key.
        let reached = !timed_out || self.rng.chance(TIMED_OUT_AFTER_PAYCO);
        let answer = if reached {
            let (oneshot, rng) = (&mut self.oneshot, &mut self.rng);
            // PayCo's own decision, asked only for a key it has not seen.
            let declines = || {
                !decline_first && (std::mem::take(&mut oneshot.decline) || rng.chance(p_decline))
            };
            let reply = self.payco.charge(call, declines);
            if let (ChargeAnswer::Charged(_), false) = (reply.answer, reply.deduped) {
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
        let (status, body) = (error.status(), error.body());
        let kept = match &j.claim {
            Claim::Unkeyed => true,
            Claim::Leased { id, lease, .. } => {
                let response = SavedResponse::json(status, body.to_vec());
                self.fail_claim(id, lease, response)
            }
        };
        if !kept {
            self.counters.fenced += 1;
        }
        self.answer(j.checkout, j.token, j.key, j.amount, status, body, None);
    }

    /// A released key's recovery point belongs to another payload: give the claim back and
    /// answer 422, as the store answers a key reused with another payload while its record
    /// lives. Nothing ran.
    fn refuse_other_payload(&mut self, job: u32) {
        let Some(j) = self.server.jobs.take(job) else {
            return;
        };
        if let Claim::Leased { id, lease, .. } = &j.claim {
            if self.server.store.release(self.now, id, lease).is_err() {
                self.counters.fenced += 1;
            }
        }
        self.counters.mismatches += 1;
        let resp = mismatch();
        self.answer(
            j.checkout,
            j.token,
            j.key,
            j.amount,
            resp.status,
            &resp.body,
            None,
        );
    }

    /// The one place the handler hands a failed work to the store, which applies the policy
    /// the claim's route declared. False when the write was fenced (someone took it over).
    fn fail_claim(&mut self, id: &RecordId, lease: &Lease, response: SavedResponse) -> bool {
        self.server
            .store
            .fail(self.now, id, lease, response)
            .is_ok()
    }

    fn work_save(&mut self, job: u32) {
        let Some(j) = self.server.jobs.take(job) else {
            return;
        };
        let now = self.now;
        let receipt = Receipt {
            order: j.order,
            charge: j.charge,
            amount: j.amount,
            served_at: now,
        };
        let body = receipt.to_body();
        let saved = match &j.claim {
            Claim::Unkeyed => true,
            Claim::Leased { id, lease, .. } => {
                let response = SavedResponse::json(201, body.clone());
                if self.bugs.unfenced_writes {
                    let retention = self.server.store.config().retention_ms;
                    let key = id.as_ref().key.to_owned();
                    // Did a fence have something to refuse? Another lease holds the record now.
                    let overwrote = self.server.store.table().get(id.as_ref()).is_some_and(|r| {
                        !matches!(&r.status, Status::InFlight { lease: l } if l.token == lease.token)
                    });
                    let record = Record {
                        fingerprint: j.fingerprint,
                        on_error: self.server.config.on_error,
                        status: Status::Done { response },
                        created_at: lease.locked_at,
                        expires_at: now + retention,
                        retention_ms: retention,
                    };
                    self.server.store.table_mut().put(id.as_ref(), record);
                    // The write bypassed the store, so note it where the store's events go.
                    let text = if overwrote {
                        format!(
                            "unfenced save by lost lease #{}: overwrote the new owner's record",
                            lease.token
                        )
                    } else {
                        format!("unfenced save by lease #{}", lease.token)
                    };
                    self.server.store.push_event(now, SCOPE, Some(&key), text);
                    true
                } else if self.bugs.two_step_write {
                    self.server.store.save(now, id, lease, response).is_ok()
                } else {
                    self.server
                        .store
                        .commit(now, id, lease, || ((), response))
                        .is_ok()
                }
            }
        };
        if saved {
            self.answer(j.checkout, j.token, j.key, j.amount, 201, &body, None);
        } else {
            // Fenced: someone took the claim over; this zombie answers 500, never its own result.
            self.counters.fenced += 1;
            let resp = http::lease_lost();
            let wait = Some(1000);
            self.answer(
                j.checkout,
                j.token,
                j.key,
                j.amount,
                resp.status,
                &resp.body,
                wait,
            );
        }
    }
}
