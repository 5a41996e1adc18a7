//! The rule core: the decision table as a pure step, for every kind of table.
//!
//! [`decide`] takes the row as one read showed it, `now`, the request's fingerprint and
//! `lock_ms`, and returns a [`Step`]: an answer that needs no write (replay, 409, 422), or
//! the one conditional [`Write`] the request needs (insert-if-absent, compare-and-set
//! takeover or claim again after a release, delete-if-expired). After the work, [`finish`]
//! turns the outcome into the one fenced write it needs ([`Finish`]: commit the response, or
//! release the claim). Nothing here reads a clock or touches storage; a table only performs
//! the writes:
//!
//! | write | in memory ([`crate::MemoryTable`]) | SQL |
//! |---|---|---|
//! | [`Write::Claim`] | `insert_if_absent` | `INSERT … ON CONFLICT (scope, key) DO NOTHING RETURNING token` |
//! | [`Write::TakeOver`] | `compare_and_set` | `UPDATE … SET token = <next>, released_token = NULL … WHERE … AND status = 'in_flight' AND token = $seen RETURNING token` |
//! | [`Write::Reclaim`] | `reclaim_if_released` | the same statement as [`Write::TakeOver`], `$seen` the released token |
//! | [`Write::ClearExpired`] | `delete_if_expired` | `DELETE … WHERE … AND expires_at <= $now AND (status = 'done' OR released_token = token OR locked_at + $lock_ms <= $now)` |
//! | [`Finish::Commit`] | `commit_if_held` | `UPDATE … SET status = 'done' … WHERE … AND token = $mine AND released_token IS DISTINCT FROM token` in the handler's transaction |
//! | [`Finish::Release`] | `release_if_held` | `UPDATE … SET released_token = token WHERE … AND status = 'in_flight' AND token = $mine AND released_token IS DISTINCT FROM token` |
//! | prune | `delete_expired` | the same condition as [`Write::ClearExpired`], in batches |
//!
//! A conditional write that changes no row means another writer got there between the read
//! and the write: the driver reads again and calls [`decide`] again, at most [`MAX_READS`]
//! times, then answers [`contended`] (409).
//!
//! **A key stays bound to its first request for its retention.** A release frees the lease,
//! not the key: the row stays, [`Status::Released`], with the fingerprint it was claimed
//! with. The same request claims it again ([`Write::Reclaim`]) and resumes the recovery
//! point the released worker left; another request under the key is 422, as it would be
//! while the claim was in flight or done (the IETF draft's and Stripe's rule: a key names
//! its first request's parameters, whatever became of the claim).
//!
//! Retention is per route: the claim fixes the row's span ([`retention_ms`]: the route's own,
//! else the store's default) and every claim, takeover, claim again and commit of the row
//! sets `expires_at` to [`expires_at`]`(now, row.retention_ms)`, the one place that adds
//! them. A release leaves `expires_at` as the claim set it: the recovery point the next
//! worker resumes was written with the claim, to the same span, so the row never outlives it.

use crate::{
    begin::Begin, fingerprint, first_sent::FirstSent, key, ErrorPolicy, EventKind, Fingerprint,
    KeyRequirement, Lease, Record, Rejection, RequestError, RequestTarget, RouteConfig,
    SavedResponse, Status, StoreConfig,
};

/// Reads of one request before it gives up and answers 409 ([`contended`]).
pub const MAX_READS: usize = 4;

/// What one read of the row decides.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'r> {
    /// Answer now; write nothing.
    Answer(Answer<'r>),
    /// Perform this conditional write. If it changed the row, the request holds the claim
    /// ([`Write::Claim`], [`Write::TakeOver`], [`Write::Reclaim`]) or the row is gone
    /// ([`Write::ClearExpired`]: decide again as if the read had found nothing); if it
    /// changed nothing, read again.
    Write(Write),
}

/// The answers that need no write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer<'r> {
    /// The operation finished: replay this response, byte for byte. The work must not run.
    Replay(&'r SavedResponse),
    /// Another worker holds a live claim: 409 with `Retry-After`. Nothing is saved.
    InFlight {
        /// Time left on the live lease, in milliseconds (at least 1).
        retry_after_ms: u64,
    },
    /// The key was first used for another operation or another body: 422, whether that
    /// first request's claim is in flight, released or done.
    Mismatch,
    /// No row (or one past retention), and the request says it was first sent longer ago than
    /// retention: 412, the expired-key guard ([`guard`]). Nothing is written.
    KeyExpired,
}

