//! Uptime and latency over a window of outcomes: the share of probes answered, and the median
//! latency of those answered.

/// One probe's result as the rollups read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Unix seconds.
    pub at: i64,
    /// Whether it answered (up or degraded).
    pub answered: bool,
    /// Milliseconds, when it answered.
    pub latency_ms: Option<i64>,
}

/// The share of `samples` at or after `since` that answered, or `None` when there are none.
pub fn uptime(samples: &[Sample], since: i64) -> Option<f64> {
    let within: Vec<&Sample> = samples.iter().filter(|s| s.at >= since).collect();
    if within.is_empty() {
        return None;
    }
    let answered = within.iter().filter(|s| s.answered).count();
    Some(answered as f64 / within.len() as f64)
}

/// The median latency of the answered `samples` at or after `since` (the lower of the two
/// middle ones for an even count), or `None` when none answered.
pub fn median_latency(samples: &[Sample], since: i64) -> Option<i64> {
    let mut latencies: Vec<i64> = samples
        .iter()
        .filter(|s| s.at >= since && s.answered)
        .filter_map(|s| s.latency_ms)
        .collect();
    median(&mut latencies)
}

/// The median of `values` (the lower middle one for an even count), or `None` when empty.
pub fn median(values: &mut [i64]) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(values[(values.len() - 1) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: i64, answered: bool, latency_ms: i64) -> Sample {
        Sample {
            at,
            answered,
            latency_ms: answered.then_some(latency_ms),
        }
    }

    #[test]
    fn uptime_counts_only_the_window() {
        let samples = [
            sample(10, false, 0),
            sample(20, true, 5),
            sample(30, true, 7),
            sample(40, false, 0),
        ];
        assert_eq!(uptime(&samples, 0), Some(0.5));
        assert_eq!(uptime(&samples, 20), Some(2.0 / 3.0));
        assert_eq!(uptime(&samples, 50), None);
    }

    #[test]
    fn median_latency_reads_answered_probes_only() {
        let samples = [
            sample(1, true, 30),
            sample(2, false, 0),
            sample(3, true, 10),
            sample(4, true, 20),
            sample(5, true, 1_000),
        ];
        assert_eq!(median_latency(&samples, 0), Some(20));
        assert_eq!(median_latency(&samples, 4), Some(20));
        assert_eq!(median_latency(&samples, 6), None);
        assert_eq!(median(&mut [3, 1]), Some(1));
    }
}
