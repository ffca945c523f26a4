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

use super::discovery::{Discovery, consider_payee, discoveries, insert, keep_log};
use super::pairing;
use super::scan::{self, ScanStats};
use super::sources::SourceMap;
use super::strategy::{ADDRESS_CHUNK, Observed, Plan, Way};
use crate::rpc::{ChainRpc, RpcError};
use crate::sources::payments::Settlement;
use crate::store::WatchedSets;
use agentindex_contracts::TestUSDC as Token;
use alloy::primitives::{Address, B256};
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use futures::future::try_join_all;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Everything fetched for one range.
#[derive(Debug, Default)]
pub(super) struct FetchedRange {
    /// Logs of configured contracts and agent contracts, in chain order, deduplicated.
    pub logs: Vec<Log>,
    /// Token `Transfer`s into payment addresses, in chain order.
    pub payments: Vec<Log>,
    /// How x402 settled each payment it settled, by (block, log index).
    pub settlements: HashMap<(u64, u64), Settlement>,
    /// Agent contracts first seen in this range, with their first block.
    pub new_agents: BTreeMap<Address, u64>,
    /// Payment addresses first bound in this range, with their first block.
    pub new_payment_addresses: BTreeMap<Address, u64>,
}

impl FetchedRange {
    /// Logs held, payments included.
    pub(super) fn len(&self) -> usize {
        self.logs.len() + self.payments.len()
    }

    /// Keeps the longest run of whole blocks from the start that holds at most `max_logs` logs
    /// (at least the first block, however many it holds) and returns its last block; what lies
    /// beyond is dropped, to be fetched again with the next range.
    pub(super) fn keep_at_most(&mut self, max_logs: usize) -> Option<u64> {
        let mut per_block: BTreeMap<u64, usize> = BTreeMap::new();
        for block in self
            .logs
            .iter()
            .chain(&self.payments)
            .filter_map(|l| l.block_number)
        {
            *per_block.entry(block).or_default() += 1;
        }
        let mut kept = 0;
        let mut last = None;
        for (block, count) in per_block {
            if last.is_some() && kept + count > max_logs {
                break;
            }
            kept += count;
            last = Some(block);
        }
        let last = last?;
        let within = |log: &Log| log.block_number.is_some_and(|b| b <= last);
        self.logs.retain(within);
        self.payments.retain(within);
        self.settlements.retain(|(block, _), _| *block <= last);
        self.new_agents.retain(|_, block| *block <= last);
        self.new_payment_addresses.retain(|_, block| *block <= last);
        Some(last)
    }
}

/// What one range is fetched with. A range is fetched in two steps, [`fetch_raw`] then
/// [`resolve`], so that ranges ahead can be read while earlier ones are resolved.
pub(super) struct RangeRequest<'a> {
    pub(super) rpc: &'a ChainRpc,
    pub(super) sources: &'a SourceMap,
    pub(super) watched: &'a WatchedSets,
    pub(super) payment_chunk: usize,
    pub(super) plan: Plan,
}