impl Answer<'_> {
    /// What the answer is for the caller and for the event log: the [`Begin`] to act on (the
    /// saved response cloned out of the row) and the event that records it. Every table, in
    /// memory or SQL, logs and answers through here.
    pub fn decided(self) -> (EventKind, Begin) {
        match self {
            Answer::Replay(response) => (
                EventKind::Replayed {
                    status: response.status,
                },
                Begin::Replay(response.clone()),
            ),
            Answer::InFlight { retry_after_ms } => (
                EventKind::Rejected {
                    status: 409,
                    reason: Rejection::InFlight { retry_after_ms },
                },
                Begin::InFlight { retry_after_ms },
            ),
            Answer::Mismatch => (
                EventKind::Rejected {
                    status: 422,
                    reason: Rejection::Mismatch,
                },
                Begin::Mismatch,
            ),
            Answer::KeyExpired => (
                EventKind::Rejected {
                    status: 412,
                    reason: Rejection::KeyExpired,
                },
                Begin::KeyExpired,
            ),
        }
    }
}

/// The conditional writes a request can need before its work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// No row: insert a new in-flight row ([`claim_record`]) if there still is none.
    Claim,
    /// The row is in flight under a stale lease: replace the lease by compare-and-set on
    /// `seen` (one winner); `created_at` and the fingerprint stay the first claim's.
    TakeOver {
        /// The stale lease as read.
        seen: Lease,
    },
    /// The row was released, and this is the request it was claimed for: claim it again by
    /// compare-and-set on the released lease (one winner). As for a takeover, `created_at`,
    /// the fingerprint and the retention stay the first claim's, and the new worker resumes
    /// the recovery point the released one left; unlike one, nobody's lease was cut short,
    /// so the claim counts as a claim (`taken_over: false`, logged as claimed).
    Reclaim {
        /// The lease that released the row, as read.
        released: Lease,
    },
    /// The row is past retention and no live claim: it counts as absent. Delete it if it is
    /// still expired, then claim.
    ClearExpired,
}

/// The fenced write that ends a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Save `response` as the row's answer (status `done`), if the claim is still ours.
    Commit(SavedResponse),
    /// Mark the row released, if the claim is still ours: the same request's retry claims
    /// it again and runs the work again from its recovery point; another request is 422.
    Release,
}

/// A request refused before any table is read (400 or 413), and what its event may name:
/// an invalid scope is logged as the empty scope, an invalid key as no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal<'a> {
    /// Why.
    pub error: RequestError,
    /// The request's scope, or `""` when the scope itself was refused.
    pub scope: &'a str,
    /// The request's key when it was valid.
    pub key: Option<&'a str>,
}

