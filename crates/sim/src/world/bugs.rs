//! The classic bugs, one named function each, and [`Steps`]: the handler's and the pages' steps
//! a bug replaces, chosen once from the config's bug list ([`Steps::for_bugs`]). The handler
//! and the pages call the steps and never ask which bugs are on; the correct step is the
//! default. The store itself never changes: the bugs that write around it use its public table
//! primitives and note what they did in its event log.
//!
//! | bug | step it replaces | the function |
//! |---|---|---|
//! | `new-key-per-attempt` | the strategy a same-key page follows | [`key_per_attempt`] |
//! | `select-then-insert` | the claim | [`select_then_insert`], then [`World::on_insert`] |
//! | `unfenced-writes` | the save | [`save_unfenced`] |
//! | `key-only-at-top-hop` | PayCo's key | [`no_downstream_key`] |
//! | `no-fingerprint-check` | the fingerprint | [`no_fingerprint`] |
//! | `short-retention` | the retention | [`short_retention`] |
//! | `two-step-write` | the save, and the recovery point | [`save_apart`], [`Recovery::Never`] |
//! | `decline-before-lookup` | who declines | [`decline_before_lookup`], [`payco_asked_after`] |
//! | `fresh-order-after-release` | the recovery point | [`Recovery::OnTakeover`] |
//! | `release-forgets-the-key` | the end of a failed work's claim, and the release of an unknown outcome | [`release_forgetting_the_key`], [`unknown_forgetting_the_key`] |
//! | `save-unknown-outcome` | the release of an unknown outcome | [`save_unknown_by_policy`] |
//! | `consumer-without-dedupe` | the outbox consumer's handling of a delivery | [`consume_without_dedupe`] |

use idem_store::{
    ErrorPolicy, Fenced, Fingerprint, IdRef, IdempotencyKey, Lease, Record, RecordId,
    SavedResponse, Status, Table,
};

use super::outbox::process_once;
use super::server::{canonical_fingerprint, key_str, Claim, Job, Phase};
use super::wire::Origin;
use super::{Ev, OneShots, World, SCOPE, SHORT_RETENTION_MS};
use crate::bug::Bug;
use crate::config::Strategy;
use crate::history::{Decision, StepKind};
use crate::ids::OrderId;
use crate::outbox::Handled;
use crate::payco::ChargeKey;
use crate::rng::SimRng;

/// When a worker looks for its key's recovery point (the order its key and payload created).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recovery {
    /// Written with every claim, looked up by every worker: a takeover and a claim after a
    /// release both resume the order.
    Always,
    /// Looked up only after a takeover: a worker that claims a released key believes it has no
    /// history and mints a new order (fresh-order-after-release; select-then-insert's claims
    /// believe the same).
    OnTakeover,
    /// Never written: the order is committed apart from the key's record (two-step-write).
    Never,
}

impl Recovery {
    /// Whether the claim writes a recovery point.
    pub fn writes(self) -> bool {
        self != Recovery::Never
    }

    /// Whether a worker that claimed (`taken_over`: by takeover) looks its point up.
    pub fn looks(self, taken_over: bool) -> bool {
        match self {
            Recovery::Always => true,
            Recovery::OnTakeover => taken_over,
            Recovery::Never => false,
        }
    }
}

/// The steps a classic bug can replace, as this world does them.
#[derive(Clone, Copy)]
pub(super) struct Steps {
    /// The strategy a page follows for the one it was started with.
    pub page_strategy: fn(Strategy) -> Strategy,
    /// The fingerprint the handler claims under.
    pub fingerprint: fn(&[u8]) -> Fingerprint,
    /// Takes the request before the store's claim when it claims another way (true: it did).
    pub claim_later: fn(&mut World, &Origin, Fingerprint) -> bool,
    /// When the recovery point is written and looked up.
    pub recovery: Recovery,
    /// The downstream key PayCo is charged under.
    pub charge_key: fn(OrderId) -> Option<ChargeKey>,
    /// The handler declines before asking PayCo (true: it declined).
    pub decline_unasked: fn(&mut World) -> bool,
    /// PayCo's own decision to decline a card it has not seen.
    pub payco_declines: fn(&mut OneShots, &mut SimRng, f64) -> bool,
    /// Saves a finished work's answer; false when the store refused it (fenced).
    pub save: fn(&mut World, &RecordId, &Lease, &Fingerprint, SavedResponse) -> bool,
    /// Ends a failed work's claim by the route's error policy (release it, or save `response`);
    /// `Err` when the store refused it (fenced).
    pub fail: fn(&mut World, &RecordId, &Lease, SavedResponse) -> Result<(), Fenced>,
    /// Ends the claim of a work whose PayCo outcome is unknown (`response` is the 502 it
    /// answers): released, whatever the policy. `Ok(true)` when it saved `response` instead;
    /// `Err` when the store refused it (fenced).
    pub unknown: fn(&mut World, &RecordId, &Lease, SavedResponse) -> Result<bool, Fenced>,
    /// The store's retention for the configured one.
    pub retention: fn(u64) -> u64,
    /// The outbox consumer's handling of one delivery of a message.
    pub consume: fn(&mut World, u32) -> Handled,
}

