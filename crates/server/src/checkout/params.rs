//! The checkout's request and answers.

use idem_store::http::HttpResponse;
use serde::{Deserialize, Serialize};

use crate::{
    payco::wire::{Charge, MAX_AMOUNT},
    problems,
    wire::json,
};

/// The route template the checkout's keys are fingerprinted under.
pub const CHECKOUT_ROUTE: &str = "POST /api/checkout";

/// Longest cart id and card token accepted, in bytes.
pub const MAX_ID_LEN: usize = 128;

/// `POST /api/checkout` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckoutRequest {
    /// The cart being paid.
    pub cart: String,
    /// Amount in cents, 1..=100 000 000.
    pub amount: i64,
    /// Card token; [`crate::payco::wire::DECLINING_CARD`] always declines.
    pub card: String,
}

impl CheckoutRequest {
    /// Parse and check a body that is already known to be JSON; a 400 problem otherwise.
    pub fn parse(body: &[u8]) -> Result<Self, HttpResponse> {
        let request: Self = serde_json::from_slice(body)
            .map_err(|e| problems::invalid_parameters(&format!("checkout body: {e}")))?;
        if !(1..=MAX_AMOUNT).contains(&request.amount) {
            return Err(problems::invalid_parameters(&format!(
                "amount must be 1..={MAX_AMOUNT} cents"
            )));
        }
        for (name, value) in [("cart", &request.cart), ("card", &request.card)] {
            if value.is_empty() || value.len() > MAX_ID_LEN {
                return Err(problems::invalid_parameters(&format!(
                    "{name} must be 1..={MAX_ID_LEN} bytes"
                )));
            }
        }
        Ok(request)
    }
}

/// The 201 body of a paid checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paid {
    /// The order id.
    pub order: i64,
    /// `paid`.
    pub status: String,
    /// PayCo's charge id.
    pub charge: String,
    /// Amount in cents.
    pub amount: i64,
}

/// The first answer of a paid checkout: 201, the order as JSON, `Location` of the order.
pub fn paid(order: i64, charge: &Charge) -> HttpResponse {
    let body = Paid {
        order,
        status: "paid".to_owned(),
        charge: charge.charge.clone(),
        amount: charge.amount,
    };
    json(201, &body, &[("Location", format!("/api/orders/{order}"))])
}

/// The first answer of a declined checkout: 402 problem.
pub fn declined(order: i64) -> HttpResponse {
    problems::payment_declined(&format!(
        "the card was declined for order {order}; paying again with another card is a new checkout with a new idempotency key"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_checkout_and_refuses_bad_parameters() {
        let ok = CheckoutRequest::parse(br#"{"cart":"c-1","amount":4200,"card":"tok_visa"}"#);
        assert_eq!(ok.unwrap().amount, 4200);
        for bad in [
            &br#"{"cart":"c-1","amount":0,"card":"tok_visa"}"#[..],
            br#"{"cart":"c-1","amount":-5,"card":"tok_visa"}"#,
            br#"{"cart":"c-1","amount":100000001,"card":"tok_visa"}"#,
            br#"{"cart":"","amount":1,"card":"tok_visa"}"#,
            br#"{"cart":"c","amount":1}"#,
            br#"{"cart":"c","amount":"1","card":"x"}"#,
            br#"{"cart":"c","amount":1,"card":"x","extra":1}"#,
            br#"[]"#,
        ] {
            let err = CheckoutRequest::parse(bad).unwrap_err();
            assert_eq!(err.status, 400, "{}", String::from_utf8_lossy(bad));
        }
    }
}
