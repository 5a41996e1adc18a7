//! `POST /api/checkout` in three atomic phases: claim + order (the recovery point), PayCo
//! outside any transaction under `charge:<order>`, then order settled + response saved in one
//! fenced transaction.

use axum::{
    extract::{Request, State},
    response::Response,
};
use idem_store::{
    http::{lease_lost, problem_for, response_for, HttpResponse},
    RequestError,
};

use super::{
    orders,
    params::{self, CheckoutRequest},
    payco_client::{ChargeOutcome, ChargeUnknown},
    Checkout,
};
use crate::{
    db::{Begun, Held},
    failpoint::Step,
    payco::wire::ChargeRequest,
    problems,
    request::IdempotentRequest,
    storage_error,
    wire::{to_response, to_saved},
};

/// The handler.
pub async fn create(State(app): State<Checkout>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let answer = match IdempotentRequest::read(&parts, body, &*app.tenants, app.body).await {
        Ok(request) => run(&app, request).await,
        Err(refused) => refused,
    };
    to_response(answer)
}

async fn run(app: &Checkout, request: IdempotentRequest) -> HttpResponse {
    let Some(key) = request.key.as_deref() else {
        return problem_for(&RequestError::MissingKey);
    };
    // The store's JSON rules (invalid JSON, duplicate members) come before the parameters'.
    if let Err(e) = idem_store::fingerprint(&app.route.operation, &request.body) {
        return problem_for(&e);
    }
    let params = match CheckoutRequest::parse(&request.body) {
        Ok(params) => params,
        Err(refused) => return refused,
    };
    let begun = app
        .db
        .begin(&request.scope, Some(key), &request.body, &app.route)
        .await;
    let mut claim = match begun {
        Ok(Begun::Execute(claim)) => claim,
        Ok(Begun::Answer(decision)) => {
            return response_for(&decision).unwrap_or_else(problems::internal);
        }
        Err(e) => return storage_error(&e),
    };

    // Phase 1: the order commits with the claim, or neither does.
    let fingerprint = claim.fingerprint().to_hex();
    let order = match orders::find_or_create(claim.tx(), &request.scope, key, &fingerprint, &params)
        .await
    {
        Ok(order) => order,
        Err(e) => return storage_error(&e.into()),
    };
    let held = match claim.commit().await {
        Ok(held) => held,
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

    // Phase 3: the order's result and the response, fenced, in one transaction.
    match outcome {
        Ok(ChargeOutcome::Charged(charge)) => {
            let answer = params::paid(order.id, &charge);
            settle(
                app,
                &held,
                order.id,
                "paid",
                Some(&charge.charge),
                answer,
                false,
            )
            .await
        }
        Ok(ChargeOutcome::Declined) => {
            let answer = params::declined(order.id);
            settle(app, &held, order.id, "declined", None, answer, true).await
        }
        Err(unknown) => give_back(app, &held, &unknown).await,
    }
}

/// Commit the order's `status` and the `answer` under the claim (`failed`: through the
/// route's error policy, which saves or releases).
async fn settle(
    app: &Checkout,
    held: &Held,
    order: i64,
    status: &str,
    charge: Option<&str>,
    answer: HttpResponse,
    failed: bool,
) -> HttpResponse {
    let mut finishing = match app.db.finish(held).await {
        Ok(f) => f,
        Err(e) => return storage_error(&e),
    };
    if let Err(e) = orders::settle(finishing.tx(), order, status, charge).await {
        return storage_error(&e.into());
    }
    app.failpoints.hit(Step::BeforeCommit).await;
    let saved = to_saved(&answer);
    let committed = if failed {
        finishing.fail(saved).await
    } else {
        finishing.commit(saved).await
    };
    match committed {
        Ok(Ok(())) => answer,
        // Another worker took the claim over: our writes were rolled back; its answer will
        // be the one replayed.
        Ok(Err(_fenced)) => lease_lost(),
        Err(e) => storage_error(&e),
    }
}

/// PayCo's outcome is unknown: save nothing (whatever the route's policy), release the claim
/// so the client's retry resumes the order and asks PayCo again under the same key.
async fn give_back(app: &Checkout, held: &Held, unknown: &ChargeUnknown) -> HttpResponse {
    tracing::warn!(error = %unknown, "charge outcome unknown; releasing the claim");
    match app.db.release(held).await {
        Ok(_) => problems::bad_gateway(&unknown.to_string()),
        Err(e) => storage_error(&e),
    }
}