impl Steps {
    /// The correct steps, with each bug in `bugs` replacing its own.
    pub fn for_bugs(bugs: &[Bug]) -> Steps {
        let mut steps = Steps {
            page_strategy: as_chosen,
            fingerprint: canonical_fingerprint,
            claim_later: through_the_store,
            recovery: Recovery::Always,
            charge_key: downstream_key,
            decline_unasked: payco_decides,
            payco_declines: payco_draws,
            save: commit_fenced,
            fail: fail_by_policy,
            unknown: release_fenced,
            retention: as_configured,
            consume: process_once,
        };
        let (mut recovery_on_takeover, mut two_step, mut unfenced) = (false, false, false);
        for bug in bugs {
            match bug {
                Bug::NewKeyPerAttempt => steps.page_strategy = key_per_attempt,
                Bug::SelectThenInsert => {
                    steps.claim_later = select_then_insert;
                    recovery_on_takeover = true;
                }
                Bug::UnfencedWrites => unfenced = true,
                Bug::KeyOnlyAtTopHop => steps.charge_key = no_downstream_key,
                Bug::NoFingerprintCheck => steps.fingerprint = no_fingerprint,
                Bug::ShortRetention => steps.retention = short_retention,
                Bug::TwoStepWrite => two_step = true,
                Bug::DeclineBeforeLookup => {
                    steps.decline_unasked = decline_before_lookup;
                    steps.payco_declines = payco_asked_after;
                }
                Bug::FreshOrderAfterRelease => recovery_on_takeover = true,
                Bug::ReleaseForgetsTheKey => {
                    steps.fail = release_forgetting_the_key;
                    steps.unknown = unknown_forgetting_the_key;
                }
                Bug::SaveUnknownOutcome => steps.unknown = save_unknown_by_policy,
                Bug::ConsumerWithoutDedupe => steps.consume = consume_without_dedupe,
            }
        }
        if recovery_on_takeover {
            steps.recovery = Recovery::OnTakeover;
        }
        if two_step {
            // The order is committed apart from the key: no recovery point, whatever else is on.
            steps.recovery = Recovery::Never;
            steps.save = save_apart;
        }
        if unfenced {
            // An unfenced save overwrites whatever the other steps left.
            steps.save = save_unfenced;
        }
        steps
    }
}

// The correct steps.

fn as_chosen(strategy: Strategy) -> Strategy {
    strategy
}

fn through_the_store(_: &mut World, _: &Origin, _: Fingerprint) -> bool {
    false
}

fn downstream_key(order: OrderId) -> Option<ChargeKey> {
    Some(ChargeKey(order))
}

fn payco_decides(_: &mut World) -> bool {
    false
}

/// PayCo declines the armed one-shot or with probability `p` (drawn only then).
fn payco_draws(oneshot: &mut OneShots, rng: &mut SimRng, p: f64) -> bool {
    std::mem::take(&mut oneshot.decline) || rng.chance(p)
}

/// The one fenced write: the answer is saved only while this lease holds the claim.
fn commit_fenced(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    _: &Fingerprint,
    response: SavedResponse,
) -> bool {
    let now = world.now;
    world
        .server
        .store
        .commit(now, id, lease, || ((), response))
        .is_ok()
}

/// The store's `fail`: the route's policy, fenced; a release keeps the key bound to its
/// first payload.
fn fail_by_policy(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    response: SavedResponse,
) -> Result<(), Fenced> {
    let now = world.now;
    world.server.store.fail(now, id, lease, response)
}

/// The store's release, fenced: the key stays bound to its payload, and its retry resumes the
/// order.
fn release_fenced(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    _: SavedResponse,
) -> Result<bool, Fenced> {
    let now = world.now;
    world.server.store.release(now, id, lease).map(|()| false)
}

fn as_configured(retention_ms: u64) -> u64 {
    retention_ms
}

// The bugs.

/// new-key-per-attempt: a same-key page mints a key per attempt.
fn key_per_attempt(strategy: Strategy) -> Strategy {
    match strategy {
        Strategy::SameKey => Strategy::KeyPerAttempt,
        other => other,
    }
}

/// no-fingerprint-check: every request under a key looks like the first one.
fn no_fingerprint(_: &[u8]) -> Fingerprint {
    Fingerprint([0; 32])
}

