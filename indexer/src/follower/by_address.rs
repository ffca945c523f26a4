//! Logs asked for by address, the way [`Way::Addresses`](super::strategy::Way) fetches them:
//! contracts' logs by chunks of the address list, and token transfers into and out of payment
//! addresses by chunks of the topic that names them. [`Direction`] tells the two sides apart,
//! for a token scan's logs too.

use super::strategy::ADDRESS_CHUNK;
use crate::rpc::{ChainRpc, RpcError};
use agentindex_contracts::TestUSDC as Token;
use alloy::primitives::{Address, B256};
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use futures::future::try_join_all;

/// Logs of `addresses` over `[from, to]`, a request per [`ADDRESS_CHUNK`] addresses, all at once.
pub(super) async fn logs_of(
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
pub(super) enum Direction {
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

/// The address on `direction`'s side of a token `Transfer`; `None` for other logs.
pub(super) fn transfer_side(log: &Log, direction: Direction) -> Option<Address> {
    let topics = log.inner.data.topics();
    if topics.first() != Some(&Token::Transfer::SIGNATURE_HASH) {
        return None;
    }
    topics
        .get(direction.topic())
        .map(|word| Address::from_word(*word))
}

/// Transfers of `tokens` into and out of `addresses`, chunk by chunk, all at once.
pub(super) async fn both_directions(
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