/// The checks every request passes before its row is read, in this order: scope valid,
/// key present (where the route requires one), key valid, body size, body JSON; then the
/// fingerprint of the route's operation and the body. `Ok(None)`: no key on an
/// optional-key route (checked for scope and size only), run the work unprotected.
pub fn check_request<'a>(
    scope: &'a str,
    key: Option<&'a str>,
    body: &[u8],
    route: &RouteConfig,
    config: &StoreConfig,
) -> Result<Option<(&'a str, Fingerprint)>, Refusal<'a>> {
    check_request_to(scope, key, body, None, route, config)
}

/// [`check_request`] for a request whose operation is read from the request itself (a layer
/// in front of many routes): with `target`, the fingerprint binds its method, route, path
/// parameters, query and body as [`RequestTarget::fingerprint`] reads them, instead of the
/// route's one operation and a JSON body.
pub fn check_request_to<'a>(
    scope: &'a str,
    key: Option<&'a str>,
    body: &[u8],
    target: Option<&RequestTarget>,
    route: &RouteConfig,
    config: &StoreConfig,
) -> Result<Option<(&'a str, Fingerprint)>, Refusal<'a>> {
    let key = check_id(scope, key, route)?;
    let limit = config.max_body_bytes;
    if body.len() > limit {
        let error = RequestError::BodyTooLarge {
            len: body.len(),
            limit,
        };
        return Err(Refusal { error, scope, key });
    }
    let Some(key) = key else {
        return Ok(None);
    };
    let fp = match target {
        Some(target) => target.fingerprint(body),
        None => fingerprint(&route.operation, body),
    };
    match fp {
        Ok(fp) => Ok(Some((key, fp))),
        Err(error) => Err(Refusal {
            error,
            scope,
            key: Some(key),
        }),
    }
}

/// The scope and key checks of [`check_request`], for a caller that fingerprints the
/// request itself. `Ok(None)`: no key on an optional-key route.
pub fn check_id<'a>(
    scope: &'a str,
    key: Option<&'a str>,
    route: &RouteConfig,
) -> Result<Option<&'a str>, Refusal<'a>> {
    if let Err(error) = key::validate_scope(scope) {
        return Err(Refusal {
            error,
            scope: "",
            key: None,
        });
    }
    let refuse = |error| Refusal {
        error,
        scope,
        key: None,
    };
    match (key, route.key) {
        (Some(k), _) => key::validate(k).map(Some).map_err(refuse),
        (None, KeyRequirement::Optional) => Ok(None),
        (None, KeyRequirement::Required) => Err(refuse(RequestError::MissingKey)),
    }
}

/// One request's read → decide → write loop, sans-IO: the in-memory [`Store`](crate::Store)
/// and the SQL tables both drive it, so the loop's rules exist once. A table asks
/// [`read`](Self::read) before each read of the row (past [`MAX_READS`] the answer is 409: the
/// row is contended), hands what it read to [`decide`](Self::decide), answers or performs the
/// conditional write it is given, and, when that write changed nothing (another request wrote
/// the row between the read and the write), goes round again.
///
/// ```
/// use idem_store::{rules::{Deciding, Step, Write}, Fingerprint};
///
/// let mut deciding = Deciding::new(Fingerprint([1; 32]), 1_000);
/// let mut claimed = false;
/// let answer = loop {
///     if let Err(contended) = deciding.read() {
///         break Some(contended.retry_after_ms); // 409
///     }
///     let row = None; // the table's read: no row yet
///     match deciding.decide(row, 0) {
///         Step::Answer(_) => break Some(0),
///         // The table's conditional write; say it landed.
///         Step::Write(Write::Claim) => { claimed = true; break None }
///         Step::Write(_) => continue,
///     }
/// };
/// assert!(claimed && answer.is_none());
/// ```
#[derive(Debug, Clone)]
pub struct Deciding {
    fingerprint: Fingerprint,
    lock_ms: u64,
    reads: usize,
    first_sent: Option<FirstSent>,
}

impl Deciding {
    /// The loop of a request fingerprinted `fingerprint`, leases of `lock_ms`.
    pub fn new(fingerprint: Fingerprint, lock_ms: u64) -> Self {
        Self {
            fingerprint,
            lock_ms,
            reads: 0,
            first_sent: None,
        }
    }

    /// The loop of a request that carries its first-sent time ([`first_sent`], `None` when it
    /// sent none or the guard is off): its decisions go through the expired-key [`guard`].
    pub fn with_first_sent(mut self, first_sent: Option<FirstSent>) -> Self {
        self.first_sent = first_sent;
        self
    }

    /// Count a read of the row about to be made, or, past [`MAX_READS`], [`Contended`]: answer
    /// 409 with its `Retry-After`, as for a live claim: someone else is writing this row right
    /// now, so it is in flight as far as this request can tell.
    pub fn read(&mut self) -> Result<(), Contended> {
        if self.reads == MAX_READS {
            return Err(Contended {
                retry_after_ms: contended(self.lock_ms),
            });
        }
        self.reads += 1;
        Ok(())
    }

    /// The decision table for `row` as read at `now` ([`decide`]), through the expired-key
    /// [`guard`].
    pub fn decide<'r>(&self, row: Option<&'r Record>, now: u64) -> Step<'r> {
        guard(
            decide(row, now, &self.fingerprint, self.lock_ms),
            self.first_sent.as_ref(),
            now,
        )
    }
}

