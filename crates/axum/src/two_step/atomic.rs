//! Atomic mode ([`super::TwoStepLayer::atomic`]): the route's own writes and its saved answer
//! commit together, fenced, or neither does. The layer claims the key, opens the fenced
//! transaction that will end the claim ([`Db::finish_tx`](crate::db::Db::finish_tx)), and hands
//! it to the handler through the [`Writes`] extractor; once the handler answers, the layer
//! saves that answer in the same transaction and commits (a 2xx or 3xx; a 4xx under
//! `save-response`), or rolls the writes back and releases the claim (a 4xx under
//! `release-claim`, a 5xx, a broken answer).
//! A claim lost meanwhile (taken over after a stale lease) rolls the writes back: 409.
//!
//! On SQLite the transaction holds the database's one write lock while the handler runs (as
//! any SQLite write transaction does): keep the handler short, and never wait in it for
//! another write of this database. A handler whose statement failed must answer 5xx: on
//! PostgreSQL the transaction is then aborted, and a commit of it fails (the layer releases
//! the claim and answers 503 when it does). Atomic mode needs a key: on an optional-key route
//! a request without one is refused 400.

use crate::db::Finish;
use std::sync::Arc;

use axum::{extract::FromRequestParts, response::Response};
use http::request::Parts;
use idem_store::{http::lease_lost, ErrorPolicy};
use tokio::sync::{Mutex, OwnedMappedMutexGuard, OwnedMutexGuard};

use crate::{
    db::{Claim, DbError, FinishTx, Tx},
    sql::now_ms,
    storage_error,
    wire::{to_response, to_saved},
};

use super::phases::{from_layer, Answer, Shared};

/// The claim's open transaction, for the handler's own writes (an extractor: the route must be
/// behind a layer in atomic mode). Lock it, write through [`Tx`] (`tx.postgres()` or
/// `tx.sqlite()` for a real sqlx connection of the backend the application runs on, or
/// [`with_tx!`](crate::with_tx) for code that runs on both), and return the answer: the layer
/// commits the writes with it.
#[derive(Clone)]
pub struct Writes(Arc<Mutex<Option<FinishTx>>>);

/// The transaction, locked (see [`Writes::lock`]).
pub struct WritesGuard(OwnedMappedMutexGuard<Option<FinishTx>, FinishTx>);

impl std::ops::Deref for WritesGuard {
    type Target = Tx;

    fn deref(&self) -> &Tx {
        self.0.tx_ref()
    }
}

impl std::ops::DerefMut for WritesGuard {
    fn deref_mut(&mut self) -> &mut Tx {
        self.0.tx()
    }
}

/// Why [`Writes::lock`] has no transaction to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request has been answered: its transaction is committed or rolled back")]
pub struct WritesEnded;

impl Writes {
    fn new(tx: FinishTx) -> Self {
        Self(Arc::new(Mutex::new(Some(tx))))
    }

    /// The transaction, until the handler has answered (a task the handler spawned and that
    /// outlives it gets [`WritesEnded`]).
    pub async fn lock(&self) -> Result<WritesGuard, WritesEnded> {
        let guard = Arc::clone(&self.0).lock_owned().await;
        OwnedMutexGuard::try_map(guard, Option::as_mut)
            .map(WritesGuard)
            .map_err(|_| WritesEnded)
    }

    /// Taken back by the layer once the handler answered.
    async fn take(&self) -> Option<FinishTx> {
        self.0.lock().await.take()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Writes {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        from_layer(
            parts,
            "`Writes` used on a route that is not behind an atomic layer",
        )
    }
}

/// Open the transaction that will end `claim`, as the handler's [`Writes`]; `Err`: the
/// answer (503 when the database is away; the claim is released first).
pub(super) async fn open(shared: &Shared, claim: &Claim) -> Result<Writes, Response> {
    match shared.db.finish_tx(claim).await {
        Ok(tx) => Ok(Writes::new(tx)),
        Err(e) => {
            let _ = shared.db.finish(now_ms(), claim, Finish::Release).await;
            Err(to_response(storage_error(&e)))
        }
    }
}

/// End `claim` with the handler's `answer` and its writes: a 2xx or 3xx commits them with the
/// saved answer; a 4xx too under `save-response` (the refusal is final, its writes with it);
/// anything else (a 4xx under `release-claim`, a 5xx, a broken answer) rolls them back and
/// releases the claim, so nothing of this run remains and the retry runs the work again.
pub(super) async fn finish(
    shared: &Shared,
    claim: &Claim,
    writes: Writes,
    answer: Answer,
) -> Response {
    let tx = writes.take().await;
    let kept = |status: u16| {
        status < 400 || (status < 500 && claim.on_error() == ErrorPolicy::SaveResponse)
    };
    let (saved, parts, body, tx) = match (answer, tx) {
        (Answer::Read { saved, parts, body }, Some(tx)) if kept(saved.status) => {
            (saved, parts, body, tx)
        }
        (answer, tx) => {
            // The writes roll back (the transaction dropped) and the claim is released.
            drop(tx);
            let _ = shared.db.finish(now_ms(), claim, Finish::Release).await;
            return match answer {
                Answer::Read { parts, body, .. } => Response::from_parts(parts, body),
                Answer::Broken(e) => {
                    tracing::error!(error = %e, "inner answer broken; writes rolled back, claim released");
                    to_response(idem_store::http::internal_error())
                }
            };
        }
    };
    match tx.finish(now_ms(), Finish::Commit(to_saved(&saved))).await {
        Ok(()) => Response::from_parts(parts, body),
        Err(DbError::Fenced) => to_response(lease_lost()),
        Err(e) => {
            // Nothing was committed (the database is away, or a statement of the handler's
            // failed and left the transaction aborted): release the claim so the retry runs
            // the work again, rather than meeting 409 until the lease goes stale.
            let _ = shared.db.finish(now_ms(), claim, Finish::Release).await;
            to_response(storage_error(&e))
        }
    }
}
