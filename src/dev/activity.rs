//! Puts the demo agents on-chain through their paths and gives them a history: x402 and plain
//! USDC payments from several clients (so reputations differ), ERC-8004 feedback and ratings of
//! agent contracts.

use super::catalog::{DemoAgent, Path};
use super::documents::DocumentServer;
use agentindex_contracts::{AgentFactory, Devnet, confirm, demo, signing};
use alloy::primitives::{Address, B256, U256};
use alloy::providers::Provider;
use anyhow::Context;

/// The demo's history spans this long: the chain starts this far in the past (see
/// [`genesis_timestamp`]) and each registration, then each agent's payments, move its clock
/// on, so the explorer's daily charts show days, not one bar.
const HISTORY_SECS: u64 = 12 * 86_400;

/// Where the chain's clock starts: [`HISTORY_SECS`] and a day before now, so the history ends
/// about a day ago and new blocks follow on from it.
pub(crate) fn genesis_timestamp() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    now.saturating_sub(HISTORY_SECS + 86_400)
}

/// Moves the chain's clock on by the share of [`HISTORY_SECS`] one of `steps` steps takes.
async fn advance_clock(devnet: &Devnet, steps: usize) -> anyhow::Result<()> {
    let seconds = HISTORY_SECS / 2 / steps.max(1) as u64;
    devnet
        .provider()
        .raw_request::<_, serde_json::Value>("evm_increaseTime".into(), (seconds,))
        .await
        .context("moving the demo chain's clock on")?;
    Ok(())
}

/// Accounts: 0 deploys and settles x402 payments as the facilitator, 1..=CLIENTS pay and give
/// feedback, owners start at OWNERS.
pub(crate) const CLIENTS: usize = 6;
const OWNERS: usize = CLIENTS + 1;

/// Accounts the demo needs on the local chain.
pub(crate) fn accounts_needed(agents: usize) -> usize {
    OWNERS + agents
}

/// Registers every agent through its path and records where each is paid.
pub(crate) async fn register(
    devnet: &Devnet,
    agents: &[DemoAgent],
    documents: &DocumentServer,
) -> anyhow::Result<()> {
    let accounts = devnet.accounts();
    for agent in agents {
        let owner = accounts[OWNERS + agent.n];
        let (pay_to, token_id) = match agent.path {
            Path::Factory => {
                let card = onchain_card(devnet, agent, documents);
                let address = demo::via_factory(devnet, owner, card)
                    .await
                    .with_context(|| format!("creating {} through the factory", agent.name))?;
                (address, None)
            }
            Path::Registry => {
                let card = onchain_card(devnet, agent, documents);
                let address = demo::via_registry(devnet, owner, card, &documents.card_url(agent.n))
                    .await
                    .with_context(|| format!("enrolling {} in the registry", agent.name))?;
                (address, None)
            }
            Path::Erc8004 => {
                let id = demo::via_erc8004(devnet, owner, &documents.registration_url(agent.n))
                    .await
                    .with_context(|| format!("registering {} in ERC-8004", agent.name))?;
                // The identity registry binds the owner as the agent's wallet.
                (owner, Some(id.to::<u64>()))
            }
        };
        {
            let mut on_chain = documents
                .on_chain
                .write()
                .map_err(|_| anyhow::anyhow!("the document server's state is poisoned"))?;
            on_chain.pay_to.insert(agent.n, pay_to);
            if let Some(id) = token_id {
                on_chain.token_ids.insert(agent.n, id);
            }
        }
        advance_clock(devnet, agents.len()).await?;
    }
    Ok(())
}