/// A request that read its row [`MAX_READS`] times and never had a write land: 409.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contended {
    /// The `Retry-After` to answer with ([`contended`]).
    pub retry_after_ms: u64,
}

/// The decision table, for one read of the row (`None`: no row).
pub fn decide<'r>(
    row: Option<&'r Record>,
    now: u64,
    fingerprint: &Fingerprint,
    lock_ms: u64,
) -> Step<'r> {
    let Some(row) = row else {
        return Step::Write(Write::Claim);
    };
    if row.is_expired(now, lock_ms) {
        return Step::Write(Write::ClearExpired);
    }
    if row.fingerprint != *fingerprint {
        return Step::Answer(Answer::Mismatch);
    }
    match &row.status {
        Status::Done { response } => Step::Answer(Answer::Replay(response)),
        Status::InFlight { lease } if lease.is_live(now, lock_ms) => {
            Step::Answer(Answer::InFlight {
                retry_after_ms: lease.time_left(now, lock_ms),
            })
        }
        Status::InFlight { lease } => Step::Write(Write::TakeOver { seen: *lease }),
        Status::Released { lease } => Step::Write(Write::Reclaim { released: *lease }),
    }
}

/// The expired-key guard over one decision ([`crate::first_sent`]): a claim of a key with no
/// row, or with a row past retention ([`Write::Claim`], [`Write::ClearExpired`]), by a request
/// first sent longer ago than retention plus the tolerance ([`FirstSent::refuses`]) becomes
/// [`Answer::KeyExpired`]. Every other step passes: a row that is still there decides.
pub fn guard<'r>(step: Step<'r>, first_sent: Option<&FirstSent>, now: u64) -> Step<'r> {
    match step {
        Step::Write(Write::Claim | Write::ClearExpired)
            if first_sent.is_some_and(|sent| sent.refuses(now)) =>
        {
            Step::Answer(Answer::KeyExpired)
        }
        step => step,
    }
}

/// What the guard compares a request's first-sent time `at_ms` (its header, parsed) to: the
/// route's retention ([`retention_ms`]) and the store's tolerance; `None` when the request
/// sent no header or the guard is off ([`StoreConfig::first_sent_tolerance_ms`]).
pub fn first_sent(
    at_ms: Option<u64>,
    route: &RouteConfig,
    config: &StoreConfig,
) -> Option<FirstSent> {
    Some(FirstSent {
        at_ms: at_ms?,
        retention_ms: retention_ms(route, config),
        tolerance_ms: config.first_sent_tolerance_ms?,
    })
}

/// What a failed work does to its claim under the route's `policy`: release it, or save
/// `response` for replay.
pub fn finish(policy: ErrorPolicy, response: SavedResponse) -> Finish {
    match policy {
        ErrorPolicy::ReleaseClaim => Finish::Release,
        ErrorPolicy::SaveResponse => Finish::Commit(response),
    }
}

/// The row a [`Write::Claim`] inserts: in flight under `lease`, with the route's error
/// policy and retention ([`retention_ms`]), retention counted from `now`.
pub fn claim_record(
    now: u64,
    fingerprint: Fingerprint,
    route: &RouteConfig,
    lease: Lease,
    config: &StoreConfig,
) -> Record {
    let retention_ms = retention_ms(route, config);
    Record {
        fingerprint,
        on_error: route.on_error,
        status: Status::InFlight { lease },
        created_at: now,
        expires_at: expires_at(now, retention_ms),
        retention_ms,
    }
}

/// How long a row claimed through `route` is kept after each write: the route's own
/// [`RouteConfig::retention_ms`], else the store's default. Fixed in the row at the claim.
pub fn retention_ms(route: &RouteConfig, config: &StoreConfig) -> u64 {
    route.retention_ms.unwrap_or(config.retention_ms)
}

/// When retention ends for a row written at `now` whose span is `retention_ms` (the row's
/// own, [`Record::retention_ms`]): claims, takeovers, claims again after a release and
/// commits restart it (a release does not). Every table,
/// in memory or SQL, computes `expires_at` here and nowhere else.
pub fn expires_at(now: u64, retention_ms: u64) -> u64 {
    now.saturating_add(retention_ms)
}