/// select-then-insert: the claim reads the table and, seeing no live record, inserts after a
/// gap, unconditionally ([`World::on_insert`]): two first requests in that gap both insert and
/// both run the work.
fn select_then_insert(world: &mut World, origin: &Origin, fingerprint: Fingerprint) -> bool {
    let Some(key) = origin.key else {
        return false;
    };
    let now = world.now;
    let store = &world.server.store;
    let lock_ms = store.config().lock_ms;
    let mut buf = [0u8; 36];
    let id = IdRef {
        scope: SCOPE,
        key: key_str(&key, &mut buf),
    };
    let seen = store
        .table()
        .get(id)
        .is_some_and(|r| !r.is_expired(now, lock_ms));
    if seen {
        return false;
    }
    // SELECT saw nothing; the INSERT comes after a gap.
    let job = Job::new(*origin, Claim::Unkeyed, fingerprint);
    let job = world.server.jobs.insert(job);
    let at = now + world.server.config().claim_gap_ms;
    world.schedule(at, Ev::Insert(job));
    true
}

/// key-only-at-top-hop: PayCo is charged without `charge:<order>`.
fn no_downstream_key(_: OrderId) -> Option<ChargeKey> {
    None
}

/// decline-before-lookup: the handler decides a decline itself, before PayCo's key lookup
/// (the armed one-shot, or with the decline probability).
fn decline_before_lookup(world: &mut World) -> bool {
    let p = world.net.faults().decline;
    payco_draws(&mut world.oneshot, &mut world.rng, p)
}

/// decline-before-lookup: PayCo is asked after the handler decided, and never declines itself.
fn payco_asked_after(_: &mut OneShots, _: &mut SimRng, _: f64) -> bool {
    false
}

/// two-step-write: the answer is saved in a step of its own (still fenced), apart from the
/// order, which was committed without a recovery point.
fn save_apart(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    _: &Fingerprint,
    response: SavedResponse,
) -> bool {
    let now = world.now;
    world.server.store.save(now, id, lease, response).is_ok()
}

/// unfenced-writes: the save overwrites the record whoever holds it now: a zombie's answer
/// replaces the new owner's.
fn save_unfenced(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    fingerprint: &Fingerprint,
    response: SavedResponse,
) -> bool {
    let now = world.now;
    let retention = world.server.store.config().retention_ms;
    let on_error = world.server.config().on_error;
    let key = id.as_ref().key.to_owned();
    // Did a fence have something to refuse? Another lease holds the record now.
    let overwrote = world.server.store.table().get(id.as_ref()).is_some_and(
        |r| !matches!(&r.status, Status::InFlight { lease: l } if l.token == lease.token),
    );
    let record = Record {
        fingerprint: *fingerprint,
        on_error,
        status: Status::Done { response },
        created_at: lease.locked_at,
        expires_at: now + retention,
        retention_ms: retention,
    };
    world.table_mut().put(id.as_ref(), record);
    // The write bypassed the store, so note it where the store's events go.
    let text = if overwrote {
        format!(
            "unfenced save by lost lease #{}: overwrote the new owner's record",
            lease.token
        )
    } else {
        format!("unfenced save by lease #{}", lease.token)
    };
    world.server.store.push_event(now, SCOPE, Some(&key), text);
    true
}

/// release-forgets-the-key: under `release-claim`, a release deletes the record (fenced, as the
/// store's own release is): the key is free for any payload, so another cart under it claims
/// and runs, and the first payload's retry is answered 422 for work that ran.
fn release_forgetting_the_key(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    response: SavedResponse,
) -> Result<(), Fenced> {
    let now = world.now;
    let releases = world.server.config().on_error == ErrorPolicy::ReleaseClaim;
    let held = world
        .server
        .store
        .table()
        .get(id.as_ref())
        .is_some_and(|r| r.is_held_by(lease));
    if !(releases && held) {
        return world.server.store.fail(now, id, lease, response);
    }
    world.table_mut().remove(id.as_ref());
    // The delete bypassed the store, so note it where the store's events go.
    let text = format!(
        "release by lease #{} deleted the record: the key is free for any payload",
        lease.token
    );
    let key = id.as_ref().key.to_owned();
    world.server.store.push_event(now, SCOPE, Some(&key), text);
    Ok(())
}

/// release-forgets-the-key: the release of an unknown outcome deletes the record too.
fn unknown_forgetting_the_key(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    response: SavedResponse,
) -> Result<bool, Fenced> {
    let releases = world.server.config().on_error == ErrorPolicy::ReleaseClaim;
    if !releases {
        return release_fenced(world, id, lease, response);
    }
    release_forgetting_the_key(world, id, lease, response).map(|()| false)
}

