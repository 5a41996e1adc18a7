//! The checkout's resume function for idem-axum's completer: a checkout whose worker died
//! (after PayCo charged, say) and whose client never came back is finished here, through the
//! same state machine and the same steps as a request ([`super::create::work_on`]): the order
//! its recovery point names, PayCo asked again under `charge:<order>` (which answers what it
//! did), the order settled and the answer saved, fenced like any worker. A client that comes
//! back later gets the replay.

use idem_checkout::{Checkout as Work, Step};

use super::{
    checkpoint::Flow,
    create::{recovered_order_id, work_on, Driver},
    orders, Checkout,
};
use crate::{
    completer::{Completer, CompleterConfig, Resumed},
    db::{ClaimTx, DbError},
};

/// The completer of the checkout's abandoned claims.
pub fn completer(app: Checkout, config: CompleterConfig) -> Completer {
    let (db, route) = (app.db.clone(), app.route.clone());
    Completer::new(db, route, config, move |claim_tx| {
        let app = app.clone();
        async move { resume(&app, claim_tx).await }
    })
}

/// Finish the checkout of a taken-over claim from its recovery point.
async fn resume(app: &Checkout, mut claim_tx: ClaimTx) -> Result<Resumed, DbError> {
    let scope = claim_tx.claim().id().scope().to_owned();
    let point = recovered_order_id(&claim_tx);
    let request = match point {
        Some(order) => orders::request_of(claim_tx.tx(), &scope, order).await?,
        None => None,
    };
    let (Some(order), Some(request)) = (point, request) else {
        // Nothing says what was asked: roll the takeover back, leave it to a retry.
        tracing::error!(%scope, "abandoned checkout without a readable order; left as it is");
        return Ok(Resumed::Left);
    };
    let mut work = Work::new(&request);
    let step = match work.resume(Some(order)) {
        Step::ResumeOrder(id) => work.order_ready(id),
        other => other,
    };
    let claim = claim_tx.commit().await?;
    Ok(
        match work_on(app, claim, work, step, Driver::Completer).await {
            // Paid or declined, and the claim ended by the route's policy.
            Flow::Answer(answer) if matches!(answer.status, 201 | 402) => Resumed::Finished,
            // PayCo's outcome unknown (the claim kept for a later pass), fenced, or a storage
            // error: not finished here.
            _ => Resumed::Left,
        },
    )
}