/// The first requests of a range: the configured contracts' logs, the agent contracts known
/// when it was read (when fetched by address), and the scans' pools. Ranges ahead are read this
/// far while earlier ones are still being resolved; agent contracts discovered in between are
/// fetched when the range is resolved.
#[derive(Debug)]
pub(super) struct RawRange {
    contract_logs: Vec<Log>,
    /// Agent contracts whose logs `contract_logs` holds (fetched by address).
    agents_read: HashSet<Address>,
    agent_pool: Option<Vec<Log>>,
    token_pool: Option<Vec<Log>>,
    observed: Observed,
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
fn known_agents(watched: &WatchedSets, to: u64) -> Vec<Address> {
    watched
        .agents
        .iter()
        .filter(|(_, f)| **f <= to)
        .map(|(a, _)| *a)
        .collect()
}

/// The second step: filters the raw logs by what is watched now, fetches
/// what the plan takes by address, follows discoveries and pairs settlements.
pub(super) async fn resolve(
    request: &RangeRequest<'_>,
    from: u64,
    to: u64,
    raw: RawRange,
) -> Result<(FetchedRange, Observed), RpcError> {
    let RangeRequest {
        rpc,
        sources,
        watched,
        payment_chunk,
        plan,
    } = *request;
    let RawRange {
        mut contract_logs,
        agents_read,
        agent_pool,
        token_pool,
        observed,
    } = raw;
    if plan.agents == Way::Addresses {
        // Agent contracts that earlier ranges discovered after this one was read.
        let unread: Vec<Address> = known_agents(watched, to)
            .into_iter()
            .filter(|agent| !agents_read.contains(agent))
            .collect();
        contract_logs.extend(logs_of(rpc, &unread, from, to).await?);
    }
    let mut out = FetchedRange::default();
    let mut by_position: BTreeMap<(u64, u64), Log> = BTreeMap::new();
    let mut payments: BTreeMap<(u64, u64), Log> = BTreeMap::new();
    let payees: Vec<Address> = watched
        .payment_addresses
        .iter()
        .filter(|(_, f)| **f <= to)
        .map(|(a, _)| *a)
        .collect();

    for log in contract_logs {
        keep_log(&mut by_position, log, watched, &out.new_agents, sources);
    }
    match &agent_pool {
        Some(pool) => {
            // Configured contracts that share an event with agents (an `OwnershipTransferred`)
            // come from their own request, from their own start block, not from the scan.
            for log in pool
                .iter()
                .filter(|l| sources.roles(&l.inner.address).is_none())
            {
                keep_log(
                    &mut by_position,
                    log.clone(),
                    watched,
                    &out.new_agents,
                    sources,
                );
            }
        }
        // A scan the provider could not answer even block by block: by address after all.
        None if plan.agents == Way::Scan => {
            for log in logs_of(rpc, &known_agents(watched, to), from, to).await? {
                keep_log(&mut by_position, log, watched, &out.new_agents, sources);
            }
        }
        None => {}
    }
    match &token_pool {
        Some(pool) => {
            let payees: HashSet<Address> = payees.iter().copied().collect();
            for log in pool {
                let involves = |direction: Direction| {
                    transfer_side(log, direction).is_some_and(|side| payees.contains(&side))
                };
                if involves(Direction::Into) || involves(Direction::OutOf) {
                    insert(&mut payments, log.clone());
                }
            }
        }
        None => {
            for log in
                both_directions(rpc, &sources.tokens, &payees, payment_chunk, from, to).await?
            {
                insert(&mut payments, log);
            }
        }
    }

    // Discoveries inside the range, taken from the scans or fetched from their block on, until
    // none are new.
    let mut scanned = 0;
    loop {
        let found = discoveries(by_position.values(), sources);
        let mut agents: BTreeMap<Address, u64> = BTreeMap::new();
        let mut payees: BTreeMap<Address, u64> = BTreeMap::new();
        for (address, block, kind) in found {
            match kind {
                Discovery::Agent => {
                    if watched.agents.get(&address).is_none_or(|f| *f > block)
                        && out.new_agents.get(&address).is_none_or(|f| *f > block)
                    {
                        agents.insert(address, block);
                    }
                    consider_payee(&mut payees, watched, &out, address, block);
                }
                Discovery::Payee => consider_payee(&mut payees, watched, &out, address, block),
            }
        }
        if agents.is_empty() && payees.is_empty() {
            break;
        }
        scanned += 1;
        // One request for all new agents and one for all new payees, from the earliest
        // discovery on; logs from before an agent's own discovery are dropped by keep_log.
        if let Some(first) = agents.values().min().copied() {
            out.new_agents.extend(agents.iter().map(|(a, b)| (*a, *b)));
            let found = match &agent_pool {
                Some(pool) => pool
                    .iter()
                    .filter(|log| agents.contains_key(&log.inner.address))
                    .cloned()
                    .collect(),
                None => {
                    let addresses: Vec<Address> = agents.keys().copied().collect();
                    logs_of(rpc, &addresses, first, to).await?
                }
            };
            for log in found {
                keep_log(&mut by_position, log, watched, &out.new_agents, sources);
            }
        }
        if let Some(first) = payees.values().min().copied() {
            out.new_payment_addresses
                .extend(payees.iter().map(|(a, b)| (*a, *b)));
            let counts = |log: &Log| {
                let block = log.block_number.unwrap_or(0);
                [Direction::Into, Direction::OutOf]
                    .into_iter()
                    .any(|direction| {
                        transfer_side(log, direction)
                            .filter(|side| payees.contains_key(side))
                            .and_then(|side| {
                                [
                                    watched.payment_addresses.get(&side),
                                    out.new_payment_addresses.get(&side),
                                ]
                                .into_iter()
                                .flatten()
                                .min()
                                .copied()
                            })
                            .is_some_and(|bound_from| block >= bound_from)
                    })
            };
            let found: Vec<Log> = match &token_pool {
                Some(pool) => pool.iter().filter(|log| counts(log)).cloned().collect(),
                None => {
                    let addresses: Vec<Address> = payees.keys().copied().collect();
                    both_directions(rpc, &sources.tokens, &addresses, payment_chunk, first, to)
                        .await?
                        .into_iter()
                        .filter(|log| counts(log))
                        .collect()
                }
            };
            for log in found {
                insert(&mut payments, log);
            }
        }
        if scanned > 8 {
            break;
        }
    }

    out.settlements = pairing::settlements(rpc, sources, token_pool.as_deref(), &payments).await?;
    out.logs = by_position.into_values().collect();
    out.payments = payments.into_values().collect();
    Ok((out, observed))
}

/// The address on `direction`'s side of a token `Transfer`; `None` for other logs.
fn transfer_side(log: &Log, direction: Direction) -> Option<Address> {
    let topics = log.inner.data.topics();
    if topics.first() != Some(&Token::Transfer::SIGNATURE_HASH) {
        return None;
    }
    topics
        .get(direction.topic())
        .map(|word| Address::from_word(*word))
}

async fn logs_of(
    rpc: &ChainRpc,
    addresses: &[Address],
    from: u64,
    to: u64,
) -> Result<Vec<Log>, RpcError> {
    let requests = addresses.chunks(ADDRESS_CHUNK).map(|chunk| {
        let filter = Filter::new()
            .address(chunk.to_vec())
            .from_block(from)
            .to_block(to);
        async move { rpc.logs(&filter).await }
    });
    Ok(try_join_all(requests)
        .await?
        .into_iter()
        .flatten()
        .collect())
}

/// Which side of a token Transfer a payment address is on.
#[derive(Debug, Clone, Copy)]
enum Direction {
    /// Paid to it (`to`, topic 2): a payment.
    Into,
    /// Paid by it (`from`, topic 1): an outflow.
    OutOf,
}

impl Direction {
    fn topic(self) -> usize {
        match self {
            Direction::Into => 2,
            Direction::OutOf => 1,
        }
    }
}

/// Transfers of `tokens` into and out of `addresses`, chunk by chunk, all at once.
async fn both_directions(
    rpc: &ChainRpc,
    tokens: &[Address],
    addresses: &[Address],
    chunk: usize,
    from: u64,
    to: u64,
) -> Result<Vec<Log>, RpcError> {
    if tokens.is_empty() {
        return Ok(Vec::new());
    }
    let requests = addresses.chunks(chunk.max(1)).flat_map(|group| {
        let words: Vec<B256> = group.iter().map(|a| a.into_word()).collect();
        [Direction::Into, Direction::OutOf].map(|direction| {
            let filter = Filter::new()
                .address(tokens.to_vec())
                .event_signature(Token::Transfer::SIGNATURE_HASH)
                .from_block(from)
                .to_block(to);
            let filter = match direction {
                Direction::Into => filter.topic2(words.clone()),
                Direction::OutOf => filter.topic1(words.clone()),
            };
            async move { rpc.logs(&filter).await }
        })
    });
    Ok(try_join_all(requests)
        .await?
        .into_iter()
        .flatten()
        .collect())
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
