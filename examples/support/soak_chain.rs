//! The soak benchmark's chain: a Base-like block made on demand, two seconds of chain time
//! apart whatever the wall clock does. Every block carries a busy token's background transfers
//! and payments into agents; now and then agents register (their registration files on the
//! benchmark's document server, some of which fail), feedback is given, and a reorg replaces
//! the newest blocks.

use crate::soak_settings::BLOCK_SECONDS;
use agentindex_contracts::Devnet;
use agentindex_contracts::network_load::send_block_traffic;
use agentindex_contracts::{IdentityRegistry, Seeder};
use alloy::primitives::{Address, U256};
use alloy::providers::{DynProvider, Provider};
use alloy::sol_types::SolCall;
use serde_json::json;

/// Background transfers per block: Base's USDC moves a couple of million a day.
const TRANSFERS_PER_BLOCK: u64 = 24;
/// Blocks after which the background transfers' recipients come round again: an hour's worth,
/// 43,200 addresses. With a fresh address for every transfer the token's storage grew by a
/// million slots a day, and anvil, recomputing its state for every block, slowed from 0.1 s a
/// block to over 0.4 s by the ninth chain hour. The logs stay as many; the indexer keeps only
/// transfers into agents' addresses, so who receives the others changes nothing it does.
const RECIPIENT_ROUNDS: u64 = 1_800;
/// Payments into agents per block.
const PAYMENTS_PER_BLOCK: usize = 2;
/// Blocks between two registrations of new agents (three at a time, by three accounts).
const REGISTRATIONS_EVERY: u64 = 30;
/// Blocks between two rounds of feedback (on two agents).
const FEEDBACK_EVERY: u64 = 90;
/// Blocks between two reorgs (three blocks deep).
const REORG_EVERY: u64 = 600;
const REORG_DEPTH: u64 = 3;

/// What happened on the chain so far.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ChainCounts {
    pub(crate) blocks: u64,
    pub(crate) registered: u64,
    pub(crate) feedback: u64,
    pub(crate) reorgs: u64,
}

pub(crate) struct Chain {
    provider: DynProvider,
    seeder: Seeder::SeederInstance<DynProvider>,
    seeder_address: Address,
    identity: IdentityRegistry::IdentityRegistryInstance<DynProvider>,
    /// Accounts that register new agents, one each per registration round.
    registrars: Vec<Address>,
    /// The agents' wallets, paid in turn.
    wallets: Vec<Address>,
    /// Where new agents' registration files are (`{documents}{id}`).
    documents: String,
    /// ERC-8004 agent ids so far (the seeded wallet agents come first).
    agents: u64,
    pub(crate) counts: ChainCounts,
}

impl Chain {
    /// Takes over `devnet` (whose first `agents` ERC-8004 agents hold `wallets`): blocks are
    /// made only by [`Chain::next_block`], each two seconds after the one before.
    pub(crate) async fn take_over(
        devnet: &Devnet,
        wallets: Vec<Address>,
        documents: String,
    ) -> anyhow::Result<Self> {
        let provider = devnet.provider().clone();
        let _: serde_json::Value = provider
            .raw_request("evm_setAutomine".into(), (false,))
            .await?;
        let _: serde_json::Value = provider
            .raw_request("anvil_setBlockTimestampInterval".into(), (BLOCK_SECONDS,))
            .await?;
        Ok(Self {
            seeder: devnet.seeder(),
            identity: devnet.identity(),
            registrars: devnet.accounts().into_iter().skip(3).take(3).collect(),
            seeder_address: devnet.deployment().seeder,
            agents: wallets.len() as u64,
            wallets,
            documents,
            provider,
            counts: ChainCounts::default(),
        })
    }

    /// Sends block `n`'s transactions and mines it; every [`REORG_EVERY`] blocks the newest
    /// [`REORG_DEPTH`] are then replaced by as many holding a payment of their own.
    pub(crate) async fn next_block(&mut self, n: u64) -> anyhow::Result<()> {
        let payees: Vec<Address> = (0..PAYMENTS_PER_BLOCK)
            .map(|i| self.wallets[(n as usize * 7_919 + i * 104_729) % self.wallets.len()])
            .collect();
        let round = n % RECIPIENT_ROUNDS;
        send_block_traffic(&self.seeder, TRANSFERS_PER_BLOCK, round, &payees).await?;
        if n.is_multiple_of(REGISTRATIONS_EVERY) {
            // Registered by accounts that send no background traffic, as registrars on Base do
            // (each transfer of an account owning agents is an outflow, stored once, of them all).
            for (i, registrar) in self.registrars.iter().enumerate() {
                let uri = format!("{}{}", self.documents, n * 10 + i as u64);
                let _pending = self
                    .identity
                    .register_2(uri)
                    .from(*registrar)
                    .send()
                    .await?;
            }
            self.agents += self.registrars.len() as u64;
            self.counts.registered += self.registrars.len() as u64;
        }
        if n % FEEDBACK_EVERY == FEEDBACK_EVERY / 2 {
            let first = 1 + (n * 31) % self.agents.max(1);
            let _pending = self
                .seeder
                .seedFeedback(U256::from(first), U256::from(2), U256::from(1))
                .send()
                .await?;
            self.counts.feedback += 2;
        }
        let _: serde_json::Value = self.provider.raw_request("evm_mine".into(), ()).await?;
        self.counts.blocks += 1;
        if n % REORG_EVERY == REORG_EVERY / 2 {
            self.reorg(n).await?;
        }
        Ok(())
    }

    /// Replaces the newest blocks with a branch holding one payment into an agent.
    async fn reorg(&mut self, n: u64) -> anyhow::Result<()> {
        let payee = self.wallets[(n as usize * 104_729) % self.wallets.len()];
        let input = Seeder::seedPaymentsCall {
            payees: vec![payee],
            perPayee: U256::from(1),
            amount: U256::from(10_000),
        }
        .abi_encode();
        let from = self
            .provider
            .get_accounts()
            .await?
            .first()
            .copied()
            .unwrap_or_default();
        let call = json!([{
            "from": from,
            "to": self.seeder_address,
            "input": alloy::primitives::Bytes::from(input),
            "gas": "0x1e8480"
        }, 0]);
        let _: serde_json::Value = self
            .provider
            .raw_request("anvil_reorg".into(), (REORG_DEPTH, vec![call]))
            .await?;
        self.counts.reorgs += 1;
        // What the replaced blocks held is gone: their registrations' token ids will be minted
        // again, and feedback on an agent counted but never minted reverts (block 17,745 of a
        // day's run).
        for removed in n + 1 - REORG_DEPTH..=n {
            if removed.is_multiple_of(REGISTRATIONS_EVERY) {
                self.agents -= self.registrars.len() as u64;
                self.counts.registered -= self.registrars.len() as u64;
            }
            if removed % FEEDBACK_EVERY == FEEDBACK_EVERY / 2 {
                self.counts.feedback -= 2;
            }
        }
        Ok(())
    }
}
