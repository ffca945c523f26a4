//! When an endpoint is probed next: a new one soon, a healthy one every `healthy_every` give
//! or take a tenth, a failing one after `first_retry` doubled per failure in a row up to
//! `max_backoff` (a day by default), a blocked one after `max_backoff`. The jitter spreads
//! endpoints that became due together, so hosts are not probed in waves.

use super::{LivenessPolicy, Status};

/// Seconds, at most, before a newly declared endpoint is probed.
pub const NEW_WITHIN_SECS: i64 = 60;

/// When an endpoint whose probe at `now` found `status`, after `failures` failures in a row
/// (this one included), is due again. `jitter` is uniform in `[0, 1)`.
pub fn next_probe(
    now: i64,
    status: Status,
    failures: i64,
    policy: &LivenessPolicy,
    jitter: f64,
) -> i64 {
    let max = policy.max_backoff.as_secs() as i64;
    let wait = match status {
        Status::Up => policy.healthy_every.as_secs() as i64,
        Status::Blocked => max,
        Status::Degraded | Status::Down => {
            let doublings = (failures - 1).clamp(0, 30) as u32;
            (policy.first_retry.as_secs() as i64)
                .saturating_mul(1_i64 << doublings)
                .min(max)
        }
    };
    // A tenth either way, never past the cap nor under a second.
    let spread = (wait as f64 * 0.1 * (2.0 * jitter - 1.0)) as i64;
    now + (wait + spread).clamp(1, max.max(1))
}

/// When a newly declared endpoint is first probed: within a minute of `now`.
pub fn first_probe(now: i64, jitter: f64) -> i64 {
    now + (jitter * NEW_WITHIN_SECS as f64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LivenessConfig;
    use crate::documents::FetchPolicy;

    fn policy() -> LivenessPolicy {
        LivenessPolicy::from_parts(&LivenessConfig::default(), FetchPolicy::default())
    }

    #[test]
    fn healthy_endpoints_wait_their_interval_give_or_take_a_tenth() {
        let policy = policy();
        let every = policy.healthy_every.as_secs() as i64;
        for jitter in [0.0, 0.25, 0.5, 0.999] {
            let next = next_probe(1_000, Status::Up, 0, &policy, jitter) - 1_000;
            assert!(
                next >= every - every / 10 && next <= every + every / 10,
                "{next}"
            );
        }
        assert_ne!(
            next_probe(0, Status::Up, 0, &policy, 0.0),
            next_probe(0, Status::Up, 0, &policy, 0.99)
        );
    }

    #[test]
    fn failures_back_off_doubling_up_to_a_day() {
        let policy = policy();
        let first = policy.first_retry.as_secs() as i64;
        let waits: Vec<i64> = (1..=20)
            .map(|failures| next_probe(0, Status::Down, failures, &policy, 0.5))
            .collect();
        assert_eq!(waits[0], first);
        assert_eq!(waits[1], 2 * first);
        assert_eq!(waits[2], 4 * first);
        assert!(waits.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*waits.last().unwrap(), 86_400);
        for jitter in [0.0, 0.999] {
            assert!(next_probe(0, Status::Down, 40, &policy, jitter) <= 86_400);
        }
    }

    #[test]
    fn blocked_endpoints_wait_the_longest_and_new_ones_the_least() {
        let policy = policy();
        assert!(next_probe(0, Status::Blocked, 1, &policy, 0.5) >= 86_400 - 8_640);
        for jitter in [0.0, 0.5, 0.999] {
            let first = first_probe(100, jitter);
            assert!((100..100 + NEW_WITHIN_SECS).contains(&first));
        }
    }
}
