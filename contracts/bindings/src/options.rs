//! How a devnet is started: the options `Devnet::start_with` takes, read by the anvil launcher
//! and the deployment alike.

use alloy::primitives::U256;

/// How the local chain is started.
#[derive(Debug, Clone)]
pub struct DevnetOptions {
    /// Chain id anvil reports.
    pub chain_id: u64,
    /// Seconds between blocks; `None` mines one block per transaction.
    pub block_time: Option<u64>,
    /// Funded accounts anvil creates (each with 10,000 ETH).
    pub accounts: usize,
    /// Block gas limit; large Seeder workloads want more than the default.
    pub gas_limit: Option<u64>,
    /// Test USDC minted to every account (in 6-decimal units).
    pub usdc_per_account: U256,
    /// Distinct client contracts the Seeder drives.
    pub seeder_clients: u64,
    /// Keep only this many recent states in memory (anvil's `--prune-history`): large
    /// workloads otherwise hold a copy of the state for every block. Historical `eth_call`s
    /// then fail; logs, blocks and receipts are all kept.
    pub prune_history: Option<u64>,
    /// Timestamp of the genesis block (anvil's `--timestamp`); later blocks count on from it,
    /// so a chain can start in the past and have its history spread over days.
    pub genesis_timestamp: Option<u64>,
}

impl Default for DevnetOptions {
    fn default() -> Self {
        Self {
            chain_id: 31337,
            block_time: None,
            accounts: 10,
            gas_limit: None,
            usdc_per_account: U256::from(1_000_000_000_000u64),
            seeder_clients: 16,
            prune_history: None,
            genesis_timestamp: None,
        }
    }
}
