//! Scanning an event signature over a block range, whatever emitted it, in as many answers as
//! the provider's result cap needs: a range refused for holding too many results is split (where
//! the provider suggests, else in halves) and its halves asked for at once.

use crate::rpc::{ChainRpc, RpcError, RpcErrorKind};
use agentindex_contracts::AgentCard as Agent;
use agentindex_contracts::TestUSDC as Token;
use alloy::primitives::{Address, B256};
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use std::future::Future;
use std::pin::Pin;

/// What a scan learnt about the provider.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ScanStats {
    /// Answers received.
    pub(super) requests: u64,
    /// The most logs one answer held.
    pub(super) largest_answer: u64,
    /// The fewest logs of a range the provider refused to return at once.
    pub(super) refused_answer: Option<u64>,
}

/// Every event an agent contract emits: a scan for these, kept where the emitter is a known
/// agent, finds what address chunks of the agents would.
pub(super) fn agent_topics() -> Vec<B256> {
    Agent::AgentCardEvents::SELECTORS
        .iter()
        .map(|selector| B256::from(*selector))
        .collect()
}

/// The scan of agent-contract events across the chain.
pub(super) fn agent_filter() -> Filter {
    Filter::new().event_signature(agent_topics())
}

/// The scan of payment tokens' transfers and EIP-3009 authorisations and the Permit2 proxies'
/// settlement events (what pairs up into x402 settlements), all in one.
pub(super) fn token_filter(tokens: &[Address], proxies: &[Address]) -> Filter {
    let mut topics = vec![
        Token::Transfer::SIGNATURE_HASH,
        Token::AuthorizationUsed::SIGNATURE_HASH,
    ];
    topics.extend(crate::sources::payments::proxy_topics());
    let mut addresses = tokens.to_vec();
    addresses.extend_from_slice(proxies);
    Filter::new().address(addresses).event_signature(topics)
}

/// The logs `filter` matches in `[from, to]`; `None` when even one block holds more than the
/// provider returns at once (the caller fetches that family by address instead).
pub(super) async fn scan(
    rpc: &ChainRpc,
    filter: &Filter,
    from: u64,
    to: u64,
    stats: &mut ScanStats,
) -> Result<Option<Vec<Log>>, RpcError> {
    let mut parts = Vec::new();
    let outcome = scan_part(rpc, filter, from, to, &mut parts).await;
    for part in &parts {
        stats.requests += 1;
        match part {
            Part::Answered(count) => stats.largest_answer = stats.largest_answer.max(*count),
            Part::Refused(count) => {
                stats.refused_answer = Some(stats.refused_answer.map_or(*count, |r| r.min(*count)))
            }
        }
    }
    outcome
}

/// One request of a scan: answered with this many logs, or refused for a range later found to
/// hold this many.
enum Part {
    Answered(u64),
    Refused(u64),
}

type PartFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Vec<Log>>, RpcError>> + Send + 'a>>;

fn scan_part<'a>(
    rpc: &'a ChainRpc,
    filter: &'a Filter,
    from: u64,
    to: u64,
    parts: &'a mut Vec<Part>,
) -> PartFuture<'a> {
    Box::pin(async move {
        let ranged = filter.clone().from_block(from).to_block(to);
        let suggested = match rpc.logs(&ranged).await {
            Ok(logs) => {
                parts.push(Part::Answered(logs.len() as u64));
                return Ok(Some(logs));
            }
            Err(RpcError {
                kind: RpcErrorKind::TooManyResults { suggested, .. },
                ..
            }) if from < to => suggested,
            Err(RpcError {
                kind: RpcErrorKind::TooManyResults { .. },
                ..
            }) => return Ok(None),
            Err(error) => return Err(error),
        };
        let middle = suggested
            .filter(|(start, end)| *start == from && *end < to)
            .map_or(from + (to - from) / 2, |(_, end)| end);
        let (mut left_parts, mut right_parts) = (Vec::new(), Vec::new());
        let (left, right) = futures::try_join!(
            scan_part(rpc, filter, from, middle, &mut left_parts),
            scan_part(rpc, filter, middle + 1, to, &mut right_parts),
        )?;
        parts.append(&mut left_parts);
        parts.append(&mut right_parts);
        let (Some(mut left), Some(right)) = (left, right) else {
            return Ok(None);
        };
        parts.push(Part::Refused((left.len() + right.len()) as u64));
        left.extend(right);
        Ok(Some(left))
    })
}
