//! Random sequences of claim / save / commit / fail / release / renew / advance time / prune
//! (takeovers happen when time passes a lease; a released key stays bound to its request,
//! which claims it again) across several keys, scopes and two routes
//! (two operations with opposite error policies, one with a retention of its own), checked
//! step by step against a small reference model of the decision table.
//!
//! Written once over [`Claims`]: the store's tests run it over the in-memory `Store`, the
//! server's over SQLite and PostgreSQL (with fewer cases; each says how many).

use std::collections::BTreeMap;

use proptest::prelude::*;

use idem_store::{
    Begin, ErrorPolicy, Fenced, Lease, RecordId, RouteConfig, RowState, SavedResponse, StoreConfig,
};

use super::Claims;

const SCOPES: [&str; 2] = ["tenant-a", "tenant-b"];
/// Two operations: the same body sent to both is two requests, and each declares its own
/// error policy, which `fail` must follow. The second keeps its rows 900 ms (the store's
/// default is drawn by [`config`]), so rows of both spans expire side by side.
const ROUTES: [RouteConfig; 2] = [
    RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse),
    RouteConfig::required("POST /api/cancel", ErrorPolicy::ReleaseClaim).with_retention_ms(900),
];
const KEYS: [&str; 3] = ["k1", "k2", "k3"];
/// Two payloads, each spelled three equivalent ways.
const BODIES: [[&str; 3]; 2] = [
    [
        r#"{"cart":"c1","amount":100}"#,
        r#"{ "amount": 100, "cart": "c1" }"#,
        "{\"amount\":100.0,\n\"cart\":\"c1\"}",
    ],
    [
        r#"{"cart":"c1","amount":200}"#,
        r#"{"amount":2e2,"cart":"c1"}"#,
        "\t{\"cart\" : \"c1\", \"amount\" : 200}",
    ],
];

/// One step of a run.
#[derive(Debug, Clone)]
pub enum Op {
    /// A request; `key: None` is a missing key on the required route.
    Begin {
        route: usize,
        scope: usize,
        key: Option<usize>,
        payload: usize,
        spelling: usize,
    },
    /// Two-step save by worker number `worker` (modulo the workers so far).
    Save { worker: usize, status: u16 },
    /// One-step commit.
    Commit { worker: usize },
    /// Work error: the claiming route's policy applies.
    Fail { worker: usize },
    /// Release the claim.
    Release { worker: usize },
    /// Renew the worker's lease (the heartbeat of long work).
    Renew { worker: usize },
    /// Let time pass.
    Advance { ms: u64 },
    /// Prune expired records.
    Prune,
}

/// A random step.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (prop::sample::select(vec![0usize, 0, 0, 1]), 0..SCOPES.len(), prop::option::weighted(0.95, 0..KEYS.len()), 0..2usize, 0..3usize)
            .prop_map(|(route, scope, key, payload, spelling)| Op::Begin { route, scope, key, payload, spelling }),
        2 => (any::<usize>(), prop::sample::select(vec![200u16, 201, 402])).prop_map(|(worker, status)| Op::Save { worker, status }),
        2 => any::<usize>().prop_map(|worker| Op::Commit { worker }),
        2 => any::<usize>().prop_map(|worker| Op::Fail { worker }),
        1 => any::<usize>().prop_map(|worker| Op::Release { worker }),
        2 => any::<usize>().prop_map(|worker| Op::Renew { worker }),
        3 => prop_oneof![Just(0u64), 1..400u64, 400..2_500u64].prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::Prune),
    ]
}

/// A random configuration (lease and retention short enough that steps cross them).
pub fn config() -> impl Strategy<Value = StoreConfig> {
    (
        prop::sample::select(vec![0u64, 300, 1_000]),
        prop::sample::select(vec![150u64, 2_000, 6_000]),
    )
        .prop_map(|(lock_ms, retention_ms)| StoreConfig {
            first_sent_tolerance_ms: None,
            lock_ms,
            retention_ms,
            max_body_bytes: 1_024,
            event_capacity: 64,
        })
}

/// The model's view of a record.
#[derive(Debug, Clone, PartialEq)]
enum State {
    InFlight {
        locked_at: u64,
        token: u64,
    },
    /// Released by this lease: still bound to its route and payload.
    Released {
        locked_at: u64,
        token: u64,
    },
    Done {
        response: SavedResponse,
    },
}

#[derive(Debug, Clone)]
struct Row {
    route: usize,
    payload: usize,
    state: State,
    created_at: u64,
    expires_at: u64,
}

#[derive(Debug, Default)]
struct Model {
    rows: BTreeMap<(usize, usize), Row>,
    last_token: u64,
}

