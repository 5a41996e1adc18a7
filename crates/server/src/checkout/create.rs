//! `POST /api/checkout`: idem-checkout's state machine driven over SQL and HTTP. Each
//! [`Step`] it asks for is one I/O here: the claim with the order (the recovery point), PayCo
//! under `charge:<order>` outside any transaction, the order settled and the answer saved in
//! one fenced write (with the outbox's `order.paid` message when paid), or the claim released. What PayCo's answer means for the order, the claim
//! and the client is the machine's, not this file's; the checkpoints ([`super::checkpoint`])
//! sit between the steps.

use axum::{
    extract::{Request, State},
    response::Response,
};
use idem_checkout::{ChargeOutcome, Checkout as Work, Ending, Settle, Settled, Step};
use idem_store::http::{internal_error, lease_lost};

use super::{
    checkpoint::{dropped_connection, At, Flow, Point},
    orders, outbox, params,
    payco_client::ChargeOutcome as PaycoAnswer,
    Checkout,
};
use crate::{
    db::{BeginWith, Claim, ClaimTx, DbError, Finish, RouteInsert, RouteWrite},
    payco::wire::ChargeRequest,
    request::{idempotency_key, IdempotentRequest},
    sql::now_ms,
    storage_error,
    wire::{to_response, to_saved},
};

/// The handler.
pub async fn create(State(app): State<Checkout>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // The arrival checkpoint sees the tenant and key as sent; a request without a tenant is
    // the handler's 401, no fault of anyone's. Unarmed, nothing is read.
    let armed = app.checkpoints.armed();
    let scope = armed
        .then(|| app.tenants.scope(&parts.headers).ok())
        .flatten();
    if let Some(scope) = scope {
        let key = idempotency_key(&parts.headers).ok().flatten();
        let at = At {
            scope: &scope,
            key: key.as_deref(),
        };
        match app.checkpoints.pass(Point::Arrival, at).await {
            Flow::Continue => {}
            Flow::Drop => return dropped_connection(),
            Flow::Answer(answer) => return to_response(answer),
        }
    }
    let flow = match IdempotentRequest::read(&parts, body, &*app.tenants, app.body).await {
        Ok(request) => run(&app, request).await,
        Err(refused) => Flow::Answer(refused),
    };
    match flow {
        Flow::Answer(answer) => to_response(answer),
        Flow::Drop | Flow::Continue => dropped_connection(),
    }
}

/// Who drives the work after its claim.
#[derive(Debug, Clone, Copy)]
pub(super) enum Driver<'a> {
    /// A client's request: the checkpoints apply, and an unknown outcome releases the claim
    /// for the client's retry.
    Client(At<'a>),
    /// The completer ([`super::completer`]), for a claim nobody came back for: no checkpoint,
    /// and an unknown outcome leaves the claim in flight for a later pass.
    Completer,
}

/// Pass a checkpoint (a client's request only): return its flow unless it says carry on.
macro_rules! pass {
    ($app:expr, $point:expr, $driver:expr) => {
        if let Driver::Client(at) = $driver {
            match $app.checkpoints.pass($point, at).await {
                Flow::Continue => {}
                stop => return stop,
            }
        }
    };
}

/// The checkout, from its parameters to its answer ([`Flow::Drop`]: none).
async fn run(app: &Checkout, request: IdempotentRequest) -> Flow {
    let params = match request.parse(&app.route, params::parse) {
        Ok(params) => params,
        Err(answer) => return Flow::Answer(answer),
    };
    // `parse` refused a request without a key.
    let key = request.key.as_deref().unwrap_or_default();
    let at = At {
        scope: &request.scope,
        key: Some(key),
    };
    let created_at = i64::try_from(now_ms()).unwrap_or(i64::MAX);
    let first = orders::insert(&request.scope, key, &params, created_at);
    let mut work = Work::new(&params);

    // The claim and the order commit together, or neither does.
    let claimed = match request
        .begin_with_waiting(&app.db, &app.route, &first, app.wait)
        .await
    {
        Ok(BeginWith::Created { claim, id }) => Ok((claim, work.order_ready(id))),
        Ok(BeginWith::Resume(claim_tx)) => {
            resume(claim_tx, &mut work, &request.scope, &first).await
        }
        // `IdempotentRequest::begin_with_waiting` answers everything else itself.
        Ok(BeginWith::Unkeyed | BeginWith::Answer(_)) => return Flow::Answer(internal_error()),
        Err(answer) => return Flow::Answer(answer),
    };
    let (claim, step) = match claimed {
        Ok(claimed) => claimed,
        Err(e) => return Flow::Answer(storage_error(&e)),
    };
    work_on(app, claim, work, step, Driver::Client(at)).await
}

