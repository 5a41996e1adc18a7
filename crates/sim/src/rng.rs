//! The world's one source of randomness: a seeded, portable ChaCha8 stream.
//!
//! `StdRng` is documented as non-portable and `thread_rng` draws from the OS; neither may reach
//! anything a replay depends on. Every random choice in a world goes through one [`SimRng`], in
//! event order, so the same seed gives the same draws natively and on wasm32.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

/// A seeded generator with the few draws the simulator needs.
#[derive(Clone, Debug)]
pub struct SimRng {
    inner: ChaCha8Rng,
}

impl SimRng {
    /// A generator whose whole stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            inner: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// True with probability `p` (clamped to 0..=1). Draws nothing when `p` is 0 or 1, so a
    /// fault that is switched off does not shift the stream of the faults that are on.
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        // 53 random bits → [0, 1): exact and identical on every platform.
        let x = (self.inner.random::<u64>() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        x < p
    }

    /// A uniform draw from `lo..=hi`; `lo` when the range is empty.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        self.inner.random_range(lo..=hi)
    }

    /// A uniform draw from `0..=max`.
    pub fn upto(&mut self, max: u64) -> u64 {
        self.between(0, max)
    }

    /// A uniform fraction in `lo..hi` (for swarm-drawn rates).
    pub fn fraction(&mut self, lo: f64, hi: f64) -> f64 {
        let x = (self.inner.random::<u64>() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        lo + (hi - lo) * x
    }

    /// A version-4 UUID minted from the stream (never from the OS).
    pub fn uuid(&mut self) -> Uuid {
        let bytes: [u8; 16] = self.inner.random();
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }

    /// The underlying generator, for APIs that take a `RngCore` (idem-client's backoff jitter).
    pub fn core(&mut self) -> &mut ChaCha8Rng {
        &mut self.inner
    }

    /// A raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.inner.random()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = SimRng::new(7);
        let mut b = SimRng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_eq!(a.uuid(), b.uuid());
        assert_ne!(SimRng::new(8).next_u64(), SimRng::new(7).next_u64());
    }

    #[test]
    fn chance_edges_draw_nothing() {
        let mut a = SimRng::new(1);
        let mut b = SimRng::new(1);
        assert!(!a.chance(0.0));
        assert!(a.chance(1.0));
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn chance_is_roughly_fair_and_between_in_range() {
        let mut r = SimRng::new(3);
        let hits = (0..10_000).filter(|_| r.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
        for _ in 0..1000 {
            let x = r.between(5, 9);
            assert!((5..=9).contains(&x));
        }
        assert_eq!(r.between(4, 4), 4);
        assert_eq!(r.uuid().get_version_num(), 4);
    }
}
