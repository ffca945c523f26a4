//! A local chain with every contract deployed.
//!
//! [`Devnet::start`] launches the pinned anvil on a free loopback port, deploys the contracts
//! (see [`crate::deploy`]), funds the accounts with test USDC and hands back typed handles. The
//! chain stops when the [`Devnet`] is dropped, or when this process dies however it dies (see
//! [`crate::tied`]). Tests, benchmarks and `agentindex dev` all stand on it, so they exercise the
//! same deployment.

use crate::anvil::{self, AnvilError, AnvilProcess};
use crate::deploy::{self, Deployment};
use crate::gas_headroom::GasWithHeadroom;
use crate::tools::Tool;
use crate::{
    AgentCard, AgentFactory, AgentRegistry, IdentityRegistry, LegacyEmitter, ReputationRegistry,
    Seeder, TestUSDC, ValidationRegistry,
};
use alloy::network::{Ethereum, EthereumWallet};
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, PendingTransactionBuilder, Provider, ProviderBuilder};
use alloy::rpc::types::{BlockNumberOrTag, TransactionReceipt};
use alloy::signers::local::PrivateKeySigner;
use std::future::Future;

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

/// A running anvil with the contracts deployed. Dropping it stops the chain.
pub struct Devnet {
    anvil: AnvilProcess,
    chain_id: u64,
    provider: DynProvider,
    signers: Vec<PrivateKeySigner>,
    deployment: Deployment,
}

impl Devnet {
    /// Starts anvil with the default options and deploys everything.
    pub async fn start() -> Result<Self, DevnetError> {
        Self::start_with(DevnetOptions::default()).await
    }

    /// Starts anvil with `options` and deploys everything.
    pub async fn start_with(options: DevnetOptions) -> Result<Self, DevnetError> {
        let path = Tool::Anvil.path();
        let anvil = anvil::start(&path, &options)
            .await
            .map_err(|source| DevnetError::Anvil {
                path: path.display().to_string(),
                source,
            })?;
        let signers = anvil.keys.clone();
        let mut wallet = EthereumWallet::from(signers[0].clone());
        for signer in &signers[1..] {
            wallet.register_signer(signer.clone());
        }
        let endpoint = format!("http://127.0.0.1:{}", anvil.port);
        // Nonces are read from the node each time: tests reorg the chain, which drops
        // transactions and would leave a cached nonce ahead of the account's real one.
        let url: alloy::transports::http::reqwest::Url =
            endpoint.parse().expect("a loopback URL parses");
        let block_gas_limit = ProviderBuilder::new()
            .connect_http(url.clone())
            .get_block_by_number(BlockNumberOrTag::Latest)
            .await
            .map_err(|source| DevnetError::Rpc {
                what: "the genesis block's gas limit".to_string(),
                source: Box::new(source),
            })?
            .map(|block| block.header.gas_limit)
            .unwrap_or(u64::MAX);
        let provider = ProviderBuilder::new()
            .disable_recommended_fillers()
            .filler(GasWithHeadroom::new(block_gas_limit))
            .with_simple_nonce_management()
            .fetch_chain_id()
            .wallet(wallet)
            .connect_http(url)
            .erased();

        let accounts: Vec<Address> = signers.iter().map(|s| s.address()).collect();
        let deployment = deploy::deploy_all(&provider, &accounts, &options).await?;
        Ok(Self {
            anvil,
            chain_id: options.chain_id,
            provider,
            signers,
            deployment,
        })
    }