/// save-unknown-outcome: the handler treats PayCo's timeout as the work's failure, so under
/// `save-response` it saves the 502 that says the outcome is unknown: every retry replays
/// it, and the checkout can never learn that PayCo charged. (idem-checkout releases it.)
fn save_unknown_by_policy(
    world: &mut World,
    id: &RecordId,
    lease: &Lease,
    response: SavedResponse,
) -> Result<bool, Fenced> {
    let now = world.now;
    let saves = world.server.config().on_error == ErrorPolicy::SaveResponse;
    world
        .server
        .store
        .fail(now, id, lease, response)
        .map(|()| saves)
}

/// short-retention: records are kept for less time than clients retry.
fn short_retention(retention_ms: u64) -> u64 {
    retention_ms.min(SHORT_RETENTION_MS)
}

impl World {
    /// select-then-insert: the unconditional insert after the gap; then the work runs.
    pub(super) fn on_insert(&mut self, job: u32) {
        let now = self.now;
        let retention = self.server.store.config().retention_ms;
        let on_error = self.server.config().on_error;
        let Some(j) = self.server.jobs.get(job) else {
            return;
        };
        let Some(key) = j.origin.key else { return };
        let (origin, fingerprint) = (j.origin, j.fingerprint);
        let mut buf = [0u8; 36];
        let k = key_str(&key, &mut buf);
        let table = self.table_mut();
        let lease = Lease {
            locked_at: now,
            token: table.next_token(),
        };
        let record = Record {
            fingerprint,
            on_error,
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
        let decision = Decision::Claimed { token };
        let request = origin.message;
        self.record_step(origin.checkout, StepKind::Decided { request, decision });
        // A hyphenated UUID is always a valid key; were it not, the job would just not run.
        let Ok(parsed) = IdempotencyKey::parse(k) else {
            return;
        };
        if let Some(j) = self.server.jobs.get_mut(job) {
            j.claim = Claim::Leased {
                id: RecordId::new(SCOPE, parsed),
                lease,
                taken_over: false,
            };
        }
        self.counters.executions += 1;
        self.checker
            .observe_run(origin.checkout, key, origin.amount);
        self.schedule(
            now + self.server.config().order_ms,
            Ev::Work(job, Phase::Order),
        );
    }
}

/// consumer-without-dedupe: the consumer sends a receipt for every delivery it gets, with no
/// table of message ids handled. At least once delivery then means at least one receipt: a
/// relay that resends after a crash, or a delivery duplicated on the way, sends it twice.
fn consume_without_dedupe(w: &mut World, m: u32) -> Handled {
    w.send_receipt(m);
    Handled::Applied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_correct_steps_are_the_default() {
        let steps = Steps::for_bugs(&[]);
        assert_eq!((steps.page_strategy)(Strategy::SameKey), Strategy::SameKey);
        assert_eq!((steps.charge_key)(OrderId(3)), Some(ChargeKey(OrderId(3))));
        assert_eq!((steps.retention)(86_400_000), 86_400_000);
        assert_eq!(steps.recovery, Recovery::Always);
        assert_eq!((steps.fingerprint)(b"{}"), canonical_fingerprint(b"{}"));
    }

    #[test]
    fn each_bug_replaces_its_step() {
        let one = |bug| Steps::for_bugs(&[bug]);
        let s = one(Bug::NewKeyPerAttempt);
        assert_eq!(
            (s.page_strategy)(Strategy::SameKey),
            Strategy::KeyPerAttempt
        );
        assert_eq!((s.page_strategy)(Strategy::NoKey), Strategy::NoKey);
        assert_eq!((one(Bug::KeyOnlyAtTopHop).charge_key)(OrderId(3)), None);
        assert_eq!((one(Bug::ShortRetention).retention)(86_400_000), 500);
        assert_eq!(
            one(Bug::FreshOrderAfterRelease).recovery,
            Recovery::OnTakeover
        );
        assert_eq!(one(Bug::SelectThenInsert).recovery, Recovery::OnTakeover);
        assert_eq!(one(Bug::TwoStepWrite).recovery, Recovery::Never);
        let both = Steps::for_bugs(&[Bug::TwoStepWrite, Bug::FreshOrderAfterRelease]);
        assert_eq!(both.recovery, Recovery::Never);
        assert_ne!(
            (one(Bug::NoFingerprintCheck).fingerprint)(b"{}"),
            canonical_fingerprint(b"{}")
        );
    }

    #[test]
    fn recovery_lookups() {
        assert!(Recovery::Always.looks(false) && Recovery::Always.writes());
        assert!(Recovery::OnTakeover.looks(true) && !Recovery::OnTakeover.looks(false));
        assert!(!Recovery::Never.looks(true) && !Recovery::Never.writes());
    }
}
