//! Follows one Cardano network's Masumi registry into the store, as the EVM follower follows a
//! chain: batches of blocks applied atomically with the cursor, the last blocks' hashes kept to
//! notice a rollback, and everything above the newest still-canonical block undone when one
//! comes.
//!
//! A step reads the registry policies' runs after those already read and the payment
//! contracts' transactions from the next height on (`cardano_reads.rs`), up to the tip or until
//! a batch is full (then up to the height of the last transaction taken, whole), then each
//! transaction's inputs, outputs and metadata. The tip is
//! read before and after: if its hash moved, the reads may mix two branches and the step is
//! dropped (nothing is applied; the next step sees the rollback and undoes it).

use super::run::{backoff, rest};
use super::{FollowerError, Outcome};
use crate::cardano::source::{CardanoBlock, CardanoSource, SourceError};
use crate::config::{CardanoConfig, EscrowContract, RegistryPolicy};
use crate::health::{ChainHealth, HealthBoard, Problem};
use crate::primitives::BlockRef;
use crate::store::{Batch, ChainContext, Store, StoreError, StoreRead, Writer};
use alloy::primitives::B256;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Follows one `[[cardano]]` network.
pub struct CardanoFollower<S> {
    pub(super) config: CardanoConfig,
    context: Arc<ChainContext>,
    pub(super) policies: Vec<RegistryPolicy>,
    pub(super) escrows: Vec<EscrowContract>,
    pub(super) source: S,
    pub(super) store: Store,
    writer: Writer,
    /// Where the provider's answers and the steps' outcomes are written.
    health: Arc<ChainHealth>,
}

impl<S: CardanoSource> CardanoFollower<S> {
    /// A follower of `config` reading through `source`; creates the network's cursor.
    pub async fn new(
        config: CardanoConfig,
        context: Arc<ChainContext>,
        source: S,
        store: Store,
        writer: Writer,
    ) -> Result<Self, FollowerError> {
        let policies = config.registry_policies();
        let escrows = config.escrow_contracts();
        writer
            .init_chain(config.chain_id(), &config.name(), 0)
            .await
            .map_err(|source| FollowerError::Store {
                chain: config.name(),
                source,
            })?;
        let health = ChainHealth::unobserved(
            config.chain_id(),
            &config.name(),
            vec![crate::redact::url(&config.blockfrost_url())],
        );
        Ok(Self {
            config,
            context,
            policies,
            escrows,
            source,
            store,
            writer,
            health,
        })
    }

    /// The same follower, registering its network on `board` and writing there what its
    /// provider and steps meet.
    pub fn report_to(mut self, board: &HealthBoard) -> Self {
        let url = crate::redact::url(&self.config.blockfrost_url());
        self.health = board.chain(self.config.chain_id(), &self.config.name(), [url]);
        self
    }

    /// Runs steps until the tip is indexed (with `exit_when_synced`), a fatal error, or
    /// `shutdown` turns true (at once, even mid-request). Other errors are logged and retried
    /// after the wait their class asks for, growing while they repeat.
    pub async fn run(
        mut self,
        exit_when_synced: bool,
        mut shutdown: watch::Receiver<bool>,
        mut progress: impl FnMut(&str, &Outcome),
    ) -> Result<(), FollowerError> {
        let name = self.config.name();
        let poll = Duration::from_millis(self.config.poll_interval_ms);
        let mut failures = 0u32;
        loop {
            if *shutdown.borrow() {
                return Ok(());
            }
            let stepped = tokio::select! {
                stepped = self.step() => stepped,
                _ = shutdown.wait_for(|stop| *stop) => continue,
            };
            self.report(&stepped);
            let pause = match stepped {
                Ok(outcome) => {
                    failures = 0;
                    progress(&name, &outcome);
                    match outcome {
                        Outcome::Synced { .. } if exit_when_synced => return Ok(()),
                        Outcome::Synced { .. } => Some(poll),
                        Outcome::Rewound { ancestor, removed } => {
                            tracing::warn!(target: "agentindex::cardano", network = %name, ancestor, removed, "rollback undone");
                            None
                        }
                        _ => None,
                    }
                }
                Err(error) if error.is_fatal() => return Err(error),
                Err(error) => {
                    failures += 1;
                    let growing = backoff(failures);
                    let wait = match &error {
                        FollowerError::Cardano {
                            source: SourceError::OverQuota { .. },
                            ..
                        } => Duration::from_secs(self.config.quota_wait_secs),
                        FollowerError::Cardano { source, .. } => source.backoff().max(growing),
                        _ => growing,
                    };
                    tracing::warn!(target: "agentindex::cardano", %error, retry_in = ?wait, "step failed");
                    Some(wait)
                }
            };
            if let Some(pause) = pause {
                rest(&mut shutdown, pause).await;
            }
        }
    }

    /// Writes a step's outcome to the network's health: the provider answered, or what its
    /// failure says of it.
    fn report(&self, stepped: &Result<Outcome, FollowerError>) {
        match stepped {
            Ok(_) => {
                self.health.answered(0);
                self.health.step_succeeded();
            }
            Err(error) => {
                if let FollowerError::Cardano { source, .. } = error {
                    self.health
                        .failed(0, provider_problem(source), &source.to_string());
                }
                self.health
                    .step_failed(&error.to_string(), error.is_fatal());
            }
        }
    }

