//! Every default value of the configuration, in one place.

use std::net::SocketAddr;

pub(crate) fn database_url() -> String {
    "sqlite://data/agentindex.db".into()
}
pub(crate) fn listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}
pub(crate) fn requests_per_minute_per_client() -> u32 {
    1_200
}
pub(crate) fn client_burst() -> u32 {
    100
}
pub(crate) fn server_ms_per_second_per_client() -> u32 {
    // A fifth of one core: a client asking only expensive questions holds no more.
    200
}
pub(crate) fn server_ms_burst_per_client() -> u32 {
    1_000
}
pub(crate) fn low_priority_after_ms_per_client() -> u32 {
    // A quarter of the burst: a few hundred lookups by id within a second or two.
    250
}
pub(crate) fn low_priority_above_complexity() -> u32 {
    // Twice the costliest page the explorer and SDKs ask for (100 agents with a few
    // fields each), a fifth of the highest complexity accepted.
    1_000
}
pub(crate) fn low_priority_cores() -> f64 {
    // Half of one core: on two, a past block's feed at 100,000 agents in about twice its
    // unrationed time, and half as many slow answers beside it (BENCHMARKS.md).
    0.5
}
pub(crate) fn cors_origins() -> Vec<String> {
    vec!["*".into()]
}
pub(crate) const fn allow_http() -> bool {
    // An index should cover what is on chain; plain-http documents are used and flagged.
    true
}
pub(crate) fn requests_per_host_per_second() -> u32 {
    5
}
pub(crate) fn fetch_concurrency() -> usize {
    32
}
pub(crate) fn refresh_secs() -> u64 {
    6 * 3600
}
pub(crate) fn retry_secs() -> u64 {
    60
}
pub(crate) fn fetch_deadline_secs() -> u64 {
    // Above the slowest honest gateway answer seen, well below the 45 s a drip held a
    // `card check` before the deadline existed.
    20
}
pub(crate) fn ipfs_gateways() -> Vec<String> {
    vec!["https://ipfs.io/ipfs/".into()]
}
pub(crate) const fn requests_per_second() -> u32 {
    25
}
pub(crate) const fn request_timeout_secs() -> u64 {
    20
}
pub(crate) const fn max_block_range() -> u64 {
    2_000
}
pub(crate) const fn reorg_window() -> u64 {
    128
}
pub(crate) const fn funding_lookback_blocks() -> u64 {
    2_000
}
pub(crate) const fn poll_interval_ms() -> u64 {
    2_000
}
pub(crate) const fn payment_address_chunk() -> usize {
    200
}
pub(crate) const fn rpc_concurrency() -> usize {
    4
}
pub(crate) const fn ranges_in_flight() -> usize {
    1
}
