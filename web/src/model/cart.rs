//! The cart every checkout pays for, its total and how the page writes euros: the demo's one
//! domain value, read by the checkout panel, the ledger, the feed and the Pay button's input.

/// The cart: (item, quantity, unit price in cents).
pub const CART: [(&str, u32, u64); 3] = [
    ("Ceramic mug", 1, 1_400),
    ("Sticker pack", 2, 350),
    ("Shipping", 1, 490),
];

/// The cart's total in cents.
pub const fn total() -> u64 {
    let mut sum = 0;
    let mut i = 0;
    while i < CART.len() {
        sum += CART[i].1 as u64 * CART[i].2;
        i += 1;
    }
    sum
}

/// The total as the amount a checkout sends (cents; the cart is far below `u32::MAX`).
pub const AMOUNT: u32 = total() as u32;

/// `2590` → `"€25.90"`.
pub fn euros(cents: u64) -> String {
    let mut out = String::from("€");
    out.push_str(&(cents / 100).to_string());
    out.push('.');
    let rest = cents % 100;
    if rest < 10 {
        out.push('0');
    }
    out.push_str(&rest.to_string());
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn totals() {
        assert_eq!(super::total(), 2_590);
        assert_eq!(u64::from(super::AMOUNT), super::total());
        assert_eq!(super::euros(2_590), "€25.90");
        assert_eq!(super::euros(5), "€0.05");
        assert_eq!(super::euros(100), "€1.00");
    }

    /// The scenarios pay for this cart: the cart shown is the amount PayCo charges.
    #[test]
    fn the_scenarios_cart_is_this_cart() {
        assert_eq!(super::AMOUNT, idem_sim::scenario::CART_CENTS);
    }
}
