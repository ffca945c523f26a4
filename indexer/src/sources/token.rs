//! Payment token logs: ERC-20 `Transfer` and EIP-3009 `AuthorizationUsed`.

use super::{DecodeError, Decoded, event};
use agentindex_contracts::TestUSDC as T;
use alloy::primitives::B256;
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded = match topic0 {
        t if t == T::Transfer::SIGNATURE_HASH => {
            event::<T::Transfer>(log).map(|e| Decoded::TokenTransfer {
                from: e.from,
                to: e.to,
                value: e.value,
            })
        }
        t if t == T::AuthorizationUsed::SIGNATURE_HASH => {
            event::<T::AuthorizationUsed>(log).map(|e| Decoded::AuthorizationUsed {
                authorizer: e.authorizer,
                nonce: e.nonce,
            })
        }
        _ => return None,
    };
    Some(decoded)
}
