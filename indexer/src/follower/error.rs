//! Why a step of the follower failed, and whether trying again can help.

use super::AssembleError;
use crate::rpc::{RpcError, RpcErrorKind};
use crate::store::StoreError;

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum FollowerError {
    /// An RPC request failed after its retries.
    #[error("chain {chain}: {source}")]
    Rpc {
        /// Chain name.
        chain: String,
        /// The failure.
        source: RpcError,
    },
    /// The store failed.
    #[error("chain {chain}: {source}")]
    Store {
        /// Chain name.
        chain: String,
        /// The failure.
        source: StoreError,
    },
    /// A log could not be placed on the chain.
    #[error("chain {chain}: {source}")]
    Assemble {
        /// Chain name.
        chain: String,
        /// The failure.
        source: AssembleError,
    },
    /// The endpoint serves another chain.
    #[error(
        "chain {chain}: the RPC endpoint reports chain id {actual}, the config says {expected}"
    )]
    WrongChain {
        /// Chain name.
        chain: String,
        /// Configured id.
        expected: u64,
        /// Reported id.
        actual: u64,
    },
    /// A reorg replaced every block the window remembers.
    #[error(
        "chain {chain}: reorg deeper than the {window}-block window (no remembered block from {oldest} to {newest} is still canonical); set on_deep_reorg = \"rewind\" to re-index from the last finalized block"
    )]
    DeepReorg {
        /// Chain name.
        chain: String,
        /// Window size.
        window: u64,
        /// Oldest remembered block.
        oldest: u64,
        /// Newest remembered block.
        newest: u64,
    },
    /// `start_block = "deployment"`, and the Identity Registry has no code at the head.
    #[error(
        "chain {chain}: no contract at the Identity Registry's address {address} (is the registry deployed on this chain, and is the RPC endpoint this chain's?); set start_block or the registry's address"
    )]
    NotDeployed {
        /// Chain name.
        chain: String,
        /// The registry's configured address.
        address: alloy::primitives::Address,
    },
    /// A Cardano provider's call failed.
    #[error("network {chain}: {source}")]
    Cardano {
        /// The network's name.
        chain: String,
        /// The classified failure.
        source: crate::cardano::source::SourceError,
    },
    /// Even a one-block range is refused.
    #[error("chain {chain}: the provider refuses even a single block at {block}: {source}")]
    RangeFloor {
        /// Chain name.
        chain: String,
        /// The block.
        block: u64,
        /// The refusal.
        source: RpcError,
    },
}

impl FollowerError {
    /// Whether retrying the step cannot help.
    pub fn is_fatal(&self) -> bool {
        match self {
            FollowerError::WrongChain { .. }
            | FollowerError::DeepReorg { .. }
            | FollowerError::NotDeployed { .. } => true,
            // A provider that refuses even one block may lift its cap (a plan upgrade, a
            // failover endpoint); the follower keeps trying and says so.
            FollowerError::RangeFloor { .. } => false,
            FollowerError::Store { source, .. } => !matches!(source, StoreError::Query { .. }),
            FollowerError::Rpc { source, .. } => {
                matches!(source.kind, RpcErrorKind::Unsupported(_))
            }
            FollowerError::Assemble { .. } => false,
            FollowerError::Cardano { source, .. } => !source.is_transient(),
        }
    }
}
