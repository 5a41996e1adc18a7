//! Exponential backoff with jitter.

use rand_core::RngCore;

use crate::policy::RetryPolicy;

/// The delay before the next attempt after `failures` consecutive retryable failures (≥ 1).
///
/// The base delay is `initial_backoff_ms · 2^(failures-1)`, capped at `max_backoff_ms`. With
/// jitter it is drawn uniformly from `[base/2, base]` (Stripe's SDKs do the same) and never below
/// `initial_backoff_ms`; the generator is injected so tests and the simulator are deterministic.
pub fn backoff_delay_ms(policy: &RetryPolicy, failures: u32, rng: &mut dyn RngCore) -> u64 {
    let exponent = failures.saturating_sub(1).min(63);
    let base = policy
        .initial_backoff_ms
        .saturating_mul(1u64.checked_shl(exponent).unwrap_or(u64::MAX))
        .min(policy.max_backoff_ms);
    if !policy.jitter || base < 2 {
        return base;
    }
    let half = base / 2;
    // Uniform in [half, base]; the modulo bias over a u64 draw is negligible at these sizes.
    let spread = base - half + 1;
    let delay = half + rng.next_u64() % spread;
    delay.max(policy.initial_backoff_ms.min(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generator returning a fixed sequence, so schedules are exact.
    struct Fixed(Vec<u64>, usize);

    impl RngCore for Fixed {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            let v = self.0[self.1 % self.0.len()];
            self.1 += 1;
            v
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            for b in dst {
                *b = self.next_u64() as u8;
            }
        }
    }

    #[test]
    fn schedule_without_jitter_doubles_to_the_cap() {
        let policy = RetryPolicy {
            jitter: false,
            ..RetryPolicy::default()
        };
        let mut rng = Fixed(vec![0], 0);
        let delays: Vec<u64> = (1..=7)
            .map(|n| backoff_delay_ms(&policy, n, &mut rng))
            .collect();
        assert_eq!(delays, [500, 1000, 2000, 4000, 5000, 5000, 5000]);
    }

    #[test]
    fn jitter_stays_within_half_and_full_and_above_initial() {
        let policy = RetryPolicy::default();
        // Lowest draw gives base/2 (but never under 500); highest gives base.
        let mut low = Fixed(vec![0], 0);
        let lows: Vec<u64> = (1..=6)
            .map(|n| backoff_delay_ms(&policy, n, &mut low))
            .collect();
        assert_eq!(lows, [500, 500, 1000, 2000, 2500, 2500]);
        let mut high = Fixed(vec![u64::MAX], 0);
        let highs: Vec<u64> = (1..=6)
            .map(|n| backoff_delay_ms(&policy, n, &mut high))
            .collect();
        // u64::MAX % (base - base/2 + 1) for base 500: 18446744073709551615 % 251
        let expected: Vec<u64> = [500u64, 1000, 2000, 4000, 5000, 5000]
            .iter()
            .map(|&b| (b / 2 + u64::MAX % (b - b / 2 + 1)).max(500))
            .collect();
        assert_eq!(highs, expected);
        for (l, h) in lows.iter().zip(&highs) {
            assert!(l <= h);
        }
    }

    #[test]
    fn same_draws_give_the_same_schedule() {
        let policy = RetryPolicy::default();
        let seq = vec![7, 123_456_789, 42, 9_999_999_999, 3];
        let a: Vec<u64> = (1..=5)
            .map(|n| backoff_delay_ms(&policy, n, &mut Fixed(seq.clone(), n as usize)))
            .collect();
        let b: Vec<u64> = (1..=5)
            .map(|n| backoff_delay_ms(&policy, n, &mut Fixed(seq.clone(), n as usize)))
            .collect();
        assert_eq!(a, b);
        // failures = 2 draws seq[2] = 42: base 1000, so 500 + 42 % 501.
        assert_eq!(a[1], 542);
    }

    #[test]
    fn huge_failure_counts_do_not_overflow() {
        let policy = RetryPolicy {
            jitter: false,
            ..RetryPolicy::default()
        };
        assert_eq!(
            backoff_delay_ms(&policy, u32::MAX, &mut Fixed(vec![0], 0)),
            5000
        );
    }
}
