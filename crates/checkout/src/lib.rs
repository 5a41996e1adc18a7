//! The example checkout's work, once, as values: what `POST /api/checkout` accepts
//! ([`CheckoutRequest`]), what it answers ([`answer`]: the 201 receipt, the declined card's
//! 402, the 502 of a charge whose outcome is unknown) and the phases between its claim and its
//! answer ([`Checkout`]: the order, PayCo under `charge:<order>`, the fenced settlement or the
//! release).
//!
//! Sans-IO, like idem-store: no clock (`now` is an argument), no database, no network. The
//! simulator (`idem-sim`) turns each [`Step`] into events in virtual time; idem-server turns it
//! into SQL and HTTP. Neither decides what a PayCo answer means for the order, the claim or the
//! client: that is [`Checkout::charged`]'s, so the classroom demo and the server run the same
//! checkout and a fix lands once.
//!
//! It does not claim keys (idem-store's rules do), store anything, or call PayCo; it does not
//! know about faults. What a failed work does to its claim (release or save) stays the route's
//! declared policy, decided by `idem_store::rules::finish` from [`Ending::Failure`].
//!
//! ```
//! use idem_checkout::{Checkout, ChargeOutcome, CheckoutRequest, OrderStatus, Settled, Step};
//!
//! let request = CheckoutRequest::parse(br#"{"amount":4200,"card":"tok_visa","cart":"c-1"}"#)?;
//! let mut checkout = Checkout::new(&request);
//! // The claim's first phase created order 7 (or resumed it after a takeover).
//! let Step::Charge(call) = checkout.order_ready(7) else { unreachable!() };
//! assert_eq!(call.key, "charge:7");
//! let charged = ChargeOutcome::Charged { charge: "ch_1".into() };
//! let Step::Settle(settle) = checkout.charged(charged, 1_000) else { unreachable!() };
//! assert_eq!(settle.status, OrderStatus::Paid { charge: "ch_1".into() });
//! let Step::Answer(answer) = checkout.settled(Settled::Committed) else { unreachable!() };
//! assert_eq!(answer.status, 201);
//! # Ok::<(), String>(())
//! ```

pub mod answer;
mod machine;
mod request;

pub use answer::Receipt;
pub use machine::{
    ChargeCall, ChargeOutcome, Checkout, Ending, OrderStatus, Settle, Settled, Step,
};
pub use request::{CheckoutRequest, MAX_AMOUNT, MAX_ID_LEN, ROUTE};

/// The key PayCo is charged under for `order`: the same for every worker of the order, so
/// PayCo answers a second charge with its first.
pub fn charge_key(order: i64) -> String {
    format!("charge:{order}")
}

#[cfg(all(test, target_arch = "wasm32"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
