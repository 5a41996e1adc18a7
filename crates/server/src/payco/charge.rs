//! `POST /charges`: idempotent on its key through the store's rules, `save-response` policy.
//! The ledger row and the saved answer (201 or 402) commit in one fenced transaction, so a
//! key's answer never exists without its ledger row, nor the other way round.

use axum::{
    extract::{Request, State},
    response::Response,
};
use idem_store::{
    http::{lease_lost, problem_for, response_for, HttpResponse},
    RequestError,
};

use super::{
    ledger,
    wire::{Charge, ChargeRequest, DECLINING_CARD, MAX_AMOUNT},
    Payco,
};
use crate::{
    db::Begun,
    problems,
    request::IdempotentRequest,
    storage_error,
    wire::{json, to_response, to_saved},
};

/// The handler.
pub async fn charge(State(app): State<Payco>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let answer = match IdempotentRequest::read(&parts, body, &*app.merchants, app.body).await {
        Ok(request) => run(&app, request).await,
        Err(refused) => refused,
    };
    to_response(answer)
}

fn parse(body: &[u8]) -> Result<ChargeRequest, HttpResponse> {
    let charge: ChargeRequest = serde_json::from_slice(body)
        .map_err(|e| problems::invalid_parameters(&format!("charge body: {e}")))?;
    if !(1..=MAX_AMOUNT).contains(&charge.amount)
        || charge.card.is_empty()
        || charge.card.len() > 128
    {
        return Err(problems::invalid_parameters(&format!(
            "amount must be 1..={MAX_AMOUNT} cents and card 1..=128 bytes"
        )));
    }
    Ok(charge)
}

async fn run(app: &Payco, request: IdempotentRequest) -> HttpResponse {
    let Some(key) = request.key.as_deref() else {
        return problem_for(&RequestError::MissingKey);
    };
    if let Err(e) = idem_store::fingerprint(&app.route.operation, &request.body) {
        return problem_for(&e);
    }
    let charge = match parse(&request.body) {
        Ok(charge) => charge,
        Err(refused) => return refused,
    };
    let claim = match app
        .db
        .begin(&request.scope, Some(key), &request.body, &app.route)
        .await
    {
        Ok(Begun::Execute(claim)) => claim,
        Ok(Begun::Answer(decision)) => {
            return response_for(&decision).unwrap_or_else(problems::internal);
        }
        Err(e) => return storage_error(&e),
    };
    let held = match claim.commit().await {
        Ok(held) => held,
        Err(e) => return storage_error(&e),
    };
    // The decision is PayCo's, taken after its key lookup (the claim above): a key it has
    // answered is replayed before this line is ever reached.
    let declined = charge.card == DECLINING_CARD;
    let mut finishing = match app.db.finish(&held).await {
        Ok(f) => f,
        Err(e) => return storage_error(&e),
    };
    let outcome = if declined { "declined" } else { "charged" };
    let id = match ledger::record(finishing.tx(), &request.scope, key, &charge, outcome).await {
        Ok(id) => id,
        Err(e) => return storage_error(&e.into()),
    };
    let answer = if declined {
        problems::payment_declined(&format!("card {DECLINING_CARD} always declines"))
    } else {
        let charge = Charge {
            charge: format!("ch_{id}"),
            order: charge.order,
            amount: charge.amount,
        };
        json(201, &charge, &[])
    };
    // Both answers are saved (402 included, as Stripe saves errors): `save-response`.
    match finishing.commit(to_saved(&answer)).await {
        Ok(Ok(())) => answer,
        Ok(Err(_fenced)) => lease_lost(),
        Err(e) => storage_error(&e),
    }
}
