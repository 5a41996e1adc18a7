//! What the checkout answers, as idem-store's wire values: the 201 receipt of a paid order,
//! the declined card's 402 and the 502 of a charge whose outcome is unknown. The simulator and
//! idem-server send these bytes; the simulator's checker and pages read the receipt back with
//! [`Receipt::from_body`].

use idem_store::http::{self, HttpResponse};
use serde::{Deserialize, Serialize};

/// Problem `type` of a declined card (402): final for this key.
pub const PAYMENT_DECLINED: &str = "/problems/payment-declined";

/// The 201 body of a paid checkout. Two executions of one key that both answered would differ
/// in `served_at`, so a replay that is not the first answer byte for byte shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The order, created or resumed; PayCo's key for it is `charge:<order>`.
    pub order: i64,
    /// `paid`.
    pub status: String,
    /// PayCo's charge id (`ch_<n>`).
    pub charge: String,
    /// Amount charged, in cents.
    pub amount: i64,
    /// When the work settled the order, ms (the server's wall clock, the simulator's virtual
    /// time).
    pub served_at: u64,
}

impl Receipt {
    /// A paid order's receipt.
    pub fn paid(order: i64, charge: &str, amount: i64, served_at: u64) -> Receipt {
        Receipt {
            order,
            status: "paid".to_owned(),
            charge: charge.to_owned(),
            amount,
            served_at,
        }
    }

    /// The JSON body: `{"order":7,"status":"paid","charge":"ch_1","amount":4200,"served_at":9}`.
    pub fn to_body(&self) -> Vec<u8> {
        // A struct of strings and integers always serialises.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A body written by [`Receipt::to_body`] (or any JSON object with its fields).
    pub fn from_body(body: &[u8]) -> Option<Receipt> {
        serde_json::from_slice(body).ok()
    }

    /// The first answer of a paid checkout: 201, the receipt, `Location` of the order.
    pub fn answer(&self) -> HttpResponse {
        HttpResponse {
            status: 201,
            headers: vec![
                (http::CONTENT_TYPE.to_owned(), "application/json".to_owned()),
                ("Location".to_owned(), format!("/api/orders/{}", self.order)),
            ],
            body: self.to_body(),
        }
    }
}

/// The first answer of a declined checkout: 402, final for this key.
pub fn declined(order: i64) -> HttpResponse {
    http::problem(
        402,
        PAYMENT_DECLINED,
        "Payment declined",
        &format!(
            "the card was declined for order {order}; paying again with another card is a new \
             checkout with a new idempotency key"
        ),
        None,
    )
}

/// The answer when PayCo's outcome is unknown (no answer in time, or none it could read):
/// 502 with `Retry-After: 1`. Nothing is saved: the retry resumes the order and asks PayCo
/// again under the same key, and PayCo's answer settles it.
pub fn outcome_unknown(reason: &str) -> HttpResponse {
    http::bad_gateway(reason, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_receipt_round_trips_and_its_answer_names_the_order() {
        let r = Receipt::paid(12, "ch_3", 4200, 1_234_567);
        let body = r.to_body();
        assert_eq!(
            body,
            br#"{"order":12,"status":"paid","charge":"ch_3","amount":4200,"served_at":1234567}"#
        );
        assert_eq!(Receipt::from_body(&body), Some(r.clone()));
        assert_eq!(Receipt::from_body(br#"{"type":"conflict"}"#), None);
        let answer = r.answer();
        assert_eq!(answer.status, 201);
        assert_eq!(answer.header("location"), Some("/api/orders/12"));
        assert_eq!(answer.body, body);
    }

    #[test]
    fn failures_are_problems_with_relative_types() {
        for (answer, status, kind) in [
            (declined(3), 402, PAYMENT_DECLINED),
            (outcome_unknown("timeout"), 502, http::problem::BAD_GATEWAY),
        ] {
            assert_eq!(answer.status, status);
            assert_eq!(answer.header(http::CONTENT_TYPE), Some(http::PROBLEM_JSON));
            let p: http::Problem = serde_json::from_slice(&answer.body).unwrap();
            assert_eq!((p.kind.as_str(), p.status), (kind, status));
            assert!(kind.starts_with("/problems/"), "{kind}");
        }
        assert_eq!(outcome_unknown("x").header(http::RETRY_AFTER), Some("1"));
    }
}
