//! Declines over real HTTP, as in the simulator (issue 10's semantics): PayCo saves its 402
//! under `charge:<order>`, so a decline is final for that checkout key under either policy;
//! under `release-claim` the order (the recovery point) survives the release and every retry
//! charges under the same PayCo key, while another payload on the released key gets an order
//! of its own and never resumes the old one.

use crate::{client, stack::Stack, support::process::TENANT_A};

fn declining() -> String {
    client::body("cart-decline", 800, "tok_decline")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_claim_resumes_the_same_order_and_payco_repeats_its_decline() {
    let stack = Stack::sqlite(&["--on-error", "release-claim"]).await;
    let http = client::http();
    let first = client::checkout(&http, stack.url(), TENANT_A.0, "dec-1", &declining()).await;
    assert_eq!(first.status, 402, "{}", first.text());
    assert!(first.problem().kind.contains("declined"));
    let again = client::checkout(&http, stack.url(), TENANT_A.0, "dec-1", &declining()).await;
    assert_eq!(
        again.status,
        402,
        "a decline is final for the key: {}",
        again.text()
    );
    assert!(!again.is_replay(), "released: the work ran again");

    let orders = client::orders(&http, stack.url(), TENANT_A.0).await;
    assert_eq!(
        orders.len(),
        1,
        "the retry resumed the same order: {orders:?}"
    );
    assert_eq!(orders[0]["status"], "declined");
    let order = orders[0]["id"].as_i64().unwrap();
    let ledger = client::ledger(&http, &stack.payco).await;
    assert_eq!(
        ledger.len(),
        1,
        "PayCo answered the second call from its key: {ledger:?}"
    );
    assert_eq!(ledger[0]["key"], format!("charge:{order}"));
    assert_eq!(ledger[0]["outcome"], "declined");

    // Another payload on the released key is a new operation: a new order, a new PayCo key.
    let good = client::body("cart-decline", 800, "tok_visa");
    let paid = client::checkout(&http, stack.url(), TENANT_A.0, "dec-1", &good).await;
    assert_eq!(paid.status, 201, "{}", paid.text());
    let new_order = paid.json()["order"].as_i64().unwrap();
    assert_ne!(new_order, order, "never resumes the declined order");
    assert_eq!(
        client::charges_per_order(&http, &stack.payco).await,
        vec![(new_order, 1)]
    );
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
