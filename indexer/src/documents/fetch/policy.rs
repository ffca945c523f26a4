//! The limits a document fetch runs under, with their defaults and how the `[documents]`
//! settings set them.

use crate::config::{DocumentsConfig, Nat64Prefix, PrivateHost};
use std::time::Duration;

/// The limits a fetch runs under.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// Opens loopback and private ranges (never link-local or metadata addresses).
    pub allow_private: bool,
    /// Whether plain `http://` may be fetched.
    pub allow_http: bool,
    /// Largest body accepted, in bytes.
    pub max_bytes: usize,
    /// Time to establish a connection.
    pub connect_timeout: Duration,
    /// Time for one attempt at one URL, redirects and body included.
    pub total_timeout: Duration,
    /// Time for everything done for one document: every attempt at every URL, backoff and a
    /// card's key sets included (`documents.fetch_deadline_secs`).
    pub deadline: Duration,
    /// Hosts fetched from even on loopback or private addresses.
    pub private_hosts: Vec<PrivateHost>,
    /// The NAT64 prefixes of the operator's network (`documents.nat64_prefixes`): addresses
    /// under them are judged as the IPv4 address they carry.
    pub nat64_prefixes: Vec<Nat64Prefix>,
    /// Redirects followed at most.
    pub max_redirects: usize,
    /// Requests per second to one host.
    pub per_host_per_second: u32,
    /// When set, the least time between two requests to one host instead of
    /// `per_host_per_second` (the prober's politeness, slower than a request a second).
    pub per_host_min_interval: Option<Duration>,
    /// Requests to one host that may go at once before its rate applies.
    pub per_host_burst: u32,
    /// The `User-Agent` sent; `agentindex/VERSION` when unset.
    pub user_agent: Option<String>,
    /// Fetches in flight at once, over all hosts.
    pub concurrency: usize,
    /// Attempts after the first for transient failures.
    pub retries: u32,
}

impl From<&DocumentsConfig> for FetchPolicy {
    fn from(config: &DocumentsConfig) -> Self {
        Self {
            allow_private: config.allow_private_addresses,
            allow_http: config.allow_http,
            per_host_per_second: config.requests_per_host_per_second,
            concurrency: config.concurrency,
            deadline: Duration::from_secs(config.fetch_deadline_secs.max(1)),
            private_hosts: config.private_hosts(),
            nat64_prefixes: config.nat64_prefixes.clone(),
            ..Self::default()
        }
    }
}

impl Default for FetchPolicy {
    fn default() -> Self {
        Self {
            allow_private: false,
            allow_http: false,
            max_bytes: 1 << 20,
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(15),
            deadline: Duration::from_secs(20),
            private_hosts: Vec::new(),
            nat64_prefixes: Vec::new(),
            max_redirects: 5,
            per_host_per_second: 5,
            per_host_min_interval: None,
            per_host_burst: 1,
            user_agent: None,
            concurrency: 32,
            retries: 2,
        }
    }
}
