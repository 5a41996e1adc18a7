//! Generators for tests that need a `rand_core::RngCore` but no randomness.
// Each test binary uses part of `common`.
#![allow(dead_code)]

use rand_core::RngCore;

/// Always draws 0: the low end of every jitter range.
pub struct Zero;

impl RngCore for Zero {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0)
    }
}
