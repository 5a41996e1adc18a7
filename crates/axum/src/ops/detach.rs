//! Work outlives its HTTP connection: every request's handler runs to completion as a task of
//! its own, and a client that goes away drops only its answer.
//!
//! hyper drops a handler's future when its client closes the connection, at whatever await it
//! stands. For keyed work that is the worst place to stop: a checkout cut between its claim
//! and its commit leaves a claim in flight that answers 409 to every retry for a whole lease,
//! and a worker cut after PayCo charged leaves the order unpaid until a retry takes the claim
//! over. The storage code is safe at every await (a transaction dropped anywhere rolls back,
//! see `db::tx`), but safe is not finished. Run to completion, the work commits its answer,
//! and the client's retry gets the replay at once. It is bounded by the work's own timeouts
//! (the PayCo call's, the pool's acquire timeout, SQLite's busy timeout), not by the client's
//! patience. Graceful shutdown waits for this work as for open connections
//! ([`Detached::idle`]). Reads and event streams are unaffected: a handler returns its
//! response (a stream's body included) at once, and the body is still tied to the
//! connection.

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::Response,
};
use tokio::sync::watch;
use tracing::Instrument;

use crate::wire::to_response;

/// The handlers running as tasks of their own, counted so shutdown can wait for them.
#[derive(Clone)]
pub struct Detached {
    running: watch::Sender<usize>,
}

impl Default for Detached {
    fn default() -> Self {
        Self {
            running: watch::Sender::new(0),
        }
    }
}

impl Detached {
    /// How many handlers are running now.
    pub fn running(&self) -> usize {
        *self.running.borrow()
    }

    /// Resolves when no handler is running.
    pub async fn idle(&self) {
        let mut running = self.running.subscribe();
        // The sender lives in `self`, so the channel cannot close while this waits.
        let _ = running.wait_for(|n| *n == 0).await;
    }

    fn enter(&self) -> Running {
        self.running.send_modify(|n| *n += 1);
        Running(self.running.clone())
    }
}

/// One running handler; dropping it (the task ended, or panicked) counts it out.
struct Running(watch::Sender<usize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Middleware: run the rest of the stack as a task of its own and wait for its response. If
/// this future is dropped (the client went away), the task goes on.
pub async fn detach(State(work): State<Detached>, request: Request, next: Next) -> Response {
    let running = work.enter();
    let task = tokio::spawn(
        async move {
            let _running = running;
            next.run(request).await
        }
        .in_current_span(),
    );
    match task.await {
        Ok(response) => response,
        // The stack catches a handler's panic itself (`layers`); this is the task's own.
        Err(error) => {
            tracing::error!(%error, "request task failed");
            to_response(idem_store::http::internal_error())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::{body::Body, middleware::from_fn_with_state, routing::get, Router};
    use tower::ServiceExt;

    use super::*;

    /// The handler's future is dropped half-way by the caller; the work still finishes, and
    /// `idle` waits for it.
    #[tokio::test]
    async fn a_dropped_request_finishes_its_work_and_idle_waits_for_it() {
        let (done_tx, mut done_rx) = watch::channel(false);
        let work = Detached::default();
        let app = Router::new()
            .route(
                "/",
                get(move || async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let _ = done_tx.send(true);
                    "done"
                }),
            )
            .layer(from_fn_with_state(work.clone(), detach));
        let request = axum::http::Request::get("/").body(Body::empty()).unwrap();
        // The client gives up after 10 ms.
        let cut = tokio::time::timeout(Duration::from_millis(10), app.oneshot(request)).await;
        assert!(cut.is_err(), "the request was cut before its answer");
        assert_eq!(work.running(), 1, "the work still runs");
        tokio::time::timeout(Duration::from_secs(5), work.idle())
            .await
            .expect("the work ends");
        assert!(*done_rx.borrow_and_update(), "the work ran to its end");
        assert_eq!(work.running(), 0);
    }
}
