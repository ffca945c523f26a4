//! A Base-like load on the devnet: many ERC-8004 agents, each with a wallet of its own from the
//! moment it registers, a payment token busy with transfers between addresses that are not
//! agents, and payments into agents among them.

use crate::devnet::{Devnet, DevnetError, confirm};
use crate::{IdentityRegistry, Seeder};
use alloy::primitives::{Address, U256};
use alloy::providers::DynProvider;

/// Agents registered per transaction (about 150,000 gas each; keep the block gas limit above).
pub const AGENTS_PER_TRANSACTION: u64 = 2_000;

/// Registers `count` ERC-8004 agents with distinct wallets; returns the wallets.
pub async fn seed_wallet_agents(devnet: &Devnet, count: u64) -> Result<Vec<Address>, DevnetError> {
    let seeder = devnet.seeder();
    let mut wallets = Vec::with_capacity(count as usize);
    let mut left = count;
    while left > 0 {
        let batch = left.min(AGENTS_PER_TRANSACTION);
        let receipt = confirm(
            "seeding agents with wallets",
            seeder.seedWalletAgents(U256::from(batch)).send(),
        )
        .await?;
        wallets.extend(
            receipt
                .inner
                .logs()
                .iter()
                .filter_map(|log| log.log_decode::<IdentityRegistry::Registered>().ok())
                .map(|registered| registered.inner.data.owner),
        );
        left -= batch;
    }
    Ok(wallets)
}

/// Gives the Seeder's clients the USDC they pay agents with.
pub async fn fund_payers(devnet: &Devnet) -> Result<(), DevnetError> {
    confirm(
        "funding seeder clients",
        devnet
            .seeder()
            .fundClients(U256::from(1_000_000_000_000u64))
            .send(),
    )
    .await
    .map(|_| ())
}

/// One block's worth of traffic: `transfers` USDC transfers to addresses no agent is bound to
/// (`salt` picks them) and one payment into each of `payees`, sent without waiting for the
/// block that holds them.
pub async fn send_block_traffic(
    seeder: &Seeder::SeederInstance<DynProvider>,
    transfers: u64,
    salt: u64,
    payees: &[Address],
) -> Result<(), DevnetError> {
    let sent = |what: &str, error: alloy::contract::Error| DevnetError::Send {
        what: what.to_string(),
        source: Box::new(error),
    };
    // Sent, not waited for: the block that holds them comes when it comes.
    let _pending = seeder
        .seedTraffic(U256::from(transfers), U256::from(1), U256::from(salt))
        .send()
        .await
        .map_err(|e| sent("sending background transfers", e))?;
    if !payees.is_empty() {
        let _pending = seeder
            .seedPayments(payees.to_vec(), U256::from(1), U256::from(10_000))
            .send()
            .await
            .map_err(|e| sent("sending payments into agents", e))?;
    }
    Ok(())
}
