//! PayCo answered in-process: `POST /charges` returns a charge at once (no database, no
//! ledger), so the benchmark measures the checkout's own cost. The real PayCo is measured by
//! nothing here; its cost is another idem-server's. The card [`SLOW_CARD`] is answered after
//! [`SLOW_MS`]: the first request of a wait-mode burst stays in flight that long.

use std::time::Duration;

use axum::{routing::post, Json, Router};
use idem_server::payco::wire::{Charge, ChargeRequest};

/// The card PayCo's stub answers late.
pub const SLOW_CARD: &str = "tok_slow";
/// How late.
pub const SLOW_MS: u64 = 200;

/// Serve the stub on a free port of 127.0.0.1; its base URL.
pub async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind stub");
    let addr = listener.local_addr().expect("addr");
    let app = Router::new().route(
        "/charges",
        post(|Json(req): Json<ChargeRequest>| async move {
            if req.card == SLOW_CARD {
                tokio::time::sleep(Duration::from_millis(SLOW_MS)).await;
            }
            (
                axum::http::StatusCode::CREATED,
                Json(Charge {
                    charge: format!("ch_{}", req.order),
                    order: req.order,
                    amount: req.amount,
                }),
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.expect("stub serves") });
    format!("http://{addr}")
}
