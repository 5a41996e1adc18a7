//! `POST /deliveries`: one outbox message from the relay, processed once. The sender's
//! bearer token is checked, the body read within the service's limits and parsed
//! ([`Delivery`]; a malformed body, a message id over 255 bytes or an empty one: 400
//! `invalid-delivery`; a kind it does not know: 422 `unknown-message-kind`; nothing recorded
//! either way), then `process_once` runs the effect (the receipt) in one transaction with
//! the message id. `200` acknowledges both a first delivery and a duplicate; a database that
//! fails is a 5xx, and the relay sends the message again.

use axum::{
    extract::{Request, State},
    response::Response,
};
use idem_store::http::{problem, HttpResponse};

use super::{table, Receipts};
use crate::{
    checkout::{
        checkpoint::{dropped_connection, At, Flow, Point},
        outbox::wire::{Ack, Delivery, Handled, OrderPaid, ORDER_PAID},
    },
    consumer::{ConsumeError, Processed, MAX_ID_BYTES},
    db::DbError,
    problems::{INVALID_DELIVERY, UNKNOWN_MESSAGE_KIND},
    request::read_body,
    sql::now_ms,
    storage_error,
    wire::{json, to_response},
};

/// The handler.
pub async fn deliver(State(app): State<Receipts>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(refused) = app.senders.scope(&parts.headers) {
        return to_response(refused.response());
    }
    let body = match read_body(&parts.headers, body, app.body).await {
        Ok(body) => body,
        Err(refused) => return to_response(refused),
    };
    let (delivery, paid) = match parse(&body) {
        Ok(parsed) => parsed,
        Err(refused) => return to_response(refused),
    };
    let now = now_ms();
    let created_at = i64::try_from(now).unwrap_or(i64::MAX);
    let (scope, id) = (delivery.scope.clone(), delivery.id.clone());
    let processed = app
        .consumer
        .process_once(now, &delivery.scope, &delivery.id, move |tx| {
            Box::pin(async move { table::insert(tx, &scope, &id, &paid, created_at).await })
        })
        .await;
    let handled = match processed {
        Ok(Processed::Applied(())) => Handled::Applied,
        Ok(Processed::Duplicate) => Handled::Duplicate,
        Err(ConsumeError::InvalidId(what)) => {
            return to_response(invalid(&format!("the {what} is empty or over 255 bytes")))
        }
        Err(ConsumeError::Effect(e)) => return to_response(storage_error(&DbError::from(e))),
        Err(ConsumeError::Db(e)) => return to_response(storage_error(&e)),
    };
    if handled == Handled::Applied {
        let at = At {
            scope: &delivery.scope,
            key: Some(&delivery.id),
        };
        // The effect is committed; a stop here is a consumer that died before its ack.
        match app.checkpoints.pass(Point::ConsumerAfterEffect, at).await {
            Flow::Continue => {}
            Flow::Drop => return dropped_connection(),
            Flow::Answer(answer) => return to_response(answer),
        }
    }
    let ack = Ack {
        message: delivery.id,
        handled,
    };
    to_response(json(200, &ack, &[]))
}

/// The delivery and its `order.paid` payload, or the 4xx that refuses it.
fn parse(body: &[u8]) -> Result<(Delivery, OrderPaid), HttpResponse> {
    let delivery: Delivery =
        serde_json::from_slice(body).map_err(|e| invalid(&format!("not a delivery: {e}")))?;
    for (what, id) in [("message id", &delivery.id), ("scope", &delivery.scope)] {
        if id.is_empty() || id.len() > MAX_ID_BYTES {
            return Err(invalid(&format!(
                "the {what} must be 1..={MAX_ID_BYTES} bytes, not {}",
                id.len()
            )));
        }
    }
    if delivery.kind != ORDER_PAID {
        return Err(problem(
            422,
            UNKNOWN_MESSAGE_KIND,
            "Unknown message kind",
            &format!(
                "this consumer processes {ORDER_PAID:?} messages only, not {:?}",
                truncated(&delivery.kind)
            ),
            None,
        ));
    }
    let paid = serde_json::from_value(delivery.payload.clone())
        .map_err(|e| invalid(&format!("not an {ORDER_PAID} payload: {e}")))?;
    Ok((delivery, paid))
}

/// 400 `invalid-delivery`.
fn invalid(detail: &str) -> HttpResponse {
    problem(400, INVALID_DELIVERY, "Invalid delivery", detail, None)
}

/// At most 64 characters of what a client sent, for a problem's detail.
fn truncated(s: &str) -> String {
    s.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(body: &str) -> u16 {
        match parse(body.as_bytes()) {
            Ok(_) => 200,
            Err(refused) => refused.status,
        }
    }

    #[test]
    fn a_delivery_is_parsed_or_refused_with_a_clear_status() {
        let good = r#"{"id":"order-1-paid","kind":"order.paid","scope":"tenant-a",
            "payload":{"order":1,"amount":4200,"charge":"ch_1"}}"#;
        assert_eq!(status(good), 200);
        let long = "x".repeat(MAX_ID_BYTES + 1);
        for (bad, expected) in [
            ("", 400),
            ("{", 400),
            ("[]", 400),
            (r#"{"id":"m","kind":"order.paid","scope":"t"}"#, 400),
            (
                r#"{"id":"m","kind":"order.paid","scope":"t","payload":{}}"#,
                400,
            ),
            (
                r#"{"id":"m","kind":"order.paid","scope":"t","payload":{"order":"1","amount":1,"charge":"c"}}"#,
                400,
            ),
            (
                r#"{"id":"","kind":"order.paid","scope":"t","payload":{"order":1,"amount":1,"charge":"c"}}"#,
                400,
            ),
            (
                &format!(
                    r#"{{"id":"{long}","kind":"order.paid","scope":"t","payload":{{"order":1,"amount":1,"charge":"c"}}}}"#
                ),
                400,
            ),
            (
                r#"{"id":"m","kind":"order.refunded","scope":"t","payload":{}}"#,
                422,
            ),
            (
                r#"{"id":"m","kind":"order.paid","scope":"t","payload":{"order":1,"amount":1,"charge":"c"},"x":1}"#,
                400,
            ),
        ] {
            assert_eq!(status(bad), expected, "{bad}");
        }
    }
}
