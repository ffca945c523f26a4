//! Seeded workloads for load tests and benchmarks: many registrations, feedback, validations,
//! card updates and payments per transaction, all through the real contracts via the Seeder.

use crate::devnet::{Devnet, DevnetError, confirm};
use alloy::primitives::{Address, U256};

/// How much to seed; every count is per transaction batch as noted.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// Rounds of the whole mix.
    pub rounds: u64,
    /// ERC-8004 agents registered per round (5 events each).
    pub agents: u64,
    /// Feedback per agent per round.
    pub feedback_per_agent: u64,
    /// Validation responses per agent per round (plus one request each).
    pub responses_per_agent: u64,
    /// Factory agents created per round.
    pub factory_agents: u64,
    /// Card updates per factory agent per round.
    pub card_updates: u64,
    /// USDC transfers into each factory agent per round.
    pub payments_per_agent: u64,
}

impl Workload {
    /// A small mix of every kind: about 1,500 events per round.
    pub fn small(rounds: u64) -> Self {
        Self {
            rounds,
            agents: 40,
            feedback_per_agent: 4,
            responses_per_agent: 2,
            factory_agents: 10,
            card_updates: 2,
            payments_per_agent: 8,
        }
    }
}

impl Workload {
    /// The benchmark mix: about 5,600 events per round, in seven large transactions.
    pub fn bench(rounds: u64) -> Self {
        Self {
            rounds,
            agents: 400,
            feedback_per_agent: 4,
            responses_per_agent: 2,
            factory_agents: 50,
            card_updates: 2,
            payments_per_agent: 8,
        }
    }
}

/// Runs `workload` through the Seeder; returns the factory agents created.
pub async fn seed(devnet: &Devnet, workload: Workload) -> Result<Vec<Address>, DevnetError> {
    let seeder = devnet.seeder();
    let mut agents_made = Vec::new();
    confirm(
        "funding seeder clients",
        seeder.fundClients(U256::from(1_000_000_000_000u64)).send(),
    )
    .await?;
    for _ in 0..workload.rounds {
        let first =
            devnet
                .identity()
                .totalAgents()
                .call()
                .await
                .map_err(|e| DevnetError::Send {
                    what: "reading totalAgents".into(),
                    source: Box::new(e),
                })?;
        confirm(
            "seeding agents",
            seeder
                .seedAgents(U256::from(workload.agents), "ipfs://seed/".into())
                .send(),
        )
        .await?;
        let count = U256::from(workload.agents);
        confirm(
            "seeding feedback",
            seeder
                .seedFeedback(first, count, U256::from(workload.feedback_per_agent))
                .send(),
        )
        .await?;
        confirm(
            "seeding validations",
            seeder
                .seedValidations(first, count, U256::from(workload.responses_per_agent))
                .send(),
        )
        .await?;
        let created = seeder
            .seedFactoryAgents(U256::from(workload.factory_agents))
            .call()
            .await
            .map_err(|e| DevnetError::Send {
                what: "predicting factory agents".into(),
                source: Box::new(e),
            })?;
        confirm(
            "seeding factory agents",
            seeder
                .seedFactoryAgents(U256::from(workload.factory_agents))
                .send(),
        )
        .await?;
        confirm(
            "seeding card updates",
            seeder
                .seedCardUpdates(created.clone(), U256::from(workload.card_updates))
                .send(),
        )
        .await?;
        confirm(
            "seeding payments",
            seeder
                .seedPayments(
                    created.clone(),
                    U256::from(workload.payments_per_agent),
                    U256::from(1_000),
                )
                .send(),
        )
        .await?;
        agents_made.extend(created);
    }
    Ok(agents_made)
}
