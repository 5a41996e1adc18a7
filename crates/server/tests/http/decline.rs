//! Declines over real HTTP, as in the simulator: PayCo saves its 402 under `charge:<order>`,
//! so a decline is final for that checkout key under either policy. Under `release-claim`
//! the claim is released, not deleted: the key stays bound to its first request (issue 22).
//! That request's retry resumes the order (the recovery point) and PayCo repeats its decline
//! from its key; another payload under the key is 422 and never runs. On SQLite and on
//! PostgreSQL.

use crate::{client, stack::Stack, support::process::TENANT_A};

fn declining() -> String {
    client::body("cart-decline", 800, "tok_decline")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_key_stays_bound_to_its_first_request_on_sqlite() {
    stays_bound(Stack::sqlite(&["--on-error", "release-claim"]).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_key_stays_bound_to_its_first_request_on_postgres() {
    stays_bound(Stack::postgres("bound", &["--on-error", "release-claim"]).await).await;
}

/// A (`tok_decline`, 4200) → 402, the claim released; B (`tok_visa`, 4300) under the same
/// key → 422, B never runs; A again → 402 from the same order and PayCo key, not a replay.
async fn stays_bound(stack: Stack) {
    let http = client::http();
    let a = client::body("cart-bound", 4200, "tok_decline");
    let b = client::body("cart-bound", 4300, "tok_visa");
    let first = client::checkout(&http, stack.url(), TENANT_A.0, "bound-1", &a).await;
    assert_eq!(first.status, 402, "{}", first.text());
    assert!(first.problem().kind.contains("declined"));
    // The key's state says what the release left: the key, bound, free for A alone.
    let keys = format!("{}/api/keys/bound-1", stack.url());
    let state = client::get_json(&http, &keys, TENANT_A.0).await;
    assert_eq!(state["state"], "released", "{state}");

    let other = client::checkout(&http, stack.url(), TENANT_A.0, "bound-1", &b).await;
    assert_eq!(other.status, 422, "{}", other.text());
    assert!(
        other
            .problem()
            .kind
            .ends_with("/key-reused-with-different-payload"),
        "{}",
        other.text()
    );
    // B never ran: no order of its own, no PayCo call.
    let orders = client::orders(&http, stack.url(), TENANT_A.0).await;
    assert_eq!(orders.len(), 1, "A's order only: {orders:?}");
    assert_eq!(orders[0]["amount"], 4200);
    assert_eq!(orders[0]["status"], "declined");
    let order = orders[0]["id"].as_i64().unwrap();
    assert_eq!(client::ledger(&http, &stack.payco).await.len(), 1);

    let again = client::checkout(&http, stack.url(), TENANT_A.0, "bound-1", &a).await;
    assert_eq!(
        again.status,
        402,
        "a decline is final for the key: {}",
        again.text()
    );
    assert!(!again.is_replay(), "released: the work ran again");
    let orders = client::orders(&http, stack.url(), TENANT_A.0).await;
    assert_eq!(orders.len(), 1, "the retry resumed A's order: {orders:?}");
    let ledger = client::ledger(&http, &stack.payco).await;
    assert_eq!(
        ledger.len(),
        1,
        "PayCo answered the second call from its key: {ledger:?}"
    );
    assert_eq!(ledger[0]["key"], format!("charge:{order}"));
    assert_eq!(ledger[0]["outcome"], "declined");
    assert!(client::charges_per_order(&http, &stack.payco)
        .await
        .is_empty());
    // Still bound after the retry's own release.
    let late = client::checkout(&http, stack.url(), TENANT_A.0, "bound-1", &b).await;
    assert_eq!(late.status, 422, "{}", late.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_response_replays_the_decline() {
    let stack = Stack::sqlite(&["--on-error", "save-response"]).await;
    let http = client::http();
    let first = client::checkout(&http, stack.url(), TENANT_A.0, "dec-2", &declining()).await;
    assert_eq!(first.status, 402, "{}", first.text());
    let again = client::checkout(&http, stack.url(), TENANT_A.0, "dec-2", &declining()).await;
    assert_eq!(again.status, 402);
    assert!(again.is_replay(), "saved: replayed");
    assert_eq!(again.body, first.body);
    let good = client::body("cart-decline", 800, "tok_visa");
    let other = client::checkout(&http, stack.url(), TENANT_A.0, "dec-2", &good).await;
    assert_eq!(other.status, 422, "the saved key refuses another payload");
    assert_eq!(client::ledger(&http, &stack.payco).await.len(), 1);
    assert!(client::charges_per_order(&http, &stack.payco)
        .await
        .is_empty());
}
