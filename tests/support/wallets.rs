//! Wallets that pay the way x402 payers do: fresh keys never seen on the chain, and USDC moved
//! by an EIP-3009 authorisation that someone else (a facilitator) submits, so the payer needs no
//! gas.

use agentindex_contracts::{Devnet, demo, signing};
use alloy::primitives::{Address, U256, keccak256};
use alloy::signers::local::PrivateKeySigner;

/// A wallet never seen on the chain, the same in every run for the same `label` and `i`.
pub(crate) fn fresh_wallet(label: &str, i: usize) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&keccak256(format!("{label} {i}"))).unwrap()
}

/// Moves `value` USDC from `from` to `to` with an EIP-3009 authorisation `submitter` sends: an
/// x402 payment, or a gasless transfer between wallets.
pub(crate) async fn pay_signed(
    devnet: &Devnet,
    from: &PrivateKeySigner,
    submitter: Address,
    to: Address,
    value: u64,
) {
    let nonce = signing::nonce(&format!("{} pays {to} {value}", from.address()));
    demo::pay_signed_by(devnet, from, submitter, to, U256::from(value), nonce)
        .await
        .unwrap();
}
