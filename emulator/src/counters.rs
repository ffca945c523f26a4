//! What the emulator saw and did: requests and compute units per method, and every refusal and
//! fault it answered with, readable while it runs (in process, or as JSON at `GET /stats`).

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one emulator.
#[derive(Debug, Default)]
pub struct Counters {
    /// HTTP requests received (a JSON-RPC batch is one).
    pub http_requests: AtomicU64,
    /// Answered with 429 for going over the rate limit.
    pub rate_limited: AtomicU64,
    /// `eth_getLogs` refused for its block range.
    pub range_refusals: AtomicU64,
    /// `eth_getLogs` refused for its number of results.
    pub result_refusals: AtomicU64,
    /// Random faults injected (5xx, internal errors, stalls, dropped answers).
    pub faults: AtomicU64,
    per_method: Mutex<BTreeMap<String, u64>>,
}

impl Counters {
    /// Counts one call of `method` that reached the node.
    pub(crate) fn served(&self, method: &str) {
        let mut map = self.per_method.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry(method.to_string()).or_default() += 1;
    }

    /// Calls that reached the node, by method.
    pub fn requests(&self) -> BTreeMap<String, u64> {
        self.per_method
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Calls of `method` that reached the node.
    pub fn requests_of(&self, method: &str) -> u64 {
        self.requests().get(method).copied().unwrap_or(0)
    }

    /// Calls of every method that reached the node.
    pub fn total_requests(&self) -> u64 {
        self.requests().values().sum()
    }

    /// Compute units the served calls cost (see [`crate::costs`]).
    pub fn compute_units(&self) -> u64 {
        self.requests()
            .iter()
            .map(|(method, count)| crate::costs::compute_units(method) * count)
            .sum()
    }

    /// Compute units of the served calls, by method.
    pub fn compute_units_by_method(&self) -> BTreeMap<String, u64> {
        self.requests()
            .into_iter()
            .map(|(method, count)| {
                let units = crate::costs::compute_units(&method) * count;
                (method, units)
            })
            .collect()
    }

    /// Everything, as JSON.
    pub fn to_json(&self) -> Value {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "http_requests": load(&self.http_requests),
            "rate_limited": load(&self.rate_limited),
            "range_refusals": load(&self.range_refusals),
            "result_refusals": load(&self.result_refusals),
            "faults": load(&self.faults),
            "requests": self.requests(),
            "total_requests": self.total_requests(),
            "compute_units": self.compute_units(),
            "compute_units_by_method": self.compute_units_by_method(),
        })
    }
}
