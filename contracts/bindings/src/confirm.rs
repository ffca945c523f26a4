//! Sending one devnet transaction and waiting for its successful receipt, so every step names
//! the transaction that failed and a revert is an error, never a receipt to check.

use crate::error::DevnetError;
use alloy::network::Ethereum;
use alloy::providers::PendingTransactionBuilder;
use alloy::rpc::types::TransactionReceipt;
use std::future::Future;

/// Sends a transaction and waits for its successful receipt; `what` names it in errors, as in
/// `confirm("minting USDC", usdc.mint(to, amount).send())`.
pub async fn confirm<F>(what: &str, send: F) -> Result<TransactionReceipt, DevnetError>
where
    F: Future<Output = Result<PendingTransactionBuilder<Ethereum>, alloy::contract::Error>>,
{
    let pending = send.await.map_err(|source| DevnetError::Send {
        what: what.to_string(),
        source: Box::new(source),
    })?;
    let receipt = pending
        .get_receipt()
        .await
        .map_err(|source| DevnetError::Receipt {
            what: what.to_string(),
            source: Box::new(source),
        })?;
    if !receipt.status() {
        return Err(DevnetError::Reverted {
            what: what.to_string(),
            tx: receipt.transaction_hash.to_string(),
        });
    }
    Ok(receipt)
}
