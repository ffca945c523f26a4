//! Finding the block a contract was deployed in when the configuration does not say: the first
//! block after which the address holds code, by binary search over `eth_getCode` (about
//! log2(head) requests, once, before the first range; an archive node answers them).

use crate::rpc::{ChainRpc, RpcError};
use alloy::primitives::Address;

/// The first block whose state holds code at `address`; `None` when even the head's does not
/// (the contract is not deployed on this chain).
pub async fn deployment_block(rpc: &ChainRpc, address: Address) -> Result<Option<u64>, RpcError> {
    let head = rpc.head().await?;
    if rpc.code_at(address, head).await?.is_empty() {
        return Ok(None);
    }
    // Invariant: no code after `without` (or it is before block 0), code after `with`.
    let (mut without, mut with): (Option<u64>, u64) = (None, head);
    loop {
        let low = without.map_or(0, |b| b + 1);
        if low >= with {
            return Ok(Some(with));
        }
        let middle = low + (with - low) / 2;
        if rpc.code_at(address, middle).await?.is_empty() {
            without = Some(middle);
        } else {
            with = middle;
        }
    }
}
