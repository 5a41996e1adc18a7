//! What `POST /api/checkout` accepts: its body, its bounds, and the body's canonical bytes.

use serde::{Deserialize, Serialize};

/// The route template the checkout's keys are fingerprinted under (the operation of every
/// checkout's fingerprint, in the simulator and on the server).
pub const ROUTE: &str = "POST /api/checkout";

/// Longest cart id and card token accepted, in bytes.
pub const MAX_ID_LEN: usize = 128;

/// Largest amount accepted, in cents.
pub const MAX_AMOUNT: i64 = 100_000_000;

/// `POST /api/checkout`'s body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckoutRequest {
    /// The cart being paid.
    pub cart: String,
    /// Amount in cents, 1..=[`MAX_AMOUNT`].
    pub amount: i64,
    /// Card token (the example PayCo always declines `tok_decline`).
    pub card: String,
}

impl CheckoutRequest {
    /// Parse and check a body; `Err` is the detail of the 400 the caller answers.
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        let request: Self =
            serde_json::from_slice(body).map_err(|e| format!("checkout body: {e}"))?;
        if !(1..=MAX_AMOUNT).contains(&request.amount) {
            return Err(format!("amount must be 1..={MAX_AMOUNT} cents"));
        }
        for (name, value) in [("cart", &request.cart), ("card", &request.card)] {
            if value.is_empty() || value.len() > MAX_ID_LEN {
                return Err(format!("{name} must be 1..={MAX_ID_LEN} bytes"));
            }
        }
        Ok(request)
    }

    /// The body as RFC 8785 canonical JSON (keys sorted: `amount`, `card`, `cart`): the bytes
    /// the SDK sends for this request, and so the bytes its fingerprint is taken of. Written
    /// without a canonicaliser (the simulator's pages make one per checkout, in the browser).
    pub fn canonical(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.cart.len() + self.card.len());
        out.extend_from_slice(b"{\"amount\":");
        out.extend_from_slice(self.amount.to_string().as_bytes());
        out.extend_from_slice(b",\"card\":");
        push_json_string(&mut out, &self.card);
        out.extend_from_slice(b",\"cart\":");
        push_json_string(&mut out, &self.cart);
        out.push(b'}');
        out
    }
}

/// `s` as a JSON string. serde_json escapes as RFC 8785 does (`"`, `\`, the short escapes,
/// other control characters as lowercase `\u00xx`, nothing else).
fn push_json_string(out: &mut Vec<u8>, s: &str) {
    // Writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

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
            assert!(!err.is_empty(), "{}", String::from_utf8_lossy(bad));
        }
        let long = "x".repeat(MAX_ID_LEN + 1);
        let body = format!(r#"{{"cart":"{long}","amount":1,"card":"x"}}"#);
        assert!(CheckoutRequest::parse(body.as_bytes()).is_err());
    }

    /// The hand-written bytes are what a canonicaliser makes of the same request, escapes and
    /// all.
    #[test]
    fn the_canonical_body_is_rfc_8785() {
        for (cart, card) in [
            ("co_1", "tok_visa"),
            ("a\"b\\c", "tab\there"),
            ("\u{1}ctl\u{1f}", "é ✓ 🦀"),
        ] {
            let request = CheckoutRequest {
                cart: cart.to_owned(),
                amount: 4200,
                card: card.to_owned(),
            };
            // The store's fingerprint canonicalises what it is given: the same digest as the
            // bytes taken as already canonical means they are.
            let any_order = serde_json::to_vec(&request).unwrap();
            let canonical = request.canonical();
            assert_eq!(
                idem_store::fingerprint(ROUTE, &any_order).unwrap(),
                idem_store::Fingerprint::of_canonical(ROUTE, &canonical),
            );
            assert_eq!(CheckoutRequest::parse(&canonical).unwrap(), request);
        }
    }
}