impl Model {
    fn expired(row: &Row, now: u64, lock_ms: u64) -> bool {
        let live =
            matches!(row.state, State::InFlight { locked_at, .. } if now < locked_at + lock_ms);
        now >= row.expires_at && !live
    }

    /// The row, if held in flight by `token`.
    fn held(&mut self, id: (usize, usize), token: u64) -> Option<&mut Row> {
        self.rows
            .get_mut(&id)
            .filter(|r| matches!(r.state, State::InFlight { token: t, .. } if t == token))
    }

    /// Release the row held by `lease`: it stays, bound, its retention unchanged.
    fn release(&mut self, id: (usize, usize), lease: &Lease) {
        if let Some(row) = self.held(id, lease.token) {
            row.state = State::Released {
                locked_at: lease.locked_at,
                token: lease.token,
            };
        }
    }
}

/// A worker that got `Execute`: where, and with which lease.
struct Worker {
    at: (usize, usize),
    id: RecordId,
    lease: Lease,
}

fn response(status: u16, token: u64) -> SavedResponse {
    SavedResponse::json(status, format!(r#"{{"by":{token}}}"#).into_bytes())
}

/// Run `ops` on `store`, an empty table under `config`, checking every answer and the
/// whole table after every step against the model.
pub fn run<T: Claims>(
    store: &mut T,
    config: StoreConfig,
    ops: Vec<Op>,
) -> Result<(), TestCaseError> {
    let lock_ms = config.lock_ms;
    // The model's own spelling of per-route retention: the route's, else the store's.
    let retention_of = |route: usize| ROUTES[route].retention_ms.unwrap_or(config.retention_ms);
    let mut model = Model::default();
    let mut workers: Vec<Worker> = Vec::new();
    let mut now = 0u64;

    for op in ops {
        match op {
            Op::Begin {
                route,
                scope,
                key,
                payload,
                spelling,
            } => {
                let body = BODIES[payload][spelling].as_bytes();
                let got = store.begin(
                    now,
                    SCOPES[scope],
                    key.map(|k| KEYS[k]),
                    body,
                    &ROUTES[route],
                );
                let Some(key) = key else {
                    prop_assert_eq!(got, Begin::Invalid(idem_store::RequestError::MissingKey));
                    continue;
                };
                let at = (scope, key);
                if model
                    .rows
                    .get(&at)
                    .is_some_and(|r| Model::expired(r, now, lock_ms))
                {
                    model.rows.remove(&at);
                }
                // (token, taken_over, whether the row keeps its created_at)
                let expect_claim = |model: &mut Model, taken_over: bool, keeps: bool| {
                    model.last_token += 1;
                    (model.last_token, taken_over, keeps)
                };
                let claimed = match model.rows.get(&at) {
                    None => Some(expect_claim(&mut model, false, false)),
                    Some(row) if (row.route, row.payload) != (route, payload) => {
                        prop_assert_eq!(&got, &Begin::Mismatch);
                        None
                    }
                    Some(Row {
                        state: State::Done { response },
                        ..
                    }) => {
                        prop_assert_eq!(&got, &Begin::Replay(response.clone()));
                        None
                    }
                    Some(Row {
                        state: State::InFlight { locked_at, .. },
                        ..
                    }) if now < locked_at + lock_ms => {
                        let retry_after_ms = locked_at + lock_ms - now;
                        prop_assert_eq!(&got, &Begin::InFlight { retry_after_ms });
                        None
                    }
                    // Released: the same request claims again, whatever the time.
                    Some(Row {
                        state: State::Released { .. },
                        ..
                    }) => Some(expect_claim(&mut model, false, true)),
                    Some(_) => Some(expect_claim(&mut model, true, true)),
                };
                if let Some((token, taken_over, keeps)) = claimed {
                    let lease = Lease {
                        locked_at: now,
                        token,
                    };
                    let Begin::Execute {
                        id,
                        lease: got_lease,
                        taken_over: got_taken_over,
                    } = got
                    else {
                        return Err(TestCaseError::fail(format!(
                            "expected Execute, got {got:?}"
                        )));
                    };
                    prop_assert_eq!(got_lease, lease);
                    prop_assert_eq!(got_taken_over, taken_over);
                    prop_assert_eq!((id.scope(), id.key().as_str()), (SCOPES[scope], KEYS[key]));
                    let state = State::InFlight {
                        locked_at: now,
                        token,
                    };
                    let created_at = match model.rows.get(&at) {
                        Some(row) if keeps => row.created_at,
                        _ => now,
                    };
                    model.rows.insert(
                        at,
                        Row {
                            route,
                            payload,
                            state,
                            created_at,
                            expires_at: now + retention_of(route),
                        },
                    );
                    workers.push(Worker { at, id, lease });
                }
            }
            Op::Save { worker, status } if !workers.is_empty() => {
                let w = &workers[worker % workers.len()];
                let r = response(status, w.lease.token);
                let got = store.save(now, &w.id, &w.lease, r.clone());
                match model.held(w.at, w.lease.token) {
                    Some(row) => {
                        prop_assert_eq!(got, Ok(()));
                        row.state = State::Done { response: r };
                        row.expires_at = now + retention_of(row.route);
                    }
                    None => prop_assert_eq!(got, Err(Fenced)),
                }
            }
            Op::Fail { worker } if !workers.is_empty() => {
                let w = &workers[worker % workers.len()];
                let r = response(502, w.lease.token);
                let got = store.fail(now, &w.id, &w.lease, r.clone());
                match model.held(w.at, w.lease.token) {
                    Some(row) => {
                        prop_assert_eq!(got, Ok(()));
                        match ROUTES[row.route].on_error {
                            ErrorPolicy::SaveResponse => {
                                row.state = State::Done { response: r };
                                row.expires_at = now + retention_of(row.route);
                            }
                            ErrorPolicy::ReleaseClaim => model.release(w.at, &w.lease),
                        }
                    }
                    None => prop_assert_eq!(got, Err(Fenced)),
                }
            }
            Op::Commit { worker } if !workers.is_empty() => {
                let w = &workers[worker % workers.len()];
                let r = response(201, w.lease.token);
                let got = store.commit_response(now, &w.id, &w.lease, r.clone());
                match model.held(w.at, w.lease.token) {
                    Some(row) => {
                        prop_assert_eq!(got, Ok(()));
                        row.state = State::Done { response: r };
                        row.expires_at = now + retention_of(row.route);
                    }
                    None => prop_assert_eq!(got, Err(Fenced)),
                }
            }
            Op::Renew { worker } if !workers.is_empty() => {
                let i = worker % workers.len();
                let w = &workers[i];
                let got = store.renew(now, &w.id, &w.lease);
                let (at, token) = (w.at, w.lease.token);
                match model.held(at, token) {
                    Some(row) => {
                        let renewed = Lease {
                            locked_at: now,
                            token,
                        };
                        prop_assert_eq!(got, Ok(renewed));
                        row.state = State::InFlight {
                            locked_at: now,
                            token,
                        };
                        row.expires_at = now + retention_of(row.route);
                        workers[i].lease = renewed;
                    }
                    None => prop_assert_eq!(got, Err(Fenced)),
                }
            }
            Op::Release { worker } if !workers.is_empty() => {
                let w = &workers[worker % workers.len()];
                let got = store.release(now, &w.id, &w.lease);
                if model.held(w.at, w.lease.token).is_some() {
                    prop_assert_eq!(got, Ok(()));
                    model.release(w.at, &w.lease);
                } else {
                    prop_assert_eq!(got, Err(Fenced));
                }
            }
            Op::Advance { ms } => now += ms,
            Op::Prune => {
                let before = model.rows.len();
                model.rows.retain(|_, r| !Model::expired(r, now, lock_ms));
                prop_assert_eq!(store.prune(now), before - model.rows.len());
            }
            // Worker ops before any worker exists.
            Op::Save { .. }
            | Op::Commit { .. }
            | Op::Fail { .. }
            | Op::Release { .. }
            | Op::Renew { .. } => {}
        }
        check_table(store, now, &model, retention_of)?;
    }
    Ok(())
}

/// The table holds exactly the model's rows.
fn check_table<T: Claims>(
    store: &mut T,
    now: u64,
    model: &Model,
    retention_of: impl Fn(usize) -> u64,
) -> Result<(), TestCaseError> {
    let seen: Vec<_> = store
        .rows_of(now, &SCOPES)
        .into_iter()
        .map(|r| {
            let released = r.state == RowState::Released;
            let lease = match r.state {
                RowState::Done => None,
                RowState::InFlight | RowState::Stale | RowState::Released => {
                    r.locked_at.zip(r.token)
                }
            };
            (
                r.scope,
                r.key,
                released,
                lease,
                r.response_status,
                r.created_at,
                r.expires_at,
                r.retention_ms,
            )
        })
        .collect();
    let expected: Vec<_> = model
        .rows
        .iter()
        .map(|(&(s, k), r)| {
            let (released, lease, status) = match &r.state {
                State::InFlight { locked_at, token } => (false, Some((*locked_at, *token)), None),
                State::Released { locked_at, token } => (true, Some((*locked_at, *token)), None),
                State::Done { response } => (false, None, Some(response.status)),
            };
            (
                SCOPES[s].to_owned(),
                KEYS[k].to_owned(),
                released,
                lease,
                status,
                r.created_at,
                r.expires_at,
                retention_of(r.route),
            )
        })
        .collect();
    prop_assert_eq!(seen, expected);
    prop_assert_eq!(store.row_count(), model.rows.len());
    Ok(())
}
