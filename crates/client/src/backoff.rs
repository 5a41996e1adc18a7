//! How long to wait before the next attempt: exponential backoff with jitter, and how a
//! server's `Retry-After` is weighed against it.

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

/// The wait before the next attempt after `failures` consecutive retryable failures (≥ 1), the
/// last of which asked for `retry_after_ms` (`Retry-After`, already a duration) or nothing.
///
/// A `Retry-After` of at least the policy's floor, `initial_backoff_ms`, is honoured as given:
/// the server knows when its lease ends (idem's own server sends the remaining lock time in
/// whole seconds, never 0). A smaller one (`Retry-After: 0` from a proxy, a date already past)
/// is not trusted: the policy's own backoff decides, as if none had been given, so a server
/// answering every attempt `409, Retry-After: 0` is retried on the backoff schedule (never
/// below the floor, jittered, growing to `max_backoff_ms`), not in a tight loop.
pub fn retry_delay_ms(
    policy: &RetryPolicy,
    failures: u32,
    retry_after_ms: Option<u64>,
    rng: &mut dyn RngCore,
) -> u64 {
    match retry_after_ms {
        Some(ms) if ms >= policy.initial_backoff_ms => ms,
        _ => backoff_delay_ms(policy, failures, rng),
    }
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
    fn given_draws_give_pinned_delays() {
        // Each delay pinned (not compared with a second run of the same code): failures = n
        // draws seq[n % 5]; base = 500 · 2^(n-1) capped at 5000; delay = base/2 + draw % (base/2 + 1),
        // never under 500.
        let policy = RetryPolicy::default();
        let seq = vec![7, 123_456_789, 42, 9_999_999_999, 3];
        let delays: Vec<u64> = (1..=5)
            .map(|n| backoff_delay_ms(&policy, n, &mut Fixed(seq.clone(), n as usize)))
            .collect();
        // 250 + 123456789 % 251 = 430, floored to 500; 500 + 42; 1000 + 9999999999 % 1001;
        // 2000 + 3; 2500 + 7.
        assert_eq!(delays, [500, 542, 1990, 2003, 2507]);
    }

    #[test]
    fn retry_after_at_or_above_the_floor_is_honoured_exactly() {
        let policy = RetryPolicy::default();
        let mut rng = Fixed(vec![u64::MAX], 0);
        for (failures, ms) in [(1, 500), (1, 1000), (4, 1000), (9, 30_000), (1, u64::MAX)] {
            assert_eq!(retry_delay_ms(&policy, failures, Some(ms), &mut rng), ms);
        }
    }

    #[test]
    fn a_tiny_retry_after_is_floored_at_the_backoff() {
        let policy = RetryPolicy::default();
        for tiny in [None, Some(0), Some(1), Some(499)] {
            // The lowest draws give the schedule's floor; none is under 500 ms.
            let mut low = Fixed(vec![0], 0);
            let lows: Vec<u64> = (1..=6)
                .map(|n| retry_delay_ms(&policy, n, tiny, &mut low))
                .collect();
            assert_eq!(lows, [500, 500, 1000, 2000, 2500, 2500], "{tiny:?}");
            // And the draws spread them (jitter): the highest reach the full backoff.
            let mut high = Fixed(vec![250, 500, 1000, 2000, 2500, 2500], 0);
            let highs: Vec<u64> = (1..=6)
                .map(|n| retry_delay_ms(&policy, n, tiny, &mut high))
                .collect();
            assert_eq!(highs, [500, 1000, 2000, 4000, 5000, 5000], "{tiny:?}");
        }
        // The floor follows the policy.
        let slow = RetryPolicy {
            initial_backoff_ms: 2000,
            jitter: false,
            ..RetryPolicy::default()
        };
        assert_eq!(
            retry_delay_ms(&slow, 1, Some(1000), &mut Fixed(vec![0], 0)),
            2000
        );
        assert_eq!(
            retry_delay_ms(&slow, 1, Some(2000), &mut Fixed(vec![0], 0)),
            2000
        );
        assert_eq!(
            retry_delay_ms(&slow, 1, Some(3000), &mut Fixed(vec![0], 0)),
            3000
        );
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
