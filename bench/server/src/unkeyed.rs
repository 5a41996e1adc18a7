//! The same route without a key, for comparison: the checkout's own work (order insert,
//! PayCo charge, order marked paid, in the same two transactions) with no claim, no
//! fingerprint, no saved response. Only here, never in the server: without a key a retry
//! charges again, which is the bug idem exists to prevent.

use std::sync::Arc;

use axum::{extract::State, http::StatusCode, routing::post, Json, Router};
use idem_server::{
    checkout::{orders, params::CheckoutRequest, payco_client::PaycoClient},
    db::{Db, Tx},
    payco::wire::ChargeRequest,
};

struct App {
    db: Db,
    payco: PaycoClient,
}

async fn begin(db: &Db) -> Tx {
    match (db.sqlite_pool(), db.postgres_pool()) {
        (Some(p), _) => Tx::begin_sqlite(p).await.expect("begin"),
        (None, Some(p)) => Tx::begin_postgres(p).await.expect("begin"),
        (None, None) => unreachable!("a Db has one pool"),
    }
}

async fn commit(tx: Tx) {
    tx.commit().await.expect("commit");
}

async fn checkout(State(app): State<Arc<App>>, Json(req): Json<CheckoutRequest>) -> StatusCode {
    let mut tx = begin(&app.db).await;
    let order = orders::create(&mut tx, super::TENANT, "", &req)
        .await
        .expect("order");
    commit(tx).await;
    let charge = ChargeRequest {
        order: order.id,
        amount: req.amount,
        card: req.card.clone(),
    };
    app.payco
        .charge(&format!("charge:{}", order.id), &charge)
        .await
        .expect("charge");
    let mut tx = begin(&app.db).await;
    orders::settle(&mut tx, order.id, "paid", Some("ch_1"))
        .await
        .expect("settle");
    commit(tx).await;
    StatusCode::CREATED
}

/// Serve `POST /api/checkout` unkeyed on a free port; its base URL.
pub async fn serve(db: Db, payco: PaycoClient) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind unkeyed");
    let addr = listener.local_addr().expect("addr");
    let app = Router::new()
        .route("/api/checkout", post(checkout))
        .with_state(Arc::new(App { db, payco }));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("unkeyed serves") });
    format!("http://{addr}")
}
