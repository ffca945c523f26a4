//! ERC-8004 validation aggregates of one agent: requests, those answered, the average of each
//! request's latest response (0 to 100) and the share of latest responses that pass. A validator
//! may answer a request several times; only its latest answer stands, the earlier ones stay in the
//! history.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A latest response at or above this passes.
pub const PASS_AT: u8 = 50;

/// One response as indexed, with its chain position for "latest wins".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationResponse {
    /// The request answered.
    pub request_hash: String,
    /// 0 (fail) to 100 (pass).
    pub response: u8,
    /// (block, log index).
    pub position: (u64, u64),
}

/// What an agent's validations say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidationAggregate {
    /// Requests made for the agent.
    pub requests: u64,
    /// Requests with at least one response.
    pub answered: u64,
    /// Responses in all, earlier answers included.
    pub responses: u64,
    /// Average of each answered request's latest response.
    pub average: Option<f64>,
    /// Share of answered requests whose latest response passes.
    pub pass_rate: Option<f64>,
}

/// Aggregates the validations of one agent from its request hashes and every response.
pub fn aggregate(requests: &[String], responses: &[ValidationResponse]) -> ValidationAggregate {
    let asked: BTreeSet<&str> = requests.iter().map(String::as_str).collect();
    let mut latest: BTreeMap<&str, &ValidationResponse> = BTreeMap::new();
    for response in responses {
        let entry = latest
            .entry(response.request_hash.as_str())
            .or_insert(response);
        if response.position > entry.position {
            *entry = response;
        }
    }
    let answered: Vec<&&ValidationResponse> = latest
        .iter()
        .filter(|(hash, _)| asked.contains(*hash))
        .map(|(_, r)| r)
        .collect();
    let count = answered.len() as f64;
    ValidationAggregate {
        requests: asked.len() as u64,
        answered: answered.len() as u64,
        responses: responses.len() as u64,
        average: (!answered.is_empty())
            .then(|| answered.iter().map(|r| f64::from(r.response)).sum::<f64>() / count),
        pass_rate: (!answered.is_empty())
            .then(|| answered.iter().filter(|r| r.response >= PASS_AT).count() as f64 / count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(hash: &str, value: u8, block: u64) -> ValidationResponse {
        ValidationResponse {
            request_hash: hash.into(),
            response: value,
            position: (block, 0),
        }
    }

    #[test]
    fn the_latest_response_per_request_stands() {
        let requests = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let responses = [
            response("a", 20, 5),
            response("a", 90, 9),
            response("b", 40, 7),
            response("b", 0, 3),
        ];
        let got = aggregate(&requests, &responses);
        assert_eq!((got.requests, got.answered, got.responses), (3, 2, 4));
        assert_eq!(got.average, Some(65.0), "latest of a is 90, of b is 40");
        assert_eq!(got.pass_rate, Some(0.5));
        assert_eq!(aggregate(&requests, &[]).average, None);
    }
}