/// The 409's `Retry-After` for a request that found its row changing under every one of
/// its [`MAX_READS`] reads: someone else is writing the row right now.
pub fn contended(lock_ms: u64) -> u64 {
    lock_ms.clamp(1, 1_000)
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    const LOCK_MS: u64 = 100;

    #[test]
    fn a_loop_reads_at_most_max_reads_times_then_answers_contended() {
        let mut deciding = Deciding::new(fp(1), LOCK_MS);
        for _ in 0..MAX_READS {
            assert_eq!(deciding.read(), Ok(()));
            assert_eq!(deciding.decide(None, 0), Step::Write(Write::Claim));
        }
        assert_eq!(
            deciding.read(),
            Err(Contended {
                retry_after_ms: contended(LOCK_MS)
            })
        );
        // The same table as `decide` itself, for a row as read.
        let row = in_flight(0, 10_000);
        assert_eq!(
            deciding.decide(Some(&row), 1),
            decide(Some(&row), 1, &fp(1), LOCK_MS)
        );
    }

    fn fp(n: u8) -> Fingerprint {
        Fingerprint([n; 32])
    }

    fn in_flight(locked_at: u64, expires_at: u64) -> Record {
        Record {
            fingerprint: fp(1),
            on_error: ErrorPolicy::SaveResponse,
            status: Status::InFlight {
                lease: Lease {
                    locked_at,
                    token: 7,
                },
            },
            created_at: locked_at,
            expires_at,
            retention_ms: 1_000,
        }
    }

    #[test]
    fn each_row_of_the_table() {
        let live = in_flight(50, 1_000);
        let done = Record {
            status: Status::Done {
                response: SavedResponse::json(201, b"{}".to_vec()),
            },
            ..live.clone()
        };
        assert_eq!(decide(None, 0, &fp(1), LOCK_MS), Step::Write(Write::Claim));
        assert_eq!(
            decide(Some(&live), 60, &fp(2), LOCK_MS),
            Step::Answer(Answer::Mismatch)
        );
        assert_eq!(
            decide(Some(&live), 60, &fp(1), LOCK_MS),
            Step::Answer(Answer::InFlight { retry_after_ms: 90 })
        );
        assert_eq!(
            decide(Some(&live), 150, &fp(1), LOCK_MS),
            Step::Write(Write::TakeOver {
                seen: Lease {
                    locked_at: 50,
                    token: 7
                }
            })
        );
        let Status::Done { response } = &done.status else {
            unreachable!()
        };
        assert_eq!(
            decide(Some(&done), 999, &fp(1), LOCK_MS),
            Step::Answer(Answer::Replay(response))
        );
        // Past retention, a different body claims afresh.
        assert_eq!(
            decide(Some(&done), 1_000, &fp(2), LOCK_MS),
            Step::Write(Write::ClearExpired)
        );
        // A live claim past retention is still live.
        let short = in_flight(950, 960);
        assert_eq!(
            decide(Some(&short), 1_000, &fp(1), LOCK_MS),
            Step::Answer(Answer::InFlight { retry_after_ms: 50 })
        );
    }

    /// The expired-key guard turns a claim of a missing or expired row into 412 for a request
    /// first sent too long ago, and nothing else: a row that is still there decides.
    #[test]
    fn the_guard_refuses_only_a_claim_by_a_request_first_sent_too_long_ago() {
        let sent = FirstSent {
            at_ms: 0,
            retention_ms: 1_000,
            tolerance_ms: 100,
        };
        let guarded = Deciding::new(fp(1), LOCK_MS).with_first_sent(Some(sent));
        let unguarded = Deciding::new(fp(1), LOCK_MS);
        let expired = Step::Answer(Answer::KeyExpired);
        // No row: claimed up to retention + tolerance after the first send, refused after.
        assert_eq!(guarded.decide(None, 1_099), Step::Write(Write::Claim));
        assert_eq!(guarded.decide(None, 1_100), expired);
        assert_eq!(unguarded.decide(None, 1_100), Step::Write(Write::Claim));
        // A row past retention counts as none.
        let gone = in_flight(0, 1_000);
        assert_eq!(guarded.decide(Some(&gone), 5_000), expired);
        assert_eq!(
            unguarded.decide(Some(&gone), 5_000),
            Step::Write(Write::ClearExpired)
        );
        // A row still kept decides as ever, however old the first send.
        let live = in_flight(4_950, 10_000);
        assert_eq!(
            guarded.decide(Some(&live), 5_000),
            Step::Answer(Answer::InFlight { retry_after_ms: 50 })
        );
        let stale = in_flight(4_000, 10_000);
        assert!(matches!(
            guarded.decide(Some(&stale), 5_000),
            Step::Write(Write::TakeOver { .. })
        ));
        let other = Deciding::new(fp(2), LOCK_MS).with_first_sent(Some(sent));
        assert_eq!(
            other.decide(Some(&live), 5_000),
            Step::Answer(Answer::Mismatch)
        );
        // The guard is off without a header or without a tolerance.
        let route = RouteConfig::required("POST /x", ErrorPolicy::SaveResponse);
        let mut config = StoreConfig::default();
        assert_eq!(first_sent(None, &route, &config), None);
        assert_eq!(
            first_sent(Some(7), &route, &config),
            Some(FirstSent {
                at_ms: 7,
                retention_ms: config.retention_ms,
                tolerance_ms: crate::first_sent::DEFAULT_TOLERANCE_MS,
            })
        );
        config.first_sent_tolerance_ms = None;
        assert_eq!(first_sent(Some(7), &route, &config), None);
    }

    /// A release frees the lease, not the key: the same request claims again (live lease or
    /// not), another is 422, and past retention the row counts as absent.
    #[test]
    fn a_released_row_stays_bound_to_its_fingerprint() {
        let released = Lease {
            locked_at: 50,
            token: 7,
        };
        let row = Record {
            status: Status::Released { lease: released },
            ..in_flight(50, 1_000)
        };
        for now in [60, 150, 999] {
            assert_eq!(
                decide(Some(&row), now, &fp(1), LOCK_MS),
                Step::Write(Write::Reclaim { released }),
                "at {now}"
            );
            assert_eq!(
                decide(Some(&row), now, &fp(2), LOCK_MS),
                Step::Answer(Answer::Mismatch),
                "at {now}"
            );
        }
        // A release inside the lease is no live claim: retention ends it on time.
        let short = Record {
            expires_at: 60,
            ..row
        };
        assert!(!short.is_live_claim(60, LOCK_MS) && short.is_expired(60, LOCK_MS));
        assert_eq!(
            decide(Some(&short), 60, &fp(2), LOCK_MS),
            Step::Write(Write::ClearExpired)
        );
        assert!(short.is_released_by(&released) && short.lease().is_none());
    }

    #[test]
    fn a_failure_follows_the_policy() {
        let r = SavedResponse::json(402, b"{}".to_vec());
        assert_eq!(
            finish(ErrorPolicy::ReleaseClaim, r.clone()),
            Finish::Release
        );
        assert_eq!(
            finish(ErrorPolicy::SaveResponse, r.clone()),
            Finish::Commit(r)
        );
    }

    #[test]
    fn claims_start_retention_at_now() {
        let config = StoreConfig {
            retention_ms: 500,
            ..StoreConfig::default()
        };
        let lease = Lease {
            locked_at: 10,
            token: 3,
        };
        let route = RouteConfig::required("POST /x", ErrorPolicy::ReleaseClaim);
        let r = claim_record(10, fp(4), &route, lease, &config);
        assert_eq!((r.created_at, r.expires_at), (10, 510));
        assert_eq!(r.retention_ms, 500);
        assert_eq!(r.on_error, ErrorPolicy::ReleaseClaim);
        assert_eq!(r.status, Status::InFlight { lease });
        // A route's own retention wins over the store's, and is kept in the row.
        let short = route.with_retention_ms(70);
        let r = claim_record(10, fp(4), &short, lease, &config);
        assert_eq!((r.expires_at, r.retention_ms), (80, 70));
        assert_eq!(expires_at(u64::MAX, 500), u64::MAX);
        assert_eq!(
            (contended(0), contended(300), contended(60_000)),
            (1, 300, 1_000)
        );
    }
}
