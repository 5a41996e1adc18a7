//! The expired-key guard over real HTTP, on SQLite and PostgreSQL (idem_store::first_sent): a
//! retry whose `Repeatability-First-Sent` is older than retention, under a key the table no
//! longer holds, is refused (412) instead of charged again; within retention, for a key that
//! still has its row, or for a client clock behind by less than the tolerance, nothing changes.
//! With the guard off the same retry pays twice: what the guard is for.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use idem_store::{first_sent, http::problem};

use crate::{
    client::{self, Answer},
    stack::Stack,
    support::process::TENANT_A,
};

/// Retention 1.5 s, pruned every 200 ms; the guard's tolerance 1 s.
const GUARDED: [&str; 6] = [
    "--retention-ms",
    "1500",
    "--prune-interval-ms",
    "200",
    "--first-sent-tolerance-ms",
    "1000",
];

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as u64
}

/// A checkout under `key` whose `Repeatability-First-Sent` is `first_sent` as sent.
async fn checkout_sent(stack: &Stack, key: &str, body: &str, first_sent: Option<&str>) -> Answer {
    let mut request = client::http()
        .post(format!("{}/api/checkout", stack.url()))
        .bearer_auth(TENANT_A.0)
        .header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    if let Some(value) = first_sent {
        request = request.header(first_sent::HEADER, value);
    }
    client::answer(request.send().await.expect("an answer")).await
}

async fn key_state(stack: &Stack, key: &str) -> u16 {
    client::http()
        .get(format!("{}/api/keys/{key}", stack.url()))
        .bearer_auth(TENANT_A.0)
        .send()
        .await
        .expect("key state")
        .status()
        .as_u16()
}

/// Waits until the pruner has forgotten `key` (its retention over).
async fn until_pruned(stack: &Stack, key: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while key_state(stack, key).await != 404 {
        assert!(tokio::time::Instant::now() < deadline, "{key} never pruned");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn charges(stack: &Stack) -> usize {
    client::ledger(&client::http(), &stack.payco)
        .await
        .iter()
        .filter(|row| row["outcome"] == "charged")
        .count()
}

async fn the_guard_refuses_an_expired_retry_and_nothing_else(stack: Stack) {
    let body = |cart: &str| client::body(cart, 1200, "tok_visa");

    // Within retention: runs, as without the header.
    let sent = first_sent::header_value(now_ms());
    let first = checkout_sent(&stack, "lost-answer", &body("c-1"), Some(&sent)).await;
    assert_eq!(first.status, 201, "{}", first.text());
    assert_eq!(charges(&stack).await, 1);

    // Its answer was lost; the client comes back after the key was pruned, with the same
    // first-sent time: refused, not charged again, nothing recorded.
    until_pruned(&stack, "lost-answer").await;
    tokio::time::sleep(Duration::from_millis(1_200)).await; // past retention + tolerance
    let late = checkout_sent(&stack, "lost-answer", &body("c-1"), Some(&sent)).await;
    assert_eq!(late.status, 412, "{}", late.text());
    assert_eq!(late.problem().kind, problem::KEY_EXPIRED);
    assert_eq!(charges(&stack).await, 1, "the expired retry charged again");
    assert_eq!(
        key_state(&stack, "lost-answer").await,
        404,
        "nothing recorded"
    );

    // A key whose row is still there decides as ever, however old the first send.
    let kept = checkout_sent(&stack, "kept", &body("c-2"), None).await;
    assert_eq!(kept.status, 201, "{}", kept.text());
    let ancient = first_sent::header_value(now_ms() - 3_600_000);
    let replay = checkout_sent(&stack, "kept", &body("c-2"), Some(&ancient)).await;
    assert!(replay.is_replay(), "{}", replay.text());
    assert_eq!(replay.body, kept.body);

    // A client clock behind the server's by less than retention + tolerance: runs. Ahead:
    // runs. Behind by more, on a key never seen: an honest refusal, never a charge.
    // (1 s behind, floored to the second by the header: under 2 s, against 1.5 s + 1 s.)
    let skewed = first_sent::header_value(now_ms() - 1_000);
    let behind = checkout_sent(&stack, "skew-behind", &body("c-3"), Some(&skewed)).await;
    assert_eq!(behind.status, 201, "{}", behind.text());
    let future = first_sent::header_value(now_ms() + 3_600_000);
    let ahead = checkout_sent(&stack, "skew-ahead", &body("c-4"), Some(&future)).await;
    assert_eq!(ahead.status, 201, "{}", ahead.text());
    let far = first_sent::header_value(now_ms() - 10_000);
    let refused = checkout_sent(&stack, "skew-far", &body("c-5"), Some(&far)).await;
    assert_eq!(refused.status, 412, "{}", refused.text());
    assert_eq!(charges(&stack).await, 4);

    // A first-sent time that is no date: 400, nothing recorded.
    for bad in ["yesterday", "1733140000"] {
        let answer = checkout_sent(&stack, "bad-date", &body("c-6"), Some(bad)).await;
        assert_eq!(answer.status, 400, "{}", answer.text());
        assert_eq!(answer.problem().kind, problem::FIRST_SENT_INVALID);
    }
    assert_eq!(key_state(&stack, "bad-date").await, 404);
    assert_eq!(charges(&stack).await, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_the_guard_refuses_an_expired_retry_and_nothing_else() {
    the_guard_refuses_an_expired_retry_and_nothing_else(Stack::sqlite(&GUARDED).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_the_guard_refuses_an_expired_retry_and_nothing_else() {
    let stack = Stack::postgres("expired_key_guard", &GUARDED).await;
    the_guard_refuses_an_expired_retry_and_nothing_else(stack).await;
}

/// The guard off (`--no-expired-key-guard`): the same late retry is a new request and pays
/// twice. What the guard prevents, shown on the same server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_guard_an_expired_retry_pays_twice() {
    let mut args = GUARDED.to_vec();
    args.push("--no-expired-key-guard");
    let stack = Stack::sqlite(&args).await;
    let body = client::body("c-1", 1200, "tok_visa");
    let sent = first_sent::header_value(now_ms());
    let first = checkout_sent(&stack, "lost-answer", &body, Some(&sent)).await;
    assert_eq!(first.status, 201, "{}", first.text());
    until_pruned(&stack, "lost-answer").await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let late = checkout_sent(&stack, "lost-answer", &body, Some(&sent)).await;
    assert_eq!(late.status, 201, "{}", late.text());
    assert_eq!(
        charges(&stack).await,
        2,
        "the double charge the guard prevents"
    );
}
