//! The error every devnet step fails with: starting anvil, deploying, sending and confirming
//! transactions, reading the chain.

use crate::anvil::AnvilError;

/// Why the devnet could not be started or a transaction on it failed.
#[derive(Debug, thiserror::Error)]
pub enum DevnetError {
    /// anvil did not start.
    #[error("starting anvil ({path}): {source}")]
    Anvil {
        /// The anvil binary tried.
        path: String,
        /// What went wrong.
        source: AnvilError,
    },
    /// A contract could not be deployed.
    #[error("deploying {contract}: {source}")]
    Deploy {
        /// Which contract.
        contract: &'static str,
        /// The RPC or revert error.
        source: Box<alloy::contract::Error>,
    },
    /// A transaction could not be sent.
    #[error("{what}: {source}")]
    Send {
        /// What the transaction was for.
        what: String,
        /// The RPC or revert error.
        source: Box<alloy::contract::Error>,
    },
    /// A read from anvil failed.
    #[error("reading {what}: {source}")]
    Rpc {
        /// What was read.
        what: String,
        /// The RPC error.
        source: Box<alloy::transports::TransportError>,
    },
    /// A sent transaction never produced a receipt.
    #[error("{what}: waiting for the receipt: {source}")]
    Receipt {
        /// What the transaction was for.
        what: String,
        /// The RPC error.
        source: Box<alloy::providers::PendingTransactionError>,
    },
    /// A mined transaction lacks the event it should have emitted.
    #[error("transaction {tx} emitted no {event}")]
    MissingEvent {
        /// The event looked for.
        event: String,
        /// The transaction hash.
        tx: String,
    },
    /// The transaction was mined but reverted.
    #[error("{what}: transaction {tx} reverted")]
    Reverted {
        /// What the transaction was for.
        what: String,
        /// The transaction hash.
        tx: String,
    },
}
