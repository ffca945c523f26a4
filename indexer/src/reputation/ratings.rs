//! Agent-contract ratings aggregated like feedback: a payer's latest score stands (the contract
//! keeps `ratingOf[rater]`), so the aggregate is the count of raters and the average of their
//! latest scores (0 to 100), plus how many ratings were given in all.

use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One `Rated` event as indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rating {
    /// Who rated (a payer of the agent).
    pub rater: Address,
    /// 0 to 100.
    pub score: u8,
    /// (block, log index).
    pub position: (u64, u64),
}

/// What an agent contract's ratings say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RatingAggregate {
    /// Ratings given, re-ratings included.
    pub ratings: u64,
    /// Distinct raters.
    pub raters: u64,
    /// Average of each rater's latest score.
    pub average: Option<f64>,
}

/// Aggregates the ratings of one agent contract.
pub fn aggregate(ratings: &[Rating]) -> RatingAggregate {
    let mut latest: BTreeMap<Address, Rating> = BTreeMap::new();
    for rating in ratings {
        let entry = latest.entry(rating.rater).or_insert(*rating);
        if rating.position > entry.position {
            *entry = *rating;
        }
    }
    let raters = latest.len() as u64;
    RatingAggregate {
        ratings: ratings.len() as u64,
        raters,
        average: (raters > 0)
            .then(|| latest.values().map(|r| f64::from(r.score)).sum::<f64>() / raters as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raters_latest_score_stands() {
        let rate = |rater: u8, score: u8, block: u64| Rating {
            rater: Address::with_last_byte(rater),
            score,
            position: (block, 0),
        };
        let got = aggregate(&[rate(1, 10, 1), rate(2, 80, 2), rate(1, 90, 3)]);
        assert_eq!((got.ratings, got.raters), (3, 2));
        assert_eq!(got.average, Some(85.0));
        assert_eq!(aggregate(&[]).average, None);
    }
}
