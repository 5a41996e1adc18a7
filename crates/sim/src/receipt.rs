//! The checkout's 201 body as the simulator reads it: idem-checkout's [`idem_checkout::Receipt`]
//! (the bytes the server sends too), with the simulator's typed ids.

use serde::{Deserialize, Serialize};

use crate::ids::OrderId;
use crate::payco::ChargeId;

/// What a 201 says. Two executions of one key answer with different `served_at`, so a replay
/// that is not byte-identical to the first answer shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The order created (or resumed).
    pub order: OrderId,
    /// The PayCo charge paying for it.
    pub charge: ChargeId,
    /// Amount charged, in cents.
    pub amount: u32,
    /// Virtual time the work settled the order.
    pub served_at: u64,
}

impl Receipt {
    /// idem-checkout's receipt for this one: the bytes both the simulator and the server send.
    pub fn to_wire(&self) -> idem_checkout::Receipt {
        let order = i64::try_from(self.order.0).unwrap_or(i64::MAX);
        let charge = self.charge.to_string();
        idem_checkout::Receipt::paid(order, &charge, i64::from(self.amount), self.served_at)
    }

    /// The JSON body: idem-checkout's.
    pub fn to_body(&self) -> Vec<u8> {
        self.to_wire().to_body()
    }

    /// Read a 201 body (idem-checkout's receipt) with the simulator's ids; `None` for any other
    /// body, or a charge id that is not `ch_<n>`.
    pub fn from_body(body: &[u8]) -> Option<Receipt> {
        let wire = idem_checkout::Receipt::from_body(body)?;
        let charge = wire.charge.strip_prefix("ch_")?.parse().ok()?;
        Some(Receipt {
            order: OrderId(u64::try_from(wire.order).ok()?),
            charge: ChargeId(charge),
            amount: u32::try_from(wire.amount).ok()?,
            served_at: wire.served_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_round_trips_and_is_json() {
        let r = Receipt {
            order: OrderId(12),
            charge: ChargeId(0),
            amount: 4200,
            served_at: 1_234_567,
        };
        let body = r.to_body();
        assert_eq!(Receipt::from_body(&body), Some(r));
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (v["amount"].as_u64(), v["charge"].as_str()),
            (Some(4200), Some("ch_0"))
        );
        assert_eq!(v["status"], "paid", "idem-checkout's receipt");
        assert_eq!(Receipt::from_body(b"{\"type\":\"conflict\"}"), None);
    }
}
