//! Pairing a range's payments with the x402 settlements that made them: EIP-3009
//! `AuthorizationUsed` logs of the tokens and the Permit2 proxies' `Settled()` /
//! `SettledWithPermit()` logs, taken from the token scan when there is one, else read in one
//! request over the blocks that held payments.

use super::sources::SourceMap;
use crate::rpc::{ChainRpc, RpcError};
use crate::sources::payments::{self, Settlement};
use agentindex_contracts::TestUSDC as Token;
use alloy::primitives::Address;
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use std::collections::{BTreeMap, HashMap};

/// How x402 settled each of `payments` (token transfers by position) that it settled.
pub(super) async fn settlements(
    rpc: &ChainRpc,
    sources: &SourceMap,
    token_pool: Option<&[Log]>,
    payments: &BTreeMap<(u64, u64), Log>,
) -> Result<HashMap<(u64, u64), Settlement>, RpcError> {
    let (Some(first), Some(last)) = (payments.keys().next(), payments.keys().next_back()) else {
        return Ok(HashMap::new());
    };
    let mut topics = vec![Token::AuthorizationUsed::SIGNATURE_HASH];
    topics.extend(payments::proxy_topics());
    let mut pairing: Vec<Log> = match token_pool {
        Some(pool) => pool
            .iter()
            .filter(|log| log.topic0().is_some_and(|t| topics.contains(t)))
            .cloned()
            .collect(),
        None => {
            let mut addresses = sources.tokens.clone();
            addresses.extend(proxy_addresses(sources));
            let filter = Filter::new()
                .address(addresses)
                .event_signature(topics)
                .from_block(first.0)
                .to_block(last.0);
            rpc.logs(&filter).await?
        }
    };
    pairing.extend(payments.values().cloned());
    let mut paired = payments::settlements(&pairing, &sources.proxies);
    paired.retain(|position, _| payments.contains_key(position));
    Ok(paired)
}

/// The Permit2 proxies' addresses.
pub(super) fn proxy_addresses(sources: &SourceMap) -> Vec<Address> {
    sources
        .proxies
        .iter()
        .map(|(address, _)| *address)
        .collect()
}
