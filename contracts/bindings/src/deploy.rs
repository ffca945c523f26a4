//! Deploys every contract onto a fresh chain, in dependency order, and funds the accounts.

use crate::confirm::confirm;
use crate::error::DevnetError;
use crate::options::DevnetOptions;
use crate::{
    AgentFactory, AgentRegistry, IdentityRegistry, LegacyEmitter, ReputationRegistry, Seeder,
    TestUSDC, ValidationRegistry, X402BatchSettlement, X402Permit2Proxy,
};
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, Provider};

/// Where each contract landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    /// ERC-8004 Identity Registry.
    pub identity: Address,
    /// ERC-8004 Reputation Registry.
    pub reputation: Address,
    /// ERC-8004 Validation Registry.
    pub validation: Address,
    /// Agent factory.
    pub factory: Address,
    /// Permissionless agent registry.
    pub registry: Address,
    /// Curated agent registry (account 0 curates).
    pub curated_registry: Address,
    /// Test USDC with EIP-3009.
    pub usdc: Address,
    /// Workload seeder.
    pub seeder: Address,
    /// Legacy ERC-8004 event emitter.
    pub legacy: Address,
    /// Stand-in for the x402 Permit2 proxy of the `exact` scheme.
    pub permit2_exact: Address,
    /// Stand-in for the x402 Permit2 proxy of the `upto` scheme.
    pub permit2_upto: Address,
    /// Stand-in for the x402 batch-settlement contract.
    pub batch_settlement: Address,
    /// The block of the first deployment: where an index of this chain starts.
    pub start_block: u64,
}

/// USDC the Seeder gets to hand out to its clients (6 decimals).
const SEEDER_USDC: u64 = 1_000_000_000_000_000;

pub(crate) async fn deploy_all(
    provider: &DynProvider,
    accounts: &[Address],
    options: &DevnetOptions,
) -> Result<Deployment, DevnetError> {
    let failed = |contract| {
        move |source| DevnetError::Deploy {
            contract,
            source: Box::new(source),
        }
    };
    let start_block = provider
        .get_block_number()
        .await
        .map_err(|e| failed("(reading the head)")(e.into()))?
        + 1;

    let usdc = *TestUSDC::deploy(provider)
        .await
        .map_err(failed("TestUSDC"))?
        .address();
    let identity = *IdentityRegistry::deploy(provider)
        .await
        .map_err(failed("IdentityRegistry"))?
        .address();
    let reputation = *ReputationRegistry::deploy(provider, identity)
        .await
        .map_err(failed("ReputationRegistry"))?
        .address();
    let validation = *ValidationRegistry::deploy(provider, identity)
        .await
        .map_err(failed("ValidationRegistry"))?
        .address();
    let factory = *AgentFactory::deploy(provider)
        .await
        .map_err(failed("AgentFactory"))?
        .address();
    let registry = *AgentRegistry::deploy(provider, false)
        .await
        .map_err(failed("AgentRegistry"))?
        .address();
    let curated_registry = *AgentRegistry::deploy(provider, true)
        .await
        .map_err(failed("AgentRegistry (curated)"))?
        .address();
    let seeder = *Seeder::deploy(
        provider,
        identity,
        reputation,
        validation,
        factory,
        usdc,
        U256::from(options.seeder_clients),
    )
    .await
    .map_err(failed("Seeder"))?
    .address();
    let legacy = *LegacyEmitter::deploy(provider)
        .await
        .map_err(failed("LegacyEmitter"))?
        .address();

    let permit2_exact = *X402Permit2Proxy::deploy(provider, false)
        .await
        .map_err(failed("X402Permit2Proxy (exact)"))?
        .address();
    let permit2_upto = *X402Permit2Proxy::deploy(provider, true)
        .await
        .map_err(failed("X402Permit2Proxy (upto)"))?
        .address();
    let batch_settlement = *X402BatchSettlement::deploy(provider)
        .await
        .map_err(failed("X402BatchSettlement"))?
        .address();

    let token = TestUSDC::new(usdc, provider.clone());
    for account in accounts {
        confirm(
            &format!("minting USDC to {account}"),
            token.mint(*account, options.usdc_per_account).send(),
        )
        .await?;
    }
    confirm(
        "minting USDC to the Seeder",
        token.mint(seeder, U256::from(SEEDER_USDC)).send(),
    )
    .await?;

    Ok(Deployment {
        identity,
        reputation,
        validation,
        factory,
        registry,
        curated_registry,
        usdc,
        seeder,
        legacy,
        permit2_exact,
        permit2_upto,
        batch_settlement,
        start_block,
    })
}