    /// The HTTP JSON-RPC URL, on 127.0.0.1.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.anvil.port)
    }

    /// The folder where anvil writes the states of past blocks it no longer keeps in memory;
    /// removed with the devnet.
    pub fn past_states_folder(&self) -> &std::path::Path {
        self.anvil.past_states_folder()
    }

    /// The chain id anvil reports.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// A provider that signs for every funded account; the deployer (account 0) by default,
    /// any other account with `.from(address)`.
    pub fn provider(&self) -> &DynProvider {
        &self.provider
    }

    /// The funded accounts; account 0 deployed the contracts.
    pub fn accounts(&self) -> Vec<Address> {
        self.signers.iter().map(|s| s.address()).collect()
    }

    /// The private key signer of account `index`, for off-chain signatures (EIP-712, EIP-3009).
    pub fn signer(&self, index: usize) -> &PrivateKeySigner {
        &self.signers[index]
    }

    /// Addresses and deployment block of every contract.
    pub fn deployment(&self) -> &Deployment {
        &self.deployment
    }

    /// An agentindex `[[chains]]` entry named `name` that follows this chain through `rpc`,
    /// watching every deployed contract and paying in its USDC; `extra` is more keys of the
    /// entry (finality, poll interval, …), as TOML lines.
    pub fn chain_toml(&self, name: &str, rpc: &[String], extra: &str) -> String {
        let d = &self.deployment;
        let rpc: Vec<String> = rpc.iter().map(|u| format!("{u:?}")).collect();
        format!(
            r#"
[[chains]]
name = "{name}"
chain_id = {chain_id}
rpc = [{rpc}]
start_block = {start}
{extra}

[chains.erc8004]
identity = "{identity}"
reputation = "{reputation}"
validation = "{validation}"

[[chains.factories]]
address = "{factory}"

[[chains.registries]]
address = "{registry}"

[[chains.registries]]
address = "{curated}"

[[chains.payment_tokens]]
address = "{usdc}"
symbol = "USDC"
decimals = 6

[chains.x402]
permit2_exact_proxy = "{permit2_exact}"
permit2_upto_proxy = "{permit2_upto}"
batch_settlement = "{batch_settlement}"
"#,
            chain_id = self.chain_id(),
            rpc = rpc.join(", "),
            start = d.start_block,
            identity = d.identity,
            reputation = d.reputation,
            validation = d.validation,
            factory = d.factory,
            registry = d.registry,
            curated = d.curated_registry,
            usdc = d.usdc,
            permit2_exact = d.permit2_exact,
            permit2_upto = d.permit2_upto,
            batch_settlement = d.batch_settlement,
        )
    }

    /// The ERC-8004 Identity Registry.
    pub fn identity(&self) -> IdentityRegistry::IdentityRegistryInstance<DynProvider> {
        IdentityRegistry::new(self.deployment.identity, self.provider.clone())
    }

    /// The ERC-8004 Reputation Registry.
    pub fn reputation(&self) -> ReputationRegistry::ReputationRegistryInstance<DynProvider> {
        ReputationRegistry::new(self.deployment.reputation, self.provider.clone())
    }

    /// The ERC-8004 Validation Registry.
    pub fn validation(&self) -> ValidationRegistry::ValidationRegistryInstance<DynProvider> {
        ValidationRegistry::new(self.deployment.validation, self.provider.clone())
    }

    /// The agent factory.
    pub fn factory(&self) -> AgentFactory::AgentFactoryInstance<DynProvider> {
        AgentFactory::new(self.deployment.factory, self.provider.clone())
    }

    /// The permissionless agent registry.
    pub fn registry(&self) -> AgentRegistry::AgentRegistryInstance<DynProvider> {
        AgentRegistry::new(self.deployment.registry, self.provider.clone())
    }

    /// The curated agent registry; account 0 is its admin and first curator.
    pub fn curated_registry(&self) -> AgentRegistry::AgentRegistryInstance<DynProvider> {
        AgentRegistry::new(self.deployment.curated_registry, self.provider.clone())
    }

    /// The test USDC with EIP-3009.
    pub fn usdc(&self) -> TestUSDC::TestUSDCInstance<DynProvider> {
        TestUSDC::new(self.deployment.usdc, self.provider.clone())
    }

    /// The workload Seeder, holding test USDC for its clients.
    pub fn seeder(&self) -> Seeder::SeederInstance<DynProvider> {
        Seeder::new(self.deployment.seeder, self.provider.clone())
    }

    /// The emitter of legacy ERC-8004 event shapes.
    pub fn legacy(&self) -> LegacyEmitter::LegacyEmitterInstance<DynProvider> {
        LegacyEmitter::new(self.deployment.legacy, self.provider.clone())
    }

    /// An agent contract at `address`.
    pub fn agent(&self, address: Address) -> AgentCard::AgentCardInstance<DynProvider> {
        AgentCard::new(address, self.provider.clone())
    }

    /// The timestamp of the latest block, in seconds.
    pub async fn latest_timestamp(&self) -> Result<u64, DevnetError> {
        let block = self
            .provider
            .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
            .await
            .map_err(|e| DevnetError::Send {
                what: "reading the latest block".into(),
                source: Box::new(e.into()),
            })?;
        Ok(block.map_or(0, |b| b.header.timestamp))
    }

    /// The latest block number.
    pub async fn block_number(&self) -> Result<u64, DevnetError> {
        self.provider
            .get_block_number()
            .await
            .map_err(|e| DevnetError::Send {
                what: "reading the block number".into(),
                source: Box::new(e.into()),
            })
    }
}

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
