//! x402 settlement pairing. In one `transferWithAuthorization`, EIP-3009's
//! `AuthorizationUsed(from, nonce)` comes immediately before `Transfer(from, to, value)` from the
//! same token contract in the same transaction: that pair is one `exact` settlement. Through an
//! x402 Permit2 proxy, the proxy's argument-less `Settled()` or `SettledWithPermit()` follows the
//! payer's `Transfer` in the same transaction: the nearest `Transfer` before it is that
//! settlement (`exact` or `upto` by the proxy). The payer is the `Transfer`'s sender either way.

use agentindex_contracts::TestUSDC as T;
use agentindex_contracts::X402Permit2Proxy as Proxy;
use alloy::primitives::{Address, B256};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;
use std::collections::HashMap;

/// How x402 settled a token `Transfer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// EIP-3009 `transferWithAuthorization`, with the authorisation's nonce.
    Eip3009(B256),
    /// The Permit2 proxy of the `exact` scheme.
    Permit2Exact,
    /// The Permit2 proxy of the `upto` scheme.
    Permit2Upto,
}

impl Settlement {
    /// The scheme as stored (`payments.scheme`).
    pub fn scheme(self) -> &'static str {
        match self {
            Settlement::Eip3009(_) => "eip3009",
            Settlement::Permit2Exact => "permit2_exact",
            Settlement::Permit2Upto => "permit2_upto",
        }
    }

    /// The EIP-3009 nonce, for an EIP-3009 settlement.
    pub fn nonce(self) -> Option<B256> {
        match self {
            Settlement::Eip3009(nonce) => Some(nonce),
            _ => None,
        }
    }
}

/// The topic0s of the Permit2 proxies' settlement events.
pub fn proxy_topics() -> [B256; 2] {
    [
        Proxy::Settled::SIGNATURE_HASH,
        Proxy::SettledWithPermit::SIGNATURE_HASH,
    ]
}

/// Where a log sits: (block number, log index).
pub type LogPosition = (u64, u64);

/// An `AuthorizationUsed` as pairing needs it: token, transaction, authorizer, nonce.
struct Used {
    token: Address,
    tx: Option<B256>,
    authorizer: Address,
    nonce: B256,
}

/// How each `Transfer` in `logs` that x402 settled was settled, by position.
///
/// `logs` may hold any mix of token and proxy logs: `AuthorizationUsed` followed directly by a
/// `Transfer` of the same token, transaction and payer pairs up, and so does a settlement event
/// of one of `proxies` (address, whether it is the `upto` one) with the nearest `Transfer` before
/// it in its transaction that nothing else paired.
pub fn settlements(logs: &[Log], proxies: &[(Address, bool)]) -> HashMap<LogPosition, Settlement> {
    let mut paired: HashMap<LogPosition, Settlement> = eip3009(logs)
        .into_iter()
        .map(|(position, nonce)| (position, Settlement::Eip3009(nonce)))
        .collect();
    let mut transfers: HashMap<B256, Vec<LogPosition>> = HashMap::new();
    for log in logs {
        if log.topic0() != Some(&T::Transfer::SIGNATURE_HASH) {
            continue;
        }
        if let (Some(tx), Some(block), Some(index)) =
            (log.transaction_hash, log.block_number, log.log_index)
        {
            transfers.entry(tx).or_default().push((block, index));
        }
    }
    let mut proxy_events: Vec<(LogPosition, B256, bool)> = logs
        .iter()
        .filter(|log| log.topic0().is_some_and(|t| proxy_topics().contains(t)))
        .filter_map(|log| {
            let upto = proxies
                .iter()
                .find(|(address, _)| *address == log.inner.address)?
                .1;
            Some((
                (log.block_number?, log.log_index?),
                log.transaction_hash?,
                upto,
            ))
        })
        .collect();
    proxy_events.sort();
    for (at, tx, upto) in proxy_events {
        let Some(candidates) = transfers.get(&tx) else {
            continue;
        };
        let nearest = candidates
            .iter()
            .filter(|position| **position < at && !paired.contains_key(*position))
            .max();
        if let Some(position) = nearest {
            let scheme = if upto {
                Settlement::Permit2Upto
            } else {
                Settlement::Permit2Exact
            };
            paired.insert(*position, scheme);
        }
    }
    paired
}

/// The EIP-3009 nonce of every `Transfer` in `logs` that settles an authorisation, by position.
fn eip3009(logs: &[Log]) -> HashMap<LogPosition, B256> {
    let mut used: HashMap<LogPosition, Used> = HashMap::new();
    for log in logs {
        if log.topic0() != Some(&T::AuthorizationUsed::SIGNATURE_HASH) {
            continue;
        }
        let (Some(block), Some(index)) = (log.block_number, log.log_index) else {
            continue;
        };
        if let Ok(event) = T::AuthorizationUsed::decode_log(&log.inner) {
            used.insert(
                (block, index),
                Used {
                    token: log.inner.address,
                    tx: log.transaction_hash,
                    authorizer: event.authorizer,
                    nonce: event.nonce,
                },
            );
        }
    }
    let mut paired = HashMap::new();
    for log in logs {
        if log.topic0() != Some(&T::Transfer::SIGNATURE_HASH) {
            continue;
        }
        let (Some(block), Some(index)) = (log.block_number, log.log_index) else {
            continue;
        };
        let Some(previous) = index.checked_sub(1) else {
            continue;
        };
        let Some(Used {
            token,
            tx,
            authorizer,
            nonce,
        }) = used.get(&(block, previous))
        else {
            continue;
        };
        let Ok(transfer) = T::Transfer::decode_log(&log.inner) else {
            continue;
        };
        if *token == log.inner.address
            && *tx == log.transaction_hash
            && *authorizer == transfer.from
        {
            paired.insert((block, index), *nonce);
        }
    }
    paired
}