/// The on-chain card of an agent contract: the catalogue's name and skills, its terms, and
/// the URI of its off-chain card.
fn onchain_card(
    devnet: &Devnet,
    agent: &DemoAgent,
    documents: &DocumentServer,
) -> AgentFactory::CardData {
    let mut card = demo::sample_card(devnet, &agent.name, None);
    card.description = agent.description.clone();
    card.url = format!("{}/agents/{}/a2a", documents.base, agent.n);
    card.streaming = agent.streaming;
    card.defaultInputModes = agent.input_modes.iter().map(|m| m.to_string()).collect();
    card.defaultOutputModes = agent.output_modes.iter().map(|m| m.to_string()).collect();
    card.skills = agent
        .skills
        .iter()
        .map(|s| AgentFactory::Skill {
            id: s.id.into(),
            name: s.name.into(),
            description: s.description.clone(),
            tags: s.tags.iter().map(|t| t.to_string()).collect(),
        })
        .collect();
    card.payment.amount = U256::from(agent.price.unwrap_or(0));
    card.cardURI = documents.card_url(agent.n);
    card
}

/// Payments, feedback and ratings: agent `n` is paid by `n % CLIENTS` distinct clients (every
/// other one through an EIP-3009 settlement, as an x402 facilitator does; the rest by a plain
/// transfer, or an agent contract's `pay()`), and given feedback (ERC-8004) or rated (agent
/// contracts, by those who paid through `pay()`).
pub(crate) async fn make_history(
    devnet: &Devnet,
    agents: &[DemoAgent],
    documents: &DocumentServer,
) -> anyhow::Result<()> {
    let accounts = devnet.accounts();
    let facilitator = accounts[0];
    let usdc = devnet.usdc();
    // Round k pays every agent that has a k-th client, a day of chain time apart, so each
    // agent's payments (and the feedback after them) fall on different days.
    for k in 0..CLIENTS {
        for agent in agents.iter().filter(|agent| k < agent.n % CLIENTS) {
            let (pay_to, token_id) = {
                let on_chain = documents
                    .on_chain
                    .read()
                    .map_err(|_| anyhow::anyhow!("the document server's state is poisoned"))?;
                (
                    on_chain
                        .pay_to
                        .get(&agent.n)
                        .copied()
                        .unwrap_or(Address::ZERO),
                    on_chain.token_ids.get(&agent.n).copied(),
                )
            };
            let price = U256::from(agent.price.unwrap_or(5_000));
            let client = 1 + (agent.n + k) % CLIENTS;
            if k % 2 == 0 {
                let nonce = signing::nonce(&format!("demo-{}-{k}", agent.n));
                demo::pay_with_authorization(devnet, client, facilitator, pay_to, price, nonce)
                    .await
                    .with_context(|| format!("an x402 payment to {}", agent.name))?;
            } else if token_id.is_some() {
                confirm(
                    "a USDC payment",
                    usdc.transfer(pay_to, price).from(accounts[client]).send(),
                )
                .await?;
            } else {
                // An agent contract's pay(): the payer may rate it afterwards.
                confirm(
                    "approving a payment",
                    usdc.approve(pay_to, price).from(accounts[client]).send(),
                )
                .await?;
                confirm(
                    "paying an agent contract",
                    devnet
                        .agent(pay_to)
                        .pay(devnet.deployment().usdc, price)
                        .from(accounts[client])
                        .send(),
                )
                .await?;
            }
            let score = 60 + ((agent.n * 13 + k * 7) % 40) as u8;
            match token_id {
                Some(id) => {
                    let hash = B256::repeat_byte(k as u8 + 1);
                    confirm(
                        "feedback",
                        devnet
                            .reputation()
                            .giveFeedback(
                                U256::from(id),
                                i128::from(score),
                                0,
                                "quality".into(),
                                agent.skills[0].id.into(),
                                format!("{}/agents/{}/a2a", documents.base, agent.n),
                                String::new(),
                                hash,
                            )
                            .from(accounts[client])
                            .send(),
                    )
                    .await?;
                }
                None if k % 2 == 1 => {
                    confirm(
                        "a rating",
                        devnet
                            .agent(pay_to)
                            .rate(score)
                            .from(accounts[client])
                            .send(),
                    )
                    .await?;
                }
                None => {}
            }
        }
        advance_clock(devnet, CLIENTS).await?;
    }
    Ok(())
}