    /// One step: undo a rollback, or index the next run of blocks, or say the tip is reached.
    pub async fn step(&mut self) -> Result<Outcome, FollowerError> {
        let chain_id = self.config.chain_id();
        let tip = self.source.tip().await.map_err(|e| self.provider(e))?;
        let window = self
            .store
            .window(chain_id)
            .await
            .map_err(|e| self.store_error(e))?;
        if let Some(last) = window.last() {
            let now = self
                .source
                .block(last.number)
                .await
                .map_err(|e| self.provider(e))?;
            if now.is_none_or(|b| b.hash != last.hash) {
                return self.undo_rollback(&window).await;
            }
        }
        let next = self
            .store
            .progress(chain_id)
            .await
            .map_err(|e| self.store_error(e))?
            .map_or(0, |p| p.next_block);
        let finalized = tip.height.saturating_sub(self.config.rollback_window);
        if next > tip.height {
            self.writer
                .record_heads(chain_id, tip.height, finalized)
                .await
                .map_err(|e| self.store_error(e))?;
            return Ok(Outcome::Synced { head: tip.height });
        }
        let (txs, to) = self.transactions(next, tip.height).await?;
        let Some(to_block) = self.settled(&tip, to).await? else {
            return Ok(Outcome::Retry);
        };
        if txs
            .iter()
            .any(|tx| tx.place.height == to && tx.place.block_hash != to_block.hash)
        {
            return Ok(Outcome::Retry);
        }
        let actions = txs.iter().map(|tx| tx.actions.len() as u64).sum();
        let batch = Batch {
            chain: self.context.clone(),
            from_block: next,
            to_block: to,
            to_hash: Some(to_block.hash),
            events: Vec::new(),
            cardano: txs,
            funding: Vec::new(),
            window: vec![BlockRef {
                number: to_block.height,
                hash: to_block.hash,
                parent_hash: to_block.previous.unwrap_or(B256::ZERO),
                timestamp: to_block.time,
            }],
            window_from: (to + 1).saturating_sub(self.config.rollback_window),
            finalized,
            head: tip.height,
            settles: to >= tip.height,
        };
        self.writer
            .apply(batch)
            .await
            .map_err(|e| self.store_error(e))?;
        Ok(Outcome::Indexed {
            from: next,
            to,
            events: actions,
            head: tip.height,
        })
    }

    /// Block `to` as the chain holds it after the step's reads, or none when the tip moved
    /// under them (a rollback: retry).
    async fn settled(
        &self,
        tip: &CardanoBlock,
        to: u64,
    ) -> Result<Option<CardanoBlock>, FollowerError> {
        let again = self
            .source
            .block(tip.height)
            .await
            .map_err(|e| self.provider(e))?;
        if again.is_none_or(|b| b.hash != tip.hash) {
            return Ok(None);
        }
        if to == tip.height {
            return Ok(Some(*tip));
        }
        self.source.block(to).await.map_err(|e| self.provider(e))
    }

    /// Finds the newest remembered block still on the chain and undoes everything above it.
    async fn undo_rollback(&self, window: &[BlockRef]) -> Result<Outcome, FollowerError> {
        let mut ancestor = None;
        for block in window.iter().rev() {
            let now = self
                .source
                .block(block.number)
                .await
                .map_err(|e| self.provider(e))?;
            if now.is_some_and(|b| b.hash == block.hash) {
                ancestor = Some(block.number);
                break;
            }
        }
        let Some(ancestor) = ancestor else {
            return Err(FollowerError::DeepReorg {
                chain: self.config.name(),
                window: self.config.rollback_window,
                oldest: window.first().map_or(0, |b| b.number),
                newest: window.last().map_or(0, |b| b.number),
            });
        };
        let removed = self
            .writer
            .rewind(self.context.clone(), ancestor)
            .await
            .map_err(|e| self.store_error(e))?;
        let newest = window.last().map_or(ancestor, |b| b.number);
        crate::metrics::metrics().reorg(self.config.chain_id(), newest.saturating_sub(ancestor));
        Ok(Outcome::Rewound { ancestor, removed })
    }

    pub(super) fn provider(&self, source: SourceError) -> FollowerError {
        FollowerError::Cardano {
            chain: self.config.name(),
            source,
        }
    }

    pub(super) fn moved(&self, reason: &str) -> FollowerError {
        self.provider(SourceError::Unavailable {
            provider: self.source.name().to_string(),
            what: "the registry's transactions".into(),
            reason: reason.into(),
        })
    }

    pub(super) fn store_error(&self, source: StoreError) -> FollowerError {
        FollowerError::Store {
            chain: self.config.name(),
            source,
        }
    }
}

/// What a provider's failure says of the provider: a refused key (401/403), else failing.
fn provider_problem(error: &SourceError) -> Problem {
    match error {
        SourceError::Refused {
            status: 401 | 403, ..
        } => Problem::Rejected,
        _ => Problem::Failing,
    }
}
