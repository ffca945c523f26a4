//! The follower of one chain: backfill up to the finalized block, then follow the tip with a
//! window of remembered block hashes, undoing what a reorg replaced.
//!
//! [`Follower::step`] does one unit of work and says what it did ([`Outcome`]); [`Follower::run`]
//! is the loop around it that adds waiting, backoff and shutdown.

mod ahead;
mod assemble;
mod deployment;
mod discovery;
mod error;
mod fetch;
mod pairing;
mod pipeline;
mod range;
mod reorg;
mod scan;
mod snapshot;
mod sources;
pub mod strategy;

pub use assemble::AssembleError;
pub use deployment::deployment_block;
pub use error::FollowerError;
pub use range::AdaptiveRange;
pub use sources::SourceMap;
pub use strategy::CostModel;

use crate::config::{ChainConfig, Finality, StartBlock};
use crate::metrics::metrics;
use crate::primitives::BlockRef;
use crate::rpc::{ChainRpc, RetryPolicy, RpcError};
use crate::store::StoreRead;
use crate::store::{Batch, ChainContext, Store, StoreError, WatchedSets, Writer};
use alloy::eips::BlockNumberOrTag;
use std::sync::Arc;
use std::time::Duration;
use strategy::{Family, Plan, Way};
use tokio::sync::watch;

/// Blocks the node's `finalized` tag is assumed to trail the head by when it has no such tag.
const FALLBACK_FINALITY_DEPTH: u64 = 64;
/// Most blocks one tip step covers (each needs its header).
const TIP_SPAN: u64 = 64;
/// Logs one batch may hold; a range that returns more is narrowed, so memory stays flat however
/// dense the chain is.
const MAX_BATCH_LOGS: usize = 10_000;
/// Logs a range's scans may bring at most (as the densities seen predict): what a scan returns
/// is held whole until the range is filtered, so the range is cut to keep it this small.
const MAX_SCANNED_LOGS: f64 = 20_000.0;

