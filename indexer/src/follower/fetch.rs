//! Fetching every relevant log of a block range, exactly once whatever the range boundaries.
//!
//! 1. The configured contracts by address, and at the same time each family the
//!    [`Plan`](super::strategy::Plan) names: agent contracts' logs by address chunks or by a scan
//!    of their event signatures, token transfers into payment addresses (`topics[2]` = a chunk:
//!    payments) and out of them (`topics[1]`: outflows) by chunks, or by one scan of the token's
//!    `Transfer` and `AuthorizationUsed` logs, kept locally where a payment address is on a side.
//! 2. Agents and payment addresses discovered inside the range (factory children, enrolments,
//!    agentWallet changes) are taken from the scans, or fetched by address from their discovery
//!    block to the range's end, until nothing new turns up.
//! 3. x402 settlements are paired from the token scan, or from the tokens' and proxies' logs
//!    over the blocks that held payments (see [`super::pairing`]).
//!
//! Logs of an agent contract count from the block it became known; what is stored is decided
//! by position on the chain alone, so any cut of the ranges, and either way of fetching, yields
//! the same rows.
//!
//! A range is fetched in two steps: [`fetch_raw`] (this file) sends the requests that need
//! nothing from earlier ranges (the configured contracts, the agent contracts known when it is
//! read, the scans), then `resolve.rs` does the rest against what is watched by then.

use super::by_address::logs_of;
use super::pairing;
use super::scan::{self, ScanStats};
use super::sources::SourceMap;
use super::strategy::{Observed, Plan, Way};
use crate::rpc::{ChainRpc, RpcError};
use crate::store::WatchedSets;
use alloy::primitives::Address;
use alloy::rpc::types::Log;
use std::collections::HashSet;

/// What one range is fetched with. A range is fetched in two steps, [`fetch_raw`] then
/// `resolve.rs`, so that ranges ahead can be read while earlier ones are resolved.
pub(super) struct RangeRequest<'a> {
    pub(super) rpc: &'a ChainRpc,
    pub(super) sources: &'a SourceMap,
    pub(super) watched: &'a WatchedSets,
    pub(super) payment_chunk: usize,
    /// How far back payers' funding is looked for, and what was read already.
    pub(super) funding: &'a super::funding::FundingLookback,
    pub(super) plan: Plan,
}

/// The first requests of a range: the configured contracts' logs, the agent contracts known
/// when it was read (when fetched by address), and the scans' pools. Ranges ahead are read this
/// far while earlier ones are still being resolved; agent contracts discovered in between are
/// fetched when the range is resolved.
#[derive(Debug)]
pub(super) struct RawRange {
    /// Logs of the configured contracts, and of the agent contracts in `agents_read`.
    pub(super) contract_logs: Vec<Log>,
    /// Agent contracts whose logs `contract_logs` holds (fetched by address).
    pub(super) agents_read: HashSet<Address>,
    /// The agent scan's logs, when agents are scanned and the provider answered.
    pub(super) agent_pool: Option<Vec<Log>>,
    /// The token scan's logs, when payments are scanned and the provider answered.
    pub(super) token_pool: Option<Vec<Log>>,
    /// What the requests showed of the provider and the chain, for the cost model.
    pub(super) observed: Observed,
}

/// The first step of fetching `[from, to]`: contracts by address (known agents too when they are
/// fetched by address) and the scans the plan names.
pub(super) async fn fetch_raw(
    request: &RangeRequest<'_>,
    from: u64,
    to: u64,
) -> Result<RawRange, RpcError> {
    let RangeRequest {
        rpc,
        sources,
        watched,
        plan,
        ..
    } = *request;
    let mut observed = Observed {
        blocks: to - from + 1,
        ..Observed::default()
    };
    let mut addresses = sources.contracts_active_by(to);
    let agents_read: HashSet<Address> = match plan.agents {
        Way::Addresses => known_agents(watched, to).into_iter().collect(),
        Way::Scan => HashSet::new(),
    };
    addresses.extend(&agents_read);
    let (mut agent_stats, mut token_stats) = (ScanStats::default(), ScanStats::default());
    let scan_tokens = plan.payments == Way::Scan && !sources.tokens.is_empty();
    let (contract_logs, agent_pool, token_pool) = futures::try_join!(
        logs_of(rpc, &addresses, from, to),
        async {
            match plan.agents {
                Way::Scan => {
                    scan::scan(rpc, &scan::agent_filter(), from, to, &mut agent_stats).await
                }
                Way::Addresses => Ok(None),
            }
        },
        async {
            match scan_tokens {
                true => {
                    let filter =
                        scan::token_filter(&sources.tokens, &pairing::proxy_addresses(sources));
                    scan::scan(rpc, &filter, from, to, &mut token_stats).await
                }
                false => Ok(None),
            }
        },
    )?;
    for stats in [&agent_stats, &token_stats] {
        observed.largest_answer = observed.largest_answer.max(stats.largest_answer);
        if let Some(refused) = stats.refused_answer {
            observed.refused_answer =
                Some(observed.refused_answer.map_or(refused, |r| r.min(refused)));
        }
    }
    observed.agent_scan_logs = agent_pool.as_ref().map(|pool| pool.len() as u64);
    observed.token_scan_logs = token_pool.as_ref().map(|pool| pool.len() as u64);
    Ok(RawRange {
        contract_logs,
        agents_read,
        agent_pool,
        token_pool,
        observed,
    })
}

/// Agent contracts known by block `to`.
pub(super) fn known_agents(watched: &WatchedSets, to: u64) -> Vec<Address> {
    watched
        .agents
        .iter()
        .filter(|(_, f)| **f <= to)
        .map(|(a, _)| *a)
        .collect()
}
