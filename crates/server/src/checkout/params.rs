//! The checkout's request, as idem-checkout defines it, read by the server: a body that does
//! not parse or is out of bounds is a 400 problem.

use idem_store::http::HttpResponse;

pub use idem_checkout::{CheckoutRequest, MAX_AMOUNT, MAX_ID_LEN, ROUTE as CHECKOUT_ROUTE};

use crate::problems;

// Every amount the checkout accepts is one PayCo accepts: checked when the crate compiles.
const _: () = assert!(MAX_AMOUNT <= crate::payco::wire::MAX_AMOUNT);

/// Parse and check a body that is already known to be JSON; a 400 problem otherwise.
pub fn parse(body: &[u8]) -> Result<CheckoutRequest, HttpResponse> {
    CheckoutRequest::parse(body).map_err(|detail| problems::invalid_parameters(&detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_body_is_a_400_problem() {
        let err = parse(br#"{"cart":"c","amount":0,"card":"x"}"#).unwrap_err();
        assert_eq!(err.status, 400);
        assert!(String::from_utf8_lossy(&err.body).contains("amount must be"));
    }
}
