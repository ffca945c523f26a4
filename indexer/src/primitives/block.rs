//! A block's place on the chain: what the reorg window keeps and the RPC layer reads.

use alloy::primitives::B256;

/// A block kept in the reorg window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRef {
    /// Block number.
    pub number: u64,
    /// Its hash.
    pub hash: B256,
    /// Its parent's hash.
    pub parent_hash: B256,
    /// Its timestamp.
    pub timestamp: u64,
}
