//! x402 settlement pairing: in one `transferWithAuthorization`, EIP-3009's
//! `AuthorizationUsed(from, nonce)` comes immediately before `Transfer(from, to, value)` from the
//! same token contract in the same transaction. That pair is one settlement.

use agentindex_contracts::TestUSDC as T;
use alloy::primitives::{Address, B256};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;
use std::collections::HashMap;

/// Where a log sits: (block number, log index).
pub type LogPosition = (u64, u64);

/// An `AuthorizationUsed` as pairing needs it: token, transaction, authorizer, nonce.
struct Used {
    token: Address,
    tx: Option<B256>,
    authorizer: Address,
    nonce: B256,
}

/// The EIP-3009 nonce of every `Transfer` in `logs` that settles an authorisation, by position.
///
/// `logs` may hold any mix of token logs; only `AuthorizationUsed` followed directly by a
/// `Transfer` of the same token, transaction and payer pairs up.
pub fn settlements(logs: &[Log]) -> HashMap<LogPosition, B256> {
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