/// A fetched range, the last block it covers, and that block's header when it was read along.
type Fetched = (fetch::FetchedRange, u64, Option<BlockRef>);

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
            config,
        })
    }

    /// The chain's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Runs steps until `until_block` (or, with `exit_when_synced`, the head) is indexed, a fatal
    /// error, or `shutdown` turns true (at once, even mid-request). Other errors are logged and
    /// retried with backoff.
    pub async fn run(
        mut self,
        exit_when_synced: bool,
        mut shutdown: watch::Receiver<bool>,
        mut progress: impl FnMut(&str, &Outcome),
    ) -> Result<(), FollowerError> {
        let poll = Duration::from_millis(self.config.poll_interval_ms);
        let mut failures = 0u32;
        loop {
            if *shutdown.borrow() {
                return self.drain().await;
            }
            // A step waits on the network (retries, backoff, a slow provider); a shutdown must
            // not wait for it. Dropping the step is safe: what it fetched is fetched again, and
            // a batch it handed to the writer commits whole or not at all.
            let stepped = tokio::select! {
                stepped = self.step() => stepped,
                _ = stop_requested(&mut shutdown) => continue,
            };
            let pause = match stepped {
                Ok(outcome) => {
                    failures = 0;
                    progress(&self.config.name, &outcome);
                    match outcome {
                        Outcome::Done => return Ok(()),
                        Outcome::Synced { .. } if exit_when_synced => return Ok(()),
                        Outcome::Synced { .. } => Some(poll),
                        Outcome::Rewound { ancestor, removed } => {
                            tracing::warn!(target: "agentindex::follower", chain = %self.config.name, ancestor, removed, "reorg undone");
                            None
                        }
                        Outcome::Indexed { .. } | Outcome::Retry => None,
                    }
                }
                Err(error) if error.is_fatal() => return Err(error),
                Err(error) => {
                    failures += 1;
                    let wait = Duration::from_millis((250u64 << failures.min(7)).min(30_000));
                    tracing::warn!(target: "agentindex::follower", %error, retry_in = ?wait, "step failed");
                    Some(wait)
                }
            };
            if let Some(pause) = pause {
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.changed() => {}
                }
            }
        }
    }

    /// One unit of work: a backfill range, a tip run, or a reorg undone.
    pub async fn step(&mut self) -> Result<Outcome, FollowerError> {
        if !self.chain_checked {
            let actual = self.rpc.chain_id().await.map_err(|e| self.rpc_error(e))?;
            if actual != self.config.chain_id {
                return Err(FollowerError::WrongChain {
                    chain: self.config.name.clone(),
                    expected: self.config.chain_id,
                    actual,
                });
            }
            self.chain_checked = true;
        }
        if self.start_to_find {
            self.find_start().await?;
        }
        // While batches are queued, the follower stands at the end of the newest one.
        let (next, indexed_hash) = match self.in_flight.back() {
            Some(queued) => (queued.to + 1, queued.to_hash),
            None => {
                let progress = self
                    .store
                    .progress(self.config.chain_id)
                    .await
                    .map_err(|e| self.store_error(e))?
                    .expect("init_chain created the cursor");
                (progress.next_block, progress.indexed_hash)
            }
        };
        let limit = self.until_block.unwrap_or(u64::MAX);
        if next > limit {
            return match self.in_flight.is_empty() {
                true => Ok(Outcome::Done),
                false => self.complete_oldest().await,
            };
        }
        let (head_block, finalized) = match self.seen_head {
            Some((head, finalized, at))
                if next <= finalized
                    && at.elapsed() < Duration::from_millis(self.config.poll_interval_ms) =>
            {
                (head, finalized)
            }
            _ => {
                let Some(head) = self
                    .rpc
                    .header(BlockNumberOrTag::Latest)
                    .await
                    .map_err(|e| self.rpc_error(e))?
                else {
                    return Ok(Outcome::Retry);
                };
                let finalized = self.finalized(head.number).await?;
                self.seen_head = Some((head, finalized, std::time::Instant::now()));
                (head, finalized)
            }
        };
        let head = head_block.number;
        if next > finalized && !self.in_flight.is_empty() {
            // Past backfill: let the queued batches land before looking at the tip.
            return self.complete_oldest().await;
        }
        if next > head {
            // Nothing new, unless the blocks we hold were replaced (a reorg at equal or lower
            // height brings no new block to notice it by).
            let replaced =
                next > head + 1 || indexed_hash.is_some_and(|hash| hash != head_block.hash);
            if replaced {
                return self.undo_reorg(finalized).await;
            }
            self.writer
                .record_heads(self.config.chain_id, head, finalized)
                .await
                .map_err(|e| self.store_error(e))?;
            return Ok(Outcome::Synced { head });
        }
        // A cursor left inside the unfinalized window may have been replaced since. (A queued
        // batch ends at a finalized block whose header was read along with its logs.)
        if let Some(expected) = indexed_hash
            && self.in_flight.is_empty()
            && next > 0
            && next <= finalized
            && self
                .header(next - 1)
                .await?
                .is_none_or(|b| b.hash != expected)
        {
            return self.undo_reorg(finalized).await;
        }
        if next <= finalized {
            self.backfill(next, finalized.min(limit), finalized, head)
                .await
        } else {
            self.follow_tip(
                next,
                head.min(limit),
                indexed_hash,
                finalized,
                Some(head_block),
            )
            .await
        }
    }

    /// Starts the chain at its Identity Registry's deployment block.
    async fn find_start(&mut self) -> Result<(), FollowerError> {
        let identity = self.config.erc8004.as_ref().and_then(|e| e.identity);
        let start = match identity {
            Some(address) => deployment_block(&self.rpc, address)
                .await
                .map_err(|e| self.rpc_error(e))?
                .ok_or_else(|| FollowerError::NotDeployed {
                    chain: self.config.name.clone(),
                    address,
                })?,
            None => 0,
        };
        tracing::info!(target: "agentindex::follower", chain = %self.config.name, start, "start block found: the Identity Registry's deployment");
        self.writer
            .init_chain(self.config.chain_id, &self.config.name, start)
            .await
            .map_err(|e| self.store_error(e))?;
        self.config.start_block = StartBlock::At(start);
        self.sources = SourceMap::from_config(&self.config);
        self.start_to_find = false;
        Ok(())
    }

    /// Fetches ranges from `next` and queues them for the writer until the pipeline is full or
    /// `limit` is reached, then reports the oldest once it is written.
    async fn backfill(
        &mut self,
        mut next: u64,
        limit: u64,
        finalized: u64,
        head: u64,
    ) -> Result<Outcome, FollowerError> {
        while self.in_flight.len() < pipeline::PIPELINE_DEPTH && next <= limit {
            let (from, to) = self.range.next(next, limit);
            let Some((fetched, to, anchor)) = self.fetch(from, to, Some(limit)).await? else {
                break;
            };
            let anchor = match anchor {
                Some(anchor) => anchor,
                None => match self.header(to).await? {
                    Some(anchor) => anchor,
                    None => break,
                },
            };
            let batch = self
                .assemble(from, to, fetched, vec![anchor], finalized, head)
                .await?;
            self.submit(batch, head).await?;
            next = to + 1;
        }
        self.complete_oldest().await
    }

    async fn follow_tip(
        &mut self,
        next: u64,
        limit: u64,
        indexed_hash: Option<alloy::primitives::B256>,
        finalized: u64,
        head_block: Option<BlockRef>,
    ) -> Result<Outcome, FollowerError> {
        let head = head_block.map_or(limit, |b| b.number);
        let (from, to) = (next, limit.min(next + self.range.size().min(TIP_SPAN) - 1));
        // All headers at once (the RPC layer bounds how many are in flight); the head's was
        // just read and is not asked for again.
        let this = &*self;
        let requests = (from..=to).map(|number| async move {
            match head_block.filter(|head| head.number == number) {
                Some(head) => Ok(Some(head)),
                None => this.header(number).await,
            }
        });
        let mut headers: Vec<BlockRef> = futures::future::try_join_all(requests)
            .await?
            .into_iter()
            .map_while(|header| header)
            .collect();
        let Some(first) = headers.first() else {
            return Ok(Outcome::Retry);
        };
        if indexed_hash.is_some_and(|h| h != first.parent_hash) {
            return self.undo_reorg(finalized).await;
        }
        if headers.windows(2).any(|w| w[1].parent_hash != w[0].hash) {
            // The head moved while we read it; read again.
            return Ok(Outcome::Retry);
        }
        let to = headers.last().map_or(from, |b| b.number);
        let Some((fetched, to, _)) = self.fetch(from, to, None).await? else {
            return Ok(Outcome::Retry);
        };
        headers.truncate((to - from + 1) as usize);
        let consistent = fetched.logs.iter().chain(&fetched.payments).all(|log| {
            let (Some(number), Some(hash)) = (log.block_number, log.block_hash) else {
                return false;
            };
            headers
                .get((number - from) as usize)
                .is_some_and(|b| b.hash == hash)
        });
        if !consistent {
            return Ok(Outcome::Retry);
        }
        let batch = self
            .assemble(from, to, fetched, headers, finalized, head)
            .await?;
        self.submit(batch, head).await?;
        self.complete_oldest().await
    }

    /// Turns a fetched range into a batch for the writer, and starts watching what it
    /// discovered (later ranges need it before this batch is written).
    async fn assemble(
        &mut self,
        from: u64,
        to: u64,
        fetched: fetch::FetchedRange,
        window: Vec<BlockRef>,
        finalized: u64,
        head: u64,
    ) -> Result<Batch, FollowerError> {
        for (agent, block) in &fetched.new_agents {
            let entry = self.watched.agents.entry(*agent).or_insert(*block);
            *entry = (*entry).min(*block);
        }
        for (payee, block) in &fetched.new_payment_addresses {
            let entry = self
                .watched
                .payment_addresses
                .entry(*payee)
                .or_insert(*block);
            *entry = (*entry).min(*block);
        }
        let events = assemble::records(&self.rpc, &self.sources, fetched, &window)
            .await
            .map_err(|source| FollowerError::Assemble {
                chain: self.config.name.clone(),
                source,
            })?;
        Ok(Batch {
            chain: self.context.clone(),
            from_block: from,
            to_block: to,
            to_hash: window.last().filter(|b| b.number == to).map(|b| b.hash),
            events,
            window,
            window_from: (to + 1).saturating_sub(self.config.reorg_window),
            finalized,
            head,
            settles: to >= head || self.until_block.is_some_and(|until| to >= until),
        })
    }

    /// Fetches `[from, to]`, or the blocks from `from` that fit in one batch when the range holds
    /// more logs than that; returns them with the last block they cover and, in backfill, that
    /// block's header read at the same time (when the range was not cut). `None` when the
    /// provider wanted a smaller range (the range is now smaller).
    ///
    /// `backfill_until` is the last finalized block a backfill may reach: the ranges after this
    /// one up to it are read ahead when their requests allow (see [`ahead`]). `None` at the tip.
    async fn fetch(
        &mut self,
        from: u64,
        to: u64,
        backfill_until: Option<u64>,
    ) -> Result<Option<Fetched>, FollowerError> {
        let plan = self.costs.plan(
            to - from + 1,
            self.watched.agents.len(),
            self.watched.payment_addresses.len(),
            !self.sources.tokens.is_empty(),
        );
        let started = std::time::Instant::now();
        let (to, raw, anchor) = match self.take_ahead(from, plan) {
            Some(read) => (read.to, read.raw, Some(read.anchor)),
            None => {
                // Ranges end where a range read ahead starts, so they meet it.
                let to = match self.ahead.front() {
                    Some(read) => to.min(read.from - 1),
                    None => to,
                };
                let to = self.scan_bounded(plan, from, to);
                self.read(from, to, plan, backfill_until).await
            }
        };
        let request = self.range_request(plan);
        let fetched = match raw {
            Ok(raw) => fetch::resolve(&request, from, to, raw).await,
            Err(error) => Err(error),
        };
        tracing::debug!(target: "agentindex::follower", chain = %self.config.name, from, to, agents = plan.agents.label(), payments = plan.payments.label(), elapsed = ?started.elapsed(), "fetched");
        let fetched = fetched.map(|(fetched, observed)| {
            self.learn(plan, &observed);
            fetched
        });
        self.read_ahead = matches!(&fetched, Ok(f) if f.len() <= MAX_BATCH_LOGS || to == from);
        match fetched {
            Ok(mut fetched) if fetched.len() > MAX_BATCH_LOGS && to > from => {
                let count = fetched.len();
                let kept_to = fetched.keep_at_most(MAX_BATCH_LOGS).unwrap_or(to).min(to);
                self.range.limit_to(kept_to - from + 1);
                tracing::debug!(target: "agentindex::follower", chain = %self.config.name, from, to, logs = count, kept_to, "range too dense, keeping what fits");
                let anchor = match (anchor, kept_to == to) {
                    (Some(header), true) => header.map_err(|e| self.rpc_error(e))?,
                    _ => None,
                };
                Ok(Some((fetched, kept_to, anchor)))
            }
            Ok(fetched) => {
                self.range
                    .succeeded(to - from + 1, fetched.len() as f64 / MAX_BATCH_LOGS as f64);
                let anchor = anchor.transpose().map_err(|e| self.rpc_error(e))?.flatten();
                Ok(Some((fetched, to, anchor)))
            }
            Err(error) if error.kind.wants_smaller_range() => {
                let tried = to - from + 1;
                if self.range.shrink(tried, &error.kind) {
                    tracing::info!(target: "agentindex::follower", chain = %self.config.name, tried, next = self.range.size(), "narrowing the log range");
                    Ok(None)
                } else {
                    Err(FollowerError::RangeFloor {
                        chain: self.config.name.clone(),
                        block: from,
                        source: error,
                    })
                }
            }
            Err(error) => Err(self.rpc_error(error)),
        }
    }

    /// What a range of `plan` is fetched with, from the follower's current state.
    fn range_request(&self, plan: Plan) -> fetch::RangeRequest<'_> {
        fetch::RangeRequest {
            rpc: &self.rpc,
            sources: &self.sources,
            watched: &self.watched,
            payment_chunk: self.config.payment_address_chunk,
            plan,
        }
    }

    /// The end of a range starting at `from` whose scans, at the densities seen, bring at most
    /// [`MAX_SCANNED_LOGS`].
    fn scan_bounded(&self, plan: Plan, from: u64, to: u64) -> u64 {
        let density: f64 = [
            (plan.agents, Family::Agents),
            (plan.payments, Family::Payments),
        ]
        .into_iter()
        .filter(|(way, _)| *way == Way::Scan)
        .filter_map(|(_, family)| self.costs.density(family))
        .sum();
        if density <= 0.0 {
            return to;
        }
        let blocks = ((MAX_SCANNED_LOGS / density) as u64).max(1);
        to.min(from + blocks - 1)
    }

    /// Updates the cost model and the metrics from a fetched range.
    fn learn(&mut self, plan: Plan, observed: &strategy::Observed) {
        self.costs.observe(observed);
        let chain_id = self.config.chain_id;
        for (family, way) in [
            (Family::Agents, plan.agents),
            (Family::Payments, plan.payments),
        ] {
            metrics().fetch_way(chain_id, family.label(), way.label());
            if let Some(density) = self.costs.density(family) {
                metrics().scan_density(chain_id, family.label(), density);
            }
        }
    }

    async fn finalized(&self, head: u64) -> Result<u64, FollowerError> {
        Ok(match self.config.finality {
            Finality::Depth(depth) => head.saturating_sub(depth),
            Finality::Tag => match self.rpc.header(BlockNumberOrTag::Finalized).await {
                Ok(Some(block)) => block.number.min(head),
                Ok(None) => head.saturating_sub(FALLBACK_FINALITY_DEPTH),
                Err(error) if !error.kind.is_retryable() => {
                    head.saturating_sub(FALLBACK_FINALITY_DEPTH)
                }
                Err(error) => return Err(self.rpc_error(error)),
            },
        })
    }

    async fn header(&self, number: u64) -> Result<Option<BlockRef>, FollowerError> {
        self.rpc
            .header(BlockNumberOrTag::Number(number))
            .await
            .map_err(|e| self.rpc_error(e))
    }

    fn rpc_error(&self, source: RpcError) -> FollowerError {
        FollowerError::Rpc {
            chain: self.config.name.clone(),
            source,
        }
    }

    fn store_error(&self, source: StoreError) -> FollowerError {
        FollowerError::Store {
            chain: self.config.name.clone(),
            source,
        }
    }
}

/// Resolves once `shutdown` is true; never when its sender is gone (no stop can come then).
async fn stop_requested(shutdown: &mut watch::Receiver<bool>) {
    if shutdown.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}
