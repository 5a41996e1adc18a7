//! `POST /api/checkout` in three atomic phases: claim + order (the recovery point), PayCo
//! outside any transaction under `charge:<order>`, then order settled + response saved in one
//! fenced transaction.

use crate::db::Finish;
use axum::{
    extract::{Request, State},
    response::Response,
};
use idem_store::http::{lease_lost, HttpResponse};

use super::{
    demo::{AfterCharge, Checkpoints},
    orders::{self, Order},
    params::{self, CheckoutRequest},
    payco_client::{ChargeOutcome, ChargeUnknown},
    Checkout,
};
use crate::{
    db::{BeginWith, Claim, ClaimTx, DbError, RouteInsert},
    failpoint::Step,
    payco::wire::ChargeRequest,
    request::IdempotentRequest,
    sql::now_ms,
    storage_error,
    wire::{to_response, to_saved},
};

/// The handler.
pub async fn create(State(app): State<Checkout>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let answer = match IdempotentRequest::read(&parts, body, &*app.tenants, app.body).await {
        Ok(request) => {
            // Demo mode's checkpoints, when its middleware put them there.
            let demo = parts.extensions.get::<Checkpoints>();
            run(&app, request, demo).await
        }
        Err(refused) => refused,
    };
    to_response(answer)
}

async fn run(
    app: &Checkout,
    request: IdempotentRequest,
    demo: Option<&Checkpoints>,
) -> HttpResponse {
    let params = match request.parse(&app.route, CheckoutRequest::parse) {
        Ok(params) => params,
        Err(answer) => return answer,
    };
    // `parse` refused a request without a key.
    let key = request.key.as_deref().unwrap_or_default();
    let created_at = i64::try_from(now_ms()).unwrap_or(i64::MAX);
    let first = orders::insert(&request.scope, key, &params, created_at);

    // Phase 1: the order commits with the claim, or neither does.
    let claimed = match request
        .begin_with_waiting(&app.db, &app.route, &first, app.wait)
        .await
    {
        Ok(BeginWith::Created { claim, id }) => {
            Ok((claim, Order::pending(id, key, &params, created_at)))
        }
        Ok(BeginWith::Resume(claim_tx)) => {
            let pending = |id| Order::pending(id, key, &params, created_at);
            resume(claim_tx, &request.scope, &first, pending).await
        }
        // `IdempotentRequest::begin_with_waiting` answers everything else itself.
        Ok(BeginWith::Unkeyed | BeginWith::Answer(_)) => return idem_store::http::internal_error(),
        Err(answer) => return answer,
    };
    let (claim, order) = match claimed {
        Ok(claimed) => claimed,
        Err(e) => return storage_error(&e),
    };
    app.failpoints.hit(Step::AfterClaim).await;

    // Phase 2: PayCo, under the order's key, outside any transaction.
    let charge = ChargeRequest {
        order: order.id,
        amount: order.amount,
        card: params.card.clone(),
    };
    let outcome = app
        .payco
        .charge(&format!("charge:{}", order.id), &charge)
        .await;
    app.failpoints.hit(Step::AfterCharge).await;
    if let Some(demo) = demo {
        if demo.after_charge(order.id, &outcome).await == AfterCharge::Crash {
            // A dead worker: nothing committed or released; the middleware sends nothing.
            return idem_store::http::internal_error();
        }
    }

    // Phase 3: the order's result and the response, fenced, in one transaction.
    let settled = match outcome {
        Ok(ChargeOutcome::Charged(charge)) => {
            let answer = params::paid(order.id, &charge);
            commit(app, &claim, order.id, "paid", Some(&charge.charge), answer).await
        }
        Ok(ChargeOutcome::Declined) => decline(app, &claim, order.id).await,
        Err(unknown) => return give_back(app, &claim, &unknown).await,
    };
    match settled {
        Ok(answer) => {
            if let Some(demo) = demo {
                demo.after_commit();
            }
            answer
        }
        // Another worker took the claim over: our writes were rolled back; its answer is
        // the one that will be replayed.
        Err(DbError::Fenced) => lease_lost(),
        Err(e) => storage_error(&e),
    }
}

/// Resume the order an earlier worker of this same request left (a takeover, or a claim
/// after a release), or, if its recovery point names none, create it anew; commit with the
/// claim.
async fn resume(
    mut claim_tx: ClaimTx,
    scope: &str,
    first: &RouteInsert<'_>,
    pending: impl FnOnce(i64) -> Order,
) -> Result<(Claim, Order), DbError> {
    let resumed = match recovered_order_id(&claim_tx) {
        Some(id) => orders::resume(claim_tx.tx(), scope, id).await?,
        None => None,
    };
    let order = match resumed {
        Some(order) => order,
        None => pending(claim_tx.create(first).await?),
    };
    Ok((claim_tx.commit().await?, order))
}

/// The order id saved as the claim's recovery point. An unreadable one (a hand-edited row)
/// is logged and treated as absent: a new order is made, and PayCo's key for it is new too.
fn recovered_order_id(claim_tx: &ClaimTx) -> Option<i64> {
    let point = claim_tx.recovery()?;
    let id = RouteInsert::id_of(point);
    if id.is_none() {
        tracing::error!(point = ?point, "unreadable recovery point; starting a new order");
    }
    id
}

/// Settle the order and save `answer`, fenced, together (one statement on PostgreSQL).
async fn commit(
    app: &Checkout,
    claim: &Claim,
    order: i64,
    status: &str,
    charge: Option<&str>,
    answer: HttpResponse,
) -> Result<HttpResponse, DbError> {
    let settled = orders::settlement(order, status, charge);
    app.failpoints.hit(Step::BeforeCommit).await;
    app.db
        .finish_with(now_ms(), claim, Finish::Commit(to_saved(&answer)), &settled)
        .await?;
    Ok(answer)
}

/// PayCo declined, and saved that under the order's key, so the decline is final for this
/// checkout: fenced and together, mark the order declined and let the route's declared
/// policy save the 402 or release the claim (a retry then resumes the order, and PayCo
/// answers it the same 402).
async fn decline(app: &Checkout, claim: &Claim, order: i64) -> Result<HttpResponse, DbError> {
    let answer = params::declined(order);
    let declined = orders::settlement(order, "declined", None);
    app.failpoints.hit(Step::BeforeCommit).await;
    app.db
        .finish_with(now_ms(), claim, claim.failed(to_saved(&answer)), &declined)
        .await?;
    Ok(answer)
}

/// PayCo's outcome is unknown: save nothing (whatever the route's policy), release the claim
/// so the client's retry resumes the order and asks PayCo again under the same key.
async fn give_back(app: &Checkout, claim: &Claim, unknown: &ChargeUnknown) -> HttpResponse {
    tracing::warn!(error = %unknown, "charge outcome unknown; releasing the claim");
    match app.db.finish(now_ms(), claim, Finish::Release).await {
        Ok(()) | Err(DbError::Fenced) => idem_store::http::bad_gateway(&unknown.to_string(), 1),
        Err(e) => storage_error(&e),
    }
}
