//! A local chain with every contract deployed.
//!
//! [`Devnet::start`] launches the pinned anvil on a free loopback port, deploys the contracts
//! (see [`crate::deploy`]), funds the accounts with test USDC and hands back typed handles. The
//! chain stops when the [`Devnet`] is dropped, or when this process dies however it dies (see
//! [`crate::tied`]). Tests, benchmarks and `agentindex dev` all stand on it, so they exercise the
//! same deployment. Its options ([`DevnetOptions`]), its error ([`DevnetError`]) and
//! [`confirm`] live in modules of their own below the deployment, and are re-exported here.

pub use crate::confirm::confirm;
pub use crate::error::DevnetError;
pub use crate::options::DevnetOptions;

use crate::anvil::{self, AnvilProcess};
use crate::deploy::{self, Deployment};
use crate::gas_headroom::GasWithHeadroom;
use crate::tools::Tool;
use crate::{
    AgentCard, AgentFactory, AgentRegistry, IdentityRegistry, LegacyEmitter, ReputationRegistry,
    Seeder, TestUSDC, ValidationRegistry,
};
use alloy::network::EthereumWallet;
use alloy::primitives::Address;
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::BlockNumberOrTag;
use alloy::signers::local::PrivateKeySigner;

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
