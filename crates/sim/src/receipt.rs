//! The checkout handler's answer body: which order, which charge, how much, served when.

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
    /// Virtual time the work finished.
    pub served_at: u64,
}

/// Append `v` in decimal, without the formatting machinery (request and response bodies are
/// written on the hot path).
pub(crate) fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

impl Receipt {
    /// The JSON body, written without the formatting machinery (this is on the hot path):
    /// `{"order":1,"charge":2,"amount":300,"served_at":4}`.
    pub fn to_body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(72);
        out.extend_from_slice(b"{\"order\":");
        push_u64(&mut out, self.order.0);
        out.extend_from_slice(b",\"charge\":");
        push_u64(&mut out, self.charge.0);
        out.extend_from_slice(b",\"amount\":");
        push_u64(&mut out, u64::from(self.amount));
        out.extend_from_slice(b",\"served_at\":");
        push_u64(&mut out, self.served_at);
        out.push(b'}');
        out
    }

    /// Parse a body written by [`Receipt::to_body`] (or any JSON object with those fields).
    pub fn from_body(body: &[u8]) -> Option<Receipt> {
        let mut fields = [0u64; 4];
        let names: [&[u8]; 4] = [
            b"\"order\":",
            b"\"charge\":",
            b"\"amount\":",
            b"\"served_at\":",
        ];
        for (slot, name) in fields.iter_mut().zip(names) {
            let at = body.windows(name.len()).position(|w| w == name)? + name.len();
            let digits = body[at..].iter().take_while(|b| b.is_ascii_digit());
            let mut v: u64 = 0;
            let mut any = false;
            for d in digits {
                v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                any = true;
            }
            if !any {
                return None;
            }
            *slot = v;
        }
        Some(Receipt {
            order: OrderId(fields[0]),
            charge: ChargeId(fields[1]),
            amount: u32::try_from(fields[2]).ok()?,
            served_at: fields[3],
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
        assert_eq!(v["amount"], 4200);
        assert_eq!(Receipt::from_body(b"{\"type\":\"conflict\"}"), None);
    }
}
