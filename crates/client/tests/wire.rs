//! The client reads each response of the shared wire table (`crates/store/tests/common/wire.rs`,
//! which the store's tests check it writes) as the retry rules intend: the same header names,
//! `Retry-After` in milliseconds, the replay marker, the problem `type`, and the classification.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/rng.rs"]
mod rng;
#[allow(dead_code)]
#[path = "../../store/tests/common/wire.rs"]
mod wire;

use idem_client::{
    Action, Failure, MemoryJournal, Operation, OperationSpec, OutcomeKind, Problem, Reply,
    RetryPolicy,
};
use serde_json::json;
use uuid::Uuid;

use rng::Zero;

/// The reply as every driver builds it from a response (`Reply::from_http`, which the fetch
/// driver and the simulator's network call).
fn reply(case: &wire::WireCase) -> Reply {
    let header = |name: &str| {
        case.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    };
    Reply::from_http(case.status, header, case.body.as_bytes().to_vec(), 0)
}

#[test]
fn the_client_reads_the_shared_wire_table() {
    for case in wire::CASES {
        let reply = reply(case);
        assert_eq!(reply.retry_after_ms, case.retry_after_ms, "{}", case.name);
        assert_eq!(reply.replayed, case.replayed, "{}", case.name);
        let problem = Problem::parse(&reply.body).filter(|p| p.kind.is_some());
        assert_eq!(
            problem.as_ref().and_then(|p| p.kind.as_deref()),
            case.problem_type,
            "{}",
            case.name
        );
        if let Some(p) = &problem {
            assert_eq!(p.status, Some(case.status), "{}", case.name);
            assert!(p.title.is_some() && p.detail.is_some(), "{}", case.name);
        }

        // What the operation makes of it.
        let mut journal = MemoryJournal::new();
        let spec = OperationSpec::post("checkout:wire", json!({ "amount": 1 }));
        let mut op = Operation::start(spec, RetryPolicy::default(), 0, &mut journal, &mut || {
            Uuid::from_u128(1)
        })
        .unwrap();
        assert!(matches!(
            op.poll(0, &mut journal, &mut Zero),
            Action::Send(_)
        ));
        op.handle_reply(10, reply);
        let next = op.poll(10, &mut journal, &mut Zero);
        match (case.status, next) {
            (409, Action::WaitUntil(at)) => {
                assert_eq!(Some(at - 10), case.retry_after_ms, "{}", case.name)
            }
            // The expired-key guard's refusal: unknown for good, never retried, never a new key.
            (412, Action::Finished(outcome)) => {
                assert_eq!(
                    outcome.kind,
                    OutcomeKind::Unknown {
                        last_error: Some(Failure::KeyExpired)
                    },
                    "{}",
                    case.name
                );
                assert_eq!(outcome.attempts, 1);
            }
            (400..=499, Action::Finished(outcome)) => match outcome.kind {
                OutcomeKind::Rejected {
                    status, problem, ..
                } => {
                    assert_eq!(status, case.status, "{}", case.name);
                    assert_eq!(problem.and_then(|p| p.kind).as_deref(), case.problem_type);
                }
                other => panic!("{}: {other:?}", case.name),
            },
            (200..=299, Action::Finished(outcome)) => {
                assert!(
                    matches!(outcome.kind, OutcomeKind::Replayed { .. }),
                    "{}: {:?}",
                    case.name,
                    outcome.kind
                );
            }
            (_, other) => panic!("{}: {other:?}", case.name),
        }
    }
}
