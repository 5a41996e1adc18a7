//! The generic two-step layer over real HTTP (an in-process server on 127.0.0.1 with a real
//! SQLite file): the inner service runs once per key; its answer is replayed with the
//! allow-listed headers (`Location`) and never its `Set-Cookie`; a 5xx releases the claim so
//! the retry runs the work again; a 4xx follows the route's policy.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use axum::{extract::State, response::IntoResponse, routing::post, Router};
use idem_server::{
    db::{Db, DbOptions},
    request::{BearerTenants, BodyLimits},
    serve::{serve, ConnLimits},
    two_step::TwoStepLayer,
};
use idem_store::{ErrorPolicy, RouteConfig};

use crate::client;

/// The inner route: counts its runs; answers by the body's `"answer"` field.
async fn work(State(runs): State<Arc<AtomicUsize>>, body: String) -> impl IntoResponse {
    let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
    let status = if body.contains("\"fail\"") {
        500
    } else if body.contains("\"refuse\"") {
        404
    } else {
        201
    };
    (
        http::StatusCode::from_u16(status).unwrap(),
        [
            ("location", format!("/api/refunds/{n}")),
            ("set-cookie", format!("session=run-{n}")),
            ("content-type", "application/json".to_owned()),
        ],
        format!("{{\"run\":{n}}}"),
    )
}

async fn start(policy: ErrorPolicy) -> (String, Arc<AtomicUsize>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("two-step.db").display());
    let db = Db::open(&url, DbOptions::default())
        .await
        .expect("open the database");
    let runs = Arc::new(AtomicUsize::new(0));
    let route = RouteConfig::required("POST /api/refunds", policy);
    let app = Router::new()
        .route("/api/refunds", post(work))
        .with_state(runs.clone())
        .layer(TwoStepLayer::new(
            db,
            route,
            BearerTenants::new().with("token-a", "tenant-a"),
            BodyLimits::default(),
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, app, ConnLimits::default()));
    (url, runs, dir)
}

async fn refund(url: &str, key: &str, body: &str) -> client::Answer {
    let url = format!("{url}/api/refunds");
    client::post(&client::http(), &url, "token-a", key, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_runs_once_and_replays_without_cookies() {
    let (url, runs, _dir) = start(ErrorPolicy::ReleaseClaim).await;
    let first = refund(&url, "r-1", r#"{"answer":"ok"}"#).await;
    assert_eq!(first.status, 201);
    assert_eq!(
        first.header("set-cookie"),
        Some("session=run-1"),
        "the first answer is whole"
    );
    let replay = refund(&url, "r-1", r#"{"answer":"ok"}"#).await;
    assert_eq!(replay.status, 201);
    assert!(replay.is_replay());
    assert_eq!(replay.body, first.body);
    assert_eq!(replay.header("location"), Some("/api/refunds/1"));
    assert_eq!(
        replay.header("set-cookie"),
        None,
        "a replay never hands out a cookie"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // The key with another body: 422, the work does not run.
    let other = refund(&url, "r-1", r#"{"answer":"other"}"#).await;
    assert_eq!(other.status, 422);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_releases_the_claim_and_a_4xx_follows_the_policy() {
    let (url, runs, _dir) = start(ErrorPolicy::SaveResponse).await;
    let failed = refund(&url, "r-5xx", r#"{"answer":"fail"}"#).await;
    assert_eq!(failed.status, 500);
    let again = refund(&url, "r-5xx", r#"{"answer":"fail"}"#).await;
    assert_eq!(again.status, 500);
    assert!(
        !again.is_replay(),
        "a 5xx is never saved, even under save-response"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    let refused = refund(&url, "r-4xx", r#"{"answer":"refuse"}"#).await;
    assert_eq!(refused.status, 404);
    let replayed = refund(&url, "r-4xx", r#"{"answer":"refuse"}"#).await;
    assert!(replayed.is_replay(), "save-response saves the 4xx");
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}
