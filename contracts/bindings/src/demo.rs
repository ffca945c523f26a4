//! Registers agents through each of the three paths agentindex follows: an agent contract
//! created by the factory, an agent contract deployed on its own and enrolled in the registry,
//! and an ERC-8004 identity. `agentindex dev` uses it for its demo agents and the end-to-end tests
//! use it to drive the real contracts.

use crate::devnet::{Devnet, DevnetError, confirm};
use crate::signing;
use crate::{AgentCard, AgentFactory, IdentityRegistry};
use alloy::primitives::{Address, B256, U256};
use alloy::rpc::types::TransactionReceipt;
use alloy::signers::local::PrivateKeySigner;
use alloy::sol_types::{SolEvent, SolValue};

/// A sample A2A card for an agent contract: one skill with tags, text in and JSON out, and x402
/// terms (0.01 test USDC per call, paid to `pay_to` when given).
pub fn sample_card(devnet: &Devnet, name: &str, pay_to: Option<Address>) -> AgentFactory::CardData {
    AgentFactory::CardData {
        name: name.to_string(),
        description: format!("{name}: a demo agent that translates text between languages"),
        url: format!(
            "https://agents.example/{}/a2a",
            name.to_lowercase().replace(' ', "-")
        ),
        version: "1.0.0".into(),
        defaultInputModes: vec!["text/plain".into()],
        defaultOutputModes: vec!["application/json".into()],
        streaming: true,
        pushNotifications: false,
        skills: vec![AgentFactory::Skill {
            id: "translate".into(),
            name: "Translate".into(),
            description: "Translates text between languages".into(),
            tags: vec!["translation".into(), "language".into()],
        }],
        payment: AgentFactory::PaymentTerms {
            asset: devnet.deployment().usdc,
            chainId: U256::from(devnet.chain_id()),
            amount: U256::from(10_000u64),
            payTo: pay_to.unwrap_or_default(),
        },
        cardURI: String::new(),
        cardHash: B256::ZERO,
    }
}

/// The factory's `CardData` as the agent contract's: the same ABI type under two Rust names.
pub fn agent_card_data(card: &AgentFactory::CardData) -> AgentCard::CardData {
    AgentCard::CardData::abi_decode(&card.abi_encode()).expect("identical ABI shape")
}

/// Creates an agent contract through the factory for `owner`; returns its address.
pub async fn via_factory(
    devnet: &Devnet,
    owner: Address,
    card: AgentFactory::CardData,
) -> Result<Address, DevnetError> {
    let receipt = confirm(
        "creating an agent through the factory",
        devnet
            .factory()
            .createAgent(owner, card, 3600)
            .from(owner)
            .send(),
    )
    .await?;
    let created = first_event::<AgentFactory::AgentCreated>(&receipt, "AgentCreated")?;
    Ok(created.agent)
}

/// Deploys an agent contract owned by `owner` and enrols it in the permissionless registry
/// with `metadata_uri`; returns its address.
pub async fn via_registry(
    devnet: &Devnet,
    owner: Address,
    card: AgentFactory::CardData,
    metadata_uri: &str,
) -> Result<Address, DevnetError> {
    let card = agent_card_data(&card);
    let agent = AgentCard::deploy_builder(devnet.provider().clone(), owner, card, 3600)
        .from(owner)
        .deploy()
        .await
        .map_err(|source| DevnetError::Deploy {
            contract: "AgentCard",
            source: Box::new(source),
        })?;
    confirm(
        "enrolling an agent in the registry",
        devnet
            .registry()
            .register(agent, metadata_uri.to_string())
            .from(owner)
            .send(),
    )
    .await?;
    Ok(agent)
}

/// Registers an ERC-8004 identity owned by `owner` pointing at `agent_uri`; returns its id.
pub async fn via_erc8004(
    devnet: &Devnet,
    owner: Address,
    agent_uri: &str,
) -> Result<U256, DevnetError> {
    let receipt = confirm(
        "registering an ERC-8004 agent",
        devnet
            .identity()
            .register_2(agent_uri.to_string())
            .from(owner)
            .send(),
    )
    .await?;
    let registered = first_event::<IdentityRegistry::Registered>(&receipt, "Registered")?;
    Ok(registered.agentId)
}

/// Decodes the first log of event `E` in `receipt`.
pub fn first_event<E: SolEvent>(
    receipt: &TransactionReceipt,
    name: &str,
) -> Result<E, DevnetError> {
    receipt
        .inner
        .logs()
        .iter()
        .find_map(|log| E::decode_log(&log.inner).ok().map(|decoded| decoded.data))
        .ok_or_else(|| DevnetError::MissingEvent {
            event: name.to_string(),
            tx: receipt.transaction_hash.to_string(),
        })
}

/// Pays `value` test USDC from account `payer_index` to `to` the way an x402 facilitator settles:
/// the payer signs an EIP-3009 authorisation off-chain and `submitter` sends it.
pub async fn pay_with_authorization(
    devnet: &Devnet,
    payer_index: usize,
    submitter: Address,
    to: Address,
    value: U256,
    nonce: B256,
) -> Result<TransactionReceipt, DevnetError> {
    pay_signed_by(
        devnet,
        devnet.signer(payer_index),
        submitter,
        to,
        value,
        nonce,
    )
    .await
}

/// [`pay_with_authorization`] signed by any key, such as a fresh wallet anvil did not create.
pub async fn pay_signed_by(
    devnet: &Devnet,
    payer: &PrivateKeySigner,
    submitter: Address,
    to: Address,
    value: U256,
    nonce: B256,
) -> Result<TransactionReceipt, DevnetError> {
    let authorization = signing::TransferWithAuthorization {
        from: payer.address(),
        to,
        value,
        validAfter: U256::ZERO,
        validBefore: U256::from(u64::MAX),
        nonce,
    };
    let domain = signing::usdc_domain(devnet.chain_id(), devnet.deployment().usdc);
    let signature = signing::sign_transfer_authorization(payer, &domain, &authorization);
    confirm(
        "settling an EIP-3009 authorisation",
        devnet
            .usdc()
            .transferWithAuthorization_0(
                authorization.from,
                authorization.to,
                authorization.value,
                authorization.validAfter,
                authorization.validBefore,
                authorization.nonce,
                signature.as_bytes().into(),
            )
            .from(submitter)
            .send(),
    )
    .await
}

/// Binds account `wallet_index` as the agentWallet of ERC-8004 agent `agent_id`, owned by `owner`,
/// with a consent valid for one minute from the latest block.
pub async fn set_agent_wallet(
    devnet: &Devnet,
    owner: Address,
    agent_id: U256,
    wallet_index: usize,
) -> Result<TransactionReceipt, DevnetError> {
    let wallet = devnet.signer(wallet_index);
    let now = devnet.latest_timestamp().await?;
    let deadline = U256::from(now + 60);
    let domain = signing::identity_domain(devnet.chain_id(), devnet.deployment().identity);
    let signature = signing::sign_agent_wallet(wallet, &domain, agent_id, owner, deadline);
    confirm(
        "setting an agentWallet",
        devnet
            .identity()
            .setAgentWallet(
                agent_id,
                wallet.address(),
                deadline,
                signature.as_bytes().into(),
            )
            .from(owner)
            .send(),
    )
    .await
}
