//! PayCo on its own: idempotent on its key with a ledger; the test card declines with a 402
//! saved under the key like a charge.

use crate::{
    client::{self, Answer},
    support::process::{Service, MERCHANT},
};

async fn charge(
    http: &reqwest::Client,
    payco: &Service,
    token: &str,
    key: &str,
    body: &str,
) -> Answer {
    client::post(http, &format!("{}/charges", payco.url), token, key, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payco_charges_once_per_key_and_saves_declines() {
    let dir = tempfile::tempdir().unwrap();
    let payco = Service::payco(dir.path()).await;
    let http = client::http();
    let visa = r#"{"order":1,"amount":500,"card":"tok_visa"}"#;
    let first = charge(&http, &payco, MERCHANT.0, "charge:1", visa).await;
    assert_eq!(first.status, 201, "{}", first.text());
    let again = charge(&http, &payco, MERCHANT.0, "charge:1", visa).await;
    assert_eq!(again.status, 201);
    assert!(again.is_replay());
    assert_eq!(again.body, first.body, "the same charge");
    assert_eq!(first.json()["charge"], again.json()["charge"]);

    let decline = r#"{"order":2,"amount":500,"card":"tok_decline"}"#;
    let d1 = charge(&http, &payco, MERCHANT.0, "charge:2", decline).await;
    assert_eq!(d1.status, 402, "{}", d1.text());
    let d2 = charge(&http, &payco, MERCHANT.0, "charge:2", decline).await;
    assert_eq!(d2.status, 402);
    assert!(d2.is_replay(), "the decline is saved under its key");
    let other = charge(&http, &payco, MERCHANT.0, "charge:2", visa).await;
    assert_eq!(
        other.status,
        422,
        "the key with another card: {}",
        other.text()
    );

    let ledger = client::ledger(&http, &payco).await;
    let outcomes: Vec<_> = ledger
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("charge:1".to_owned(), "charged".to_owned()),
            ("charge:2".to_owned(), "declined".to_owned())
        ]
    );

    let unknown = charge(&http, &payco, "wrong", "charge:3", visa).await;
    assert_eq!(unknown.status, 401);
    unknown.problem();
    let nokey = client::answer(
        http.post(format!("{}/charges", payco.url))
            .bearer_auth(MERCHANT.0)
            .body(visa)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(nokey.status, 400);
    nokey.problem();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_lists_orders_from_a_given_one() {
    let dir = tempfile::tempdir().unwrap();
    let payco = Service::payco(dir.path()).await;
    let http = client::http();
    for order in [3, 1, 7] {
        let body = format!(r#"{{"order":{order},"amount":100,"card":"tok_visa"}}"#);
        let key = format!("charge:{order}");
        assert_eq!(
            charge(&http, &payco, MERCHANT.0, &key, &body).await.status,
            201
        );
    }
    let orders = |rows: serde_json::Value| -> Vec<i64> {
        let rows = rows.as_array().unwrap().iter();
        rows.map(|r| r["order"].as_i64().unwrap()).collect()
    };
    let url = |query: &str| format!("{}/ledger{query}", payco.url);
    let all = client::get_json(&http, &url(""), MERCHANT.0).await;
    assert_eq!(orders(all), [3, 1, 7], "oldest first");
    let from = client::get_json(&http, &url("?from_order=3"), MERCHANT.0).await;
    assert_eq!(orders(from), [3, 7]);
    let bad = client::answer(
        http.get(url("?from_order=three"))
            .bearer_auth(MERCHANT.0)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(bad.status, 400);
    bad.problem();
}
