//! ERC-8004 feedback aggregates of one agent: count and unique clients of unrevoked feedback,
//! the average value at 18 decimals, the same per tag, and how many were revoked. Pure functions
//! of the indexed feedback.

use super::summary::{FeedbackEntry, MAX_DECIMALS};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Count and average of a set of feedback values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Feedback counted.
    pub count: u64,
    /// Average value in whole units (value / 10^decimals), when any were counted.
    pub average: Option<f64>,
}

/// What an agent's feedback says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeedbackAggregate {
    /// Unrevoked feedback: count and average.
    pub overall: Tally,
    /// Distinct clients with unrevoked feedback.
    pub unique_clients: u64,
    /// Feedback revoked.
    pub revoked: u64,
    /// Per tag (either tag position), for non-empty tags.
    pub by_tag: BTreeMap<String, Tally>,
    /// Responses appended to the agent's feedback (by the agent or anyone else).
    pub responses: u64,
}

/// Aggregates `feedback` (all of one agent).
pub fn aggregate(feedback: &[FeedbackEntry]) -> FeedbackAggregate {
    let mut out = FeedbackAggregate::default();
    let mut clients = BTreeSet::new();
    let mut overall = Accumulator::default();
    let mut by_tag: BTreeMap<String, Accumulator> = BTreeMap::new();
    for entry in feedback {
        if entry.revoked {
            out.revoked += 1;
            continue;
        }
        if entry.decimals > MAX_DECIMALS {
            continue;
        }
        let value = entry.value as f64 / 10f64.powi(i32::from(entry.decimals));
        clients.insert(entry.client);
        overall.add(value);
        let tags: BTreeSet<&str> = [entry.tag1.as_str(), entry.tag2.as_str()]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect();
        for tag in tags {
            by_tag.entry(tag.to_string()).or_default().add(value);
        }
    }
    out.overall = overall.tally();
    out.unique_clients = clients.len() as u64;
    out.by_tag = by_tag.into_iter().map(|(t, a)| (t, a.tally())).collect();
    out
}

#[derive(Debug, Default)]
struct Accumulator {
    count: u64,
    sum: f64,
}

impl Accumulator {
    fn add(&mut self, value: f64) {
        self.count += 1;
        self.sum += value;
    }

    fn tally(&self) -> Tally {
        Tally {
            count: self.count,
            average: (self.count > 0).then(|| self.sum / self.count as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::Address;

    fn entry(client: u8, value: i128, decimals: u8, tag1: &str, revoked: bool) -> FeedbackEntry {
        FeedbackEntry {
            client: Address::with_last_byte(client),
            value,
            decimals,
            tag1: tag1.into(),
            tag2: String::new(),
            revoked,
            position: (1, 0),
            timestamp: 12,
            proof: None,
        }
    }

    #[test]
    fn revoked_feedback_is_counted_apart_and_decimals_are_normalised() {
        let feedback = [
            entry(1, 80, 0, "speed", false),
            entry(1, 9_500, 2, "quality", false),
            entry(2, 7_000_000_000_000_000_000, 17, "speed", false),
            entry(3, 5, 0, "speed", true),
        ];
        let got = aggregate(&feedback);
        assert_eq!(got.overall.count, 3);
        assert_eq!(got.unique_clients, 2);
        assert_eq!(got.revoked, 1);
        assert!((got.overall.average.unwrap() - (80.0 + 95.0 + 70.0) / 3.0).abs() < 1e-9);
        assert_eq!(got.by_tag["speed"].count, 2);
        assert!((got.by_tag["speed"].average.unwrap() - 75.0).abs() < 1e-9);
        assert_eq!(got.by_tag["quality"].count, 1);
        assert_eq!(aggregate(&[]).overall.average, None);
    }
}
