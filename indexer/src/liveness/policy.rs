//! The limits and schedule probes run under, from the `[liveness]` settings and the address
//! rules of `[documents]` (not its openings to private addresses).

use crate::config::{Config, HostCredential, LivenessConfig};
use crate::documents::FetchPolicy;
use std::time::Duration;

/// The limits and schedule of probing.
#[derive(Debug, Clone)]
pub struct LivenessPolicy {
    /// Requests: the documents' address rules, one host's minimum interval, the User-Agent.
    pub fetch: FetchPolicy,
    /// Requests per minute over every host together.
    pub requests_per_minute: u32,
    /// Time one probe may take, all its requests together.
    pub probe_timeout: Duration,
    /// Hosts probed at once (each host one request at a time).
    pub concurrency: usize,
    /// A healthy endpoint is probed again after this long (give or take a tenth).
    pub healthy_every: Duration,
    /// A failing endpoint is probed again after this long, doubled per failure in a row.
    pub first_retry: Duration,
    /// The longest wait between two probes of a failing endpoint.
    pub max_backoff: Duration,
    /// Raw outcomes are kept this long, then rolled up per day.
    pub retention: Duration,
    /// Headers sent to one host's extended-card calls.
    pub credentials: Vec<HostCredential>,
}

impl LivenessPolicy {
    /// The policy of `config`: `[liveness]` with `[documents]`' address rules.
    pub fn of(config: &Config) -> Self {
        // The documents' address rules, but not their openings: probes POST and DELETE to URLs
        // strangers chose, so private ranges open only by `[liveness]`'s own key, and the
        // private hosts listed for document fetches (a local gateway) stay closed.
        let documents = FetchPolicy {
            allow_private: config.liveness.allow_private_addresses,
            private_hosts: Vec::new(),
            ..FetchPolicy::from(&config.documents)
        };
        Self::from_parts(&config.liveness, documents)
    }

    /// The policy of `liveness` over the address rules of `documents`.
    pub fn from_parts(liveness: &LivenessConfig, documents: FetchPolicy) -> Self {
        let timeout = Duration::from_secs(liveness.timeout_secs.max(1));
        let fetch = FetchPolicy {
            max_bytes: 256 << 10,
            total_timeout: timeout,
            // A host that drops the connection attempt holds a slot this long at most.
            connect_timeout: timeout.min(Duration::from_secs(3)),
            deadline: timeout,
            retries: 0,
            per_host_min_interval: Some(Duration::from_millis(
                liveness.min_interval_per_host_ms.max(1),
            )),
            concurrency: liveness.concurrency.max(1),
            user_agent: Some(user_agent(&liveness.contact_url)),
            // A few requests in a row to one host within one probe (MCP's handshake, a card's
            // extended card); the worker spaces probes of one host by the interval.
            per_host_burst: 8,
            ..documents
        };
        Self {
            fetch,
            requests_per_minute: liveness.requests_per_minute.max(1),
            probe_timeout: timeout,
            concurrency: liveness.concurrency.max(1),
            healthy_every: Duration::from_secs(liveness.healthy_secs.max(1)),
            first_retry: Duration::from_secs(liveness.retry_secs.max(1)),
            max_backoff: Duration::from_secs(liveness.max_backoff_secs.max(1)),
            retention: Duration::from_secs(liveness.retention_days.max(1) * 86_400),
            credentials: liveness.credentials.clone(),
        }
    }
}

/// The User-Agent probes send: agentindex, its version, and where to learn about it or ask it
/// to stop.
pub fn user_agent(contact_url: &str) -> String {
    format!(
        "agentindex-prober/{} (+{contact_url})",
        env!("CARGO_PKG_VERSION")
    )
}
