//! Small typed ids.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A checkout: one customer's cart, one logical order. Index into the world's checkouts;
/// written counted from 1 (`co_1` is `CheckoutId(0)`), as orders and PayCo's charges are, so a
/// lesson's one checkout reads `co_1`, its order `ord_1`, its charge `ch_1` (and as the demo's
/// real mode names the checkouts it sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CheckoutId(pub u32);

/// An order the server created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OrderId(pub u64);

impl fmt::Display for CheckoutId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "co_{}", u64::from(self.0) + 1)
    }
}

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ord_{}", self.0)
    }
}