/// The work from its claim to its answer: PayCo, then the settlement or the release, as the
/// machine asks. Shared by a client's request and the completer.
pub(super) async fn work_on(
    app: &Checkout,
    mut claim: Claim,
    mut work: Work,
    step: Step,
    driver: Driver<'_>,
) -> Flow {
    pass!(app, Point::AfterClaim, driver);

    // PayCo, under the order's key, outside any transaction.
    let Step::Charge(call) = step else {
        return answer(step);
    };
    let charge = ChargeRequest {
        order: call.order,
        amount: call.amount,
        card: call.card,
    };
    // PayCo may take longer than a lease (its own retries on 409 and on broken connections):
    // the lease is renewed meanwhile, so this live worker is never taken over.
    let charged = app
        .db
        .hold(&mut claim, app.payco.charge(&call.key, &charge));
    let outcome = match charged.await {
        Ok(answer) => understood(answer),
        // The lease was lost while PayCo was asked (the process stalled past it): the worker
        // that took the claim over asks PayCo under the same key; this one stops here.
        Err(DbError::Fenced) => return Flow::Answer(lease_lost()),
        Err(e) => return Flow::Answer(storage_error(&e)),
    };
    if let Driver::Client(at) = driver {
        app.checkpoints
            .note(at, || payco_note(call.order, call.amount, &outcome));
    }
    pass!(app, Point::AfterCharge, driver);

    // The order's result and the answer, fenced and together; or the claim released.
    let step = match work.charged(outcome, now_ms()) {
        Step::Settle(settle) => {
            pass!(app, Point::BeforeCommit, driver);
            match settle_fenced(app, &claim, settle, call.amount).await {
                Ok(Settled::Committed) => {
                    let step = work.settled(Settled::Committed);
                    pass!(app, Point::AfterCommit, driver);
                    step
                }
                Ok(Settled::Fenced) => work.settled(Settled::Fenced),
                Err(e) => return Flow::Answer(storage_error(&e)),
            }
        }
        // The completer keeps the claim (it goes stale under the completer's lease) for a later
        // pass: released, no pass would list it again.
        Step::Release if matches!(driver, Driver::Completer) => work.released(),
        Step::Release => {
            tracing::warn!(
                order = call.order,
                "charge outcome unknown; releasing the claim"
            );
            match app.db.finish(now_ms(), &claim, Finish::Release).await {
                // Fenced: another worker owns the claim now; the outcome is unknown all the same.
                Ok(()) | Err(DbError::Fenced) => work.released(),
                Err(e) => return Flow::Answer(storage_error(&e)),
            }
        }
        other => other,
    };
    answer(step)
}

/// The machine's last step: its answer.
fn answer(step: Step) -> Flow {
    match step {
        Step::Answer(answer) => Flow::Answer(answer),
        // Every path of the machine ends in an answer; anything else is a driver bug.
        _ => Flow::Answer(internal_error()),
    }
}

/// Resume the order an earlier worker of this same request left (a takeover, or a claim
/// after a release), or create it if the recovery point names none; commit with the claim.
pub(super) async fn resume(
    mut claim_tx: ClaimTx,
    work: &mut Work,
    scope: &str,
    first: &RouteInsert<'_>,
) -> Result<(Claim, Step), DbError> {
    let mut step = work.resume(recovered_order_id(&claim_tx));
    loop {
        step = match step {
            Step::ResumeOrder(id) => match orders::request_of(claim_tx.tx(), scope, id).await? {
                Some(_) => work.order_ready(id),
                None => work.order_missing(),
            },
            Step::CreateOrder => work.order_ready(claim_tx.create(first).await?),
            next => return Ok((claim_tx.commit().await?, next)),
        };
    }
}

/// The order id saved as the claim's recovery point. An unreadable one (a hand-edited row)
/// is logged and treated as absent: a new order is made, and PayCo's key for it is new too.
pub(super) fn recovered_order_id(claim_tx: &ClaimTx) -> Option<i64> {
    let point = claim_tx.recovery()?;
    let id = RouteInsert::id_of(point);
    if id.is_none() {
        tracing::error!(point = ?point, "unreadable recovery point; starting a new order");
    }
    id
}

/// PayCo's answer as the checkout understands it.
fn understood<E: std::fmt::Display>(answer: Result<PaycoAnswer, E>) -> ChargeOutcome {
    match answer {
        Ok(PaycoAnswer::Charged(charge)) => ChargeOutcome::Charged {
            charge: charge.charge,
        },
        Ok(PaycoAnswer::Declined) => ChargeOutcome::Declined,
        Err(unknown) => ChargeOutcome::Unknown {
            reason: unknown.to_string(),
        },
    }
}

/// The `payco:` note a demo tenant's event stream gets (PayCo's ledger may have changed).
fn payco_note(order: i64, amount: i64, outcome: &ChargeOutcome) -> String {
    match outcome {
        ChargeOutcome::Charged { charge } => {
            format!("payco: charged {charge} for order {order} ({amount} cents)")
        }
        ChargeOutcome::Declined => format!("payco: declined order {order}"),
        ChargeOutcome::Unknown { reason } => {
            format!("payco: no clear answer for order {order}: {reason}")
        }
    }
}

/// Settle the order and end the claim with the answer, fenced, together (one statement on
/// PostgreSQL); a paid order's `order.paid` message for the outbox goes in the same write, so
/// a message exists exactly when its order is paid. A failure's end is the route's declared
/// policy ([`Claim::failed`]).
async fn settle_fenced(
    app: &Checkout,
    claim: &Claim,
    settle: Settle,
    amount: i64,
) -> Result<Settled, DbError> {
    let Settle {
        order,
        status,
        answer,
        ending,
    } = settle;
    let saved = to_saved(&answer);
    let finish = match ending {
        Ending::Success => Finish::Commit(saved),
        Ending::Failure => claim.failed(saved),
    };
    let now = now_ms();
    let message = status.charge().map(|charge| {
        let created_at = i64::try_from(now).unwrap_or(i64::MAX);
        outbox::table::paid(claim.id().scope(), order, amount, charge, created_at)
    });
    let mut writes: Vec<RouteWrite> =
        vec![orders::settlement(order, status.name(), status.charge()).into()];
    writes.extend(message.as_ref().map(|m| m.insert().into()));
    match app.db.finish_with(now, claim, finish, &writes).await {
        Ok(()) => Ok(Settled::Committed),
        Err(DbError::Fenced) => Ok(Settled::Fenced),
        Err(e) => Err(e),
    }
}
