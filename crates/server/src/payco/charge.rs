//! `POST /charges`: idempotent on its key through the store's rules, `save-response` policy.
//! The ledger row and the saved answer (201 or 402) commit in one fenced transaction, so a
//! key's answer never exists without its ledger row, nor the other way round.

use crate::db::Finish;
use axum::{
    extract::{Request, State},
    response::Response,
};
use idem_store::http::{lease_lost, HttpResponse};

use super::{
    ledger,
    wire::{Charge, ChargeRequest, DECLINING_CARD, MAX_AMOUNT},
    Payco,
};
use crate::{
    db::{Claim, DbError},
    problems,
    request::IdempotentRequest,
    sql::now_ms,
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
    let (claim_tx, charge) = match request.begin_parsed(&app.db, &app.route, parse).await {
        Ok(begun) => begun,
        Err(answer) => return answer,
    };
    let claim = match claim_tx.commit().await {
        Ok(claim) => claim,
        Err(e) => return storage_error(&e),
    };
    let key = claim.id().key().as_str();
    // The decision is PayCo's, taken after its key lookup (the claim above): a key it has
    // answered is replayed before this line is ever reached.
    let declined = charge.card == DECLINING_CARD;
    match record(app, &claim, &request.scope, key, &charge, declined).await {
        Ok(answer) => answer,
        Err(DbError::Fenced) => lease_lost(),
        Err(e) => storage_error(&e),
    }
}

/// The ledger row and the saved answer, in one fenced transaction. Both answers are saved
/// (the 402 included, as Stripe saves errors): `save-response`.
async fn record(
    app: &Payco,
    claim: &Claim,
    merchant: &str,
    key: &str,
    charge: &ChargeRequest,
    declined: bool,
) -> Result<HttpResponse, DbError> {
    let mut commit = app.db.finish_tx(claim).await?;
    let outcome = if declined { "declined" } else { "charged" };
    let id = ledger::record(commit.tx(), merchant, key, charge, outcome).await?;
    let answer = if declined {
        problems::payment_declined(&format!("card {DECLINING_CARD} always declines"))
    } else {
        let charged = Charge {
            charge: format!("ch_{id}"),
            order: charge.order,
            amount: charge.amount,
        };
        json(201, &charged, &[])
    };
    commit
        .finish(now_ms(), Finish::Commit(to_saved(&answer)))
        .await?;
    Ok(answer)
}
