//! The follower of one chain: backfill up to the finalized block, then follow the tip with a
//! window of remembered block hashes, undoing what a reorg replaced.
//!
//! [`Follower::step`] does one unit of work and says what it did ([`Outcome`]); [`Follower::run`]
//! is the loop around it that adds waiting, backoff and shutdown.
//!
//! This file holds the follower's state and how it is set up; each kind of work has a file of its
//! own: `step.rs` decides what comes next, `backfill.rs` and `tip.rs` do it, `range_fetch.rs`
//! fetches a range (reading it with `fetch.rs` and `ahead.rs`, resolving it with `resolve.rs`),
//! `batch.rs` turns it into the writer's batch, `pipeline.rs` hands it over, `reorg.rs` undoes
//! what a reorg replaced and `run.rs` is the loop.

mod ahead;
mod assemble;
mod backfill;
mod batch;
mod by_address;
mod cardano;
mod cardano_reads;
mod deployment;
mod discovery;
mod error;
mod fetch;
mod fetched;
mod funding;
mod funding_cache;
mod pairing;
mod pipeline;
mod range;
mod range_fetch;
mod reorg;
mod resolve;
mod run;
mod scan;
mod snapshot;
mod sources;
mod step;
pub mod strategy;
mod tip;

pub use assemble::AssembleError;
pub use cardano::CardanoFollower;
pub use deployment::deployment_block;
pub use error::FollowerError;
pub use range::AdaptiveRange;
pub use sources::SourceMap;
pub use strategy::CostModel;

use crate::config::{ChainConfig, StartBlock};
use crate::health::HealthBoard;
use crate::primitives::BlockRef;
use crate::rpc::{ChainRpc, RetryPolicy, RpcError};
use crate::store::StoreRead;
use crate::store::{ChainContext, Store, StoreError, WatchedSets, Writer};
use alloy::eips::BlockNumberOrTag;
use std::sync::Arc;

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Applied blocks `from..=to`.
    Indexed {
        /// First block.
        from: u64,
        /// Last block.
        to: u64,
        /// Events stored.
        events: u64,
        /// The chain head seen.
        head: u64,
    },
    /// Undid every block above `ancestor` after a reorg.
    Rewound {
        /// The last block both branches share.
        ancestor: u64,
        /// Rows removed.
        removed: u64,
    },
    /// Nothing new: the index is at the head.
    Synced {
        /// The chain head seen.
        head: u64,
    },
    /// The range was narrowed or the chain moved while fetching; nothing applied.
    Retry,
    /// `until_block` is indexed.
    Done,
}

/// Follows one chain into the store.
pub struct Follower {
    config: ChainConfig,
    context: Arc<ChainContext>,
    rpc: ChainRpc,
    sources: SourceMap,
    store: Store,
    writer: Writer,
    range: AdaptiveRange,
    costs: CostModel,
    watched: WatchedSets,
    until_block: Option<u64>,
    chain_checked: bool,
    /// The chain starts at its Identity Registry's deployment, not found yet.
    start_to_find: bool,
    in_flight: std::collections::VecDeque<pipeline::InFlight>,
    /// Backfill ranges read ahead of the one being fetched, in chain order.
    ahead: std::collections::VecDeque<ahead::Ahead>,
    /// The last range went through whole: ranges as wide are worth reading ahead (after a
    /// refusal or a cut they would likely be refused or too dense too).
    read_ahead: bool,
    /// The head and finalized block last read, and when: a backfill below that finalized block
    /// does not ask again for a poll interval.
    seen_head: Option<(BlockRef, u64, std::time::Instant)>,
    /// How payers' funding is looked for, and what was read already.
    funding: funding::FundingLookback,
}

impl Follower {
    /// Prepares the follower of `config` (whose chain `context` describes), creating its cursor
    /// if this is the first run.
    pub async fn new(
        config: ChainConfig,
        context: Arc<ChainContext>,
        store: Store,
        writer: Writer,
        retry: RetryPolicy,
        until_block: Option<u64>,
    ) -> Result<Self, FollowerError> {
        let chain = config.name.clone();
        let rpc = ChainRpc::new(&config, retry).map_err(|source| FollowerError::Rpc {
            chain: chain.clone(),
            source,
        })?;
        let store_error = |source| FollowerError::Store {
            chain: chain.clone(),
            source,
        };
        let mut config = config;
        let mut start_to_find = false;
        match config.start_block.known() {
            Some(start) => writer
                .init_chain(config.chain_id, &config.name, start)
                .await
                .map_err(store_error)?,
            // Found once, before the first range; a chain already under way goes on from its
            // cursor, and nothing lies before the deployment to watch for.
            None => match store.progress(config.chain_id).await.map_err(store_error)? {
                Some(_) => config.start_block = StartBlock::At(0),
                None => start_to_find = true,
            },
        }
        let rescored = writer
            .adopt_rules(context.clone())
            .await
            .map_err(store_error)?;
        if rescored > 0 {
            tracing::info!(chain = %config.name, rescored, "reputation rules changed: agents rescored");
        }
        let watched = store.watched(config.chain_id).await.map_err(store_error)?;
        Ok(Self {
            context,
            sources: SourceMap::from_config(&config),
            range: AdaptiveRange::new(config.max_block_range),
            costs: CostModel::new(config.fetch_strategy, config.payment_address_chunk),
            rpc,
            store,
            writer,
            watched,
            until_block,
            chain_checked: false,
            start_to_find,
            in_flight: Default::default(),
            ahead: Default::default(),
            read_ahead: false,
            seen_head: None,
            funding: funding::FundingLookback {
                blocks: config.funding_lookback_blocks,
                max_span: config.max_block_range.into(),
                cache: Default::default(),
            },
            config,
        })
    }

    /// The chain's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The same follower, registering its chain on `board` and writing there what its
    /// endpoints and steps meet.
    pub fn report_to(mut self, board: &HealthBoard) -> Self {
        let health = board.chain(
            self.config.chain_id,
            &self.config.name,
            self.rpc.shown_urls(),
        );
        self.rpc = self.rpc.reporting_to(health);
        self
    }

    /// The header of block `number`; `None` when the node does not have it (yet).
    pub(super) async fn header(&self, number: u64) -> Result<Option<BlockRef>, FollowerError> {
        self.rpc
            .header(BlockNumberOrTag::Number(number))
            .await
            .map_err(|e| self.rpc_error(e))
    }

    pub(super) fn rpc_error(&self, source: RpcError) -> FollowerError {
        FollowerError::Rpc {
            chain: self.config.name.clone(),
            source,
        }
    }

    pub(super) fn store_error(&self, source: StoreError) -> FollowerError {
        FollowerError::Store {
            chain: self.config.name.clone(),
            source,
        }
    }
}
