//! The feed keeper: stores each chain's reputation feed at its newest final epoch boundary (the
//! last multiple of `[reputation.trust] interval_blocks` at or below the finalized block), so
//! `serve` hands out past feeds by reading them. It runs beside the followers once a chain has
//! caught up to its finalized block (a backfill passes thousands of boundaries; only the one
//! reached matters) and its reputation is settled there, and keeps the newest
//! `[reputation] feeds_kept` feeds of each chain.
//!
//! A feed is computed on a thread of its own at the lowest priority, reading the store's
//! low-priority pool, into a temporary file; then its pages go through the writer like any other
//! write, and the header last, which makes it visible (refused if a page is missing or the
//! chain was rewound below the block meanwhile). A boundary whose lines cannot be written is
//! logged and left until the next boundary; a store that fails is tried again after a pause.

use super::spool::{SpoolWriter, Spooled};
use super::{FeedLinesError, Snapshot, write_lines};
use crate::priority;
use crate::store::StoreRead;
use crate::store::low_priority;
use crate::store::{ChainContext, ChainContexts, FeedWrite, Store, StoreError, StoredFeed, Writer};
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Seek};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// Pause between two looks at the chains.
const IDLE_PAUSE: Duration = Duration::from_secs(1);
/// Pause after a feed could not be stored (the store failed, or a rewind came between its
/// writes) before it is tried again.
const ERROR_PAUSE: Duration = Duration::from_secs(30);
/// Bytes of whole lines per stored page (the last page of a feed may be shorter).
const PAGE_BYTES: usize = 1 << 20;

/// Why a feed could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum KeeperError {
    /// Its lines could not be computed or spooled.
    #[error("computing the feed of chain {chain_id} at block {block}: {source}")]
    Lines {
        /// The chain.
        chain_id: u64,
        /// The boundary.
        block: u64,
        /// What failed.
        source: FeedLinesError,
    },
    /// Its temporary file could not be read back.
    #[error("reading back the feed of chain {chain_id} at block {block}: {source}")]
    Spool {
        /// The chain.
        chain_id: u64,
        /// The boundary.
        block: u64,
        /// What failed.
        source: io::Error,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The computation's thread could not be started.
    #[error("starting the feed keeper's thread: {0}")]
    Thread(io::Error),
    /// The keeper was stopped during the computation.
    #[error("stopped")]
    Stopped,
}

/// Stores feeds at epoch boundaries.
pub struct FeedKeeper {
    store: Store,
    writer: Writer,
    contexts: Arc<ChainContexts>,
    kept: u32,
    /// The boundary whose feed failed last, per chain: not tried again.
    failed: Mutex<BTreeMap<u64, u64>>,
}

impl std::fmt::Debug for FeedKeeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedKeeper")
            .field("kept", &self.kept)
            .finish_non_exhaustive()
    }
}

impl FeedKeeper {
    /// A keeper of `kept` feeds per chain of `contexts` (0: it stores none).
    pub fn new(store: Store, writer: Writer, contexts: Arc<ChainContexts>, kept: u32) -> Self {
        Self {
            store,
            writer,
            contexts,
            kept,
            failed: Mutex::new(BTreeMap::new()),
        }
    }

    /// Stores due feeds until `stop` turns true (a computation under way is dropped then).
    /// First drops each chain's feeds beyond `kept` (all of them when it is 0), so lowering
    /// `[reputation] feeds_kept` takes effect at the next start.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        for &chain_id in self.contexts.keys() {
            let kept = self.kept;
            if let Err(error) = self
                .writer
                .store_feed(FeedWrite::Prune { chain_id, kept })
                .await
            {
                tracing::warn!(target: "agentindex::feeds", %error, chain_id, "dropping stored reputation feeds beyond feeds_kept");
            }
        }
        if self.kept == 0 {
            return;
        }
        loop {
            let pause = match self.step(&stop).await {
                Ok(_) => IDLE_PAUSE,
                Err(KeeperError::Stopped) => return,
                Err(error) => {
                    tracing::warn!(target: "agentindex::feeds", %error, "storing a reputation feed");
                    ERROR_PAUSE
                }
            };
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => return,
                () = tokio::time::sleep(pause) => {}
            }
        }
    }

    /// Stores the due feed of every chain; returns those stored, by chain id.
    pub async fn step(
        &self,
        stop: &watch::Receiver<bool>,
    ) -> Result<Vec<(u64, StoredFeed)>, KeeperError> {
        let statuses = self.store.statuses().await?;
        let mut stored = Vec::new();
        for status in statuses {
            let Some(chain) = self.contexts.get(&status.chain_id) else {
                continue;
            };
            let settled = status.reputation_settled_block.unwrap_or(0);
            let caught_up = status.indexed_block.unwrap_or(0).min(settled);
            if caught_up < status.finalized_block {
                continue;
            }
            let boundary = chain.rules.trust.epoch_of(status.finalized_block);
            if boundary == 0 || self.failed_at(chain.chain_id) == Some(boundary) {
                continue;
            }
            let newest = self.store.stored_feeds(chain.chain_id).await?;
            if newest.first().is_some_and(|feed| feed.block >= boundary) {
                continue;
            }
            match self.store_at(chain, boundary, stop).await {
                Ok(feed) => stored.push((chain.chain_id, feed)),
                Err(error @ KeeperError::Lines { .. }) => {
                    // A line that cannot be written fails the same way every time: left until
                    // the next boundary. Anything else is tried again after a pause.
                    self.failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(chain.chain_id, boundary);
                    return Err(error);
                }
                Err(error) => return Err(error),
            }
        }
        Ok(stored)
    }

    fn failed_at(&self, chain_id: u64) -> Option<u64> {
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.get(&chain_id).copied()
    }

    /// Computes the feed of `chain` at `block` and stores it, whatever the chain's progress.
    pub async fn store_at(
        &self,
        chain: &Arc<ChainContext>,
        block: u64,
        stop: &watch::Receiver<bool>,
    ) -> Result<StoredFeed, KeeperError> {
        let chain_id = chain.chain_id;
        let started = std::time::Instant::now();
        let spooled = self.compute(chain, block, stop.clone()).await?;
        let feed = StoredFeed {
            block,
            agents: spooled.lines,
            bytes: spooled.len,
            sha256: spooled.sha256_hex(),
        };
        self.writer
            .store_feed(FeedWrite::Begin { chain_id })
            .await?;
        let mut reader = BufReader::new(spooled.file);
        let spool_error = |source| KeeperError::Spool {
            chain_id,
            block,
            source,
        };
        reader.rewind().map_err(spool_error)?;
        let mut page: u64 = 0;
        loop {
            if *stop.borrow() {
                return Err(KeeperError::Stopped);
            }
            let mut lines = Vec::with_capacity(PAGE_BYTES + 4096);
            while lines.len() < PAGE_BYTES {
                if reader.read_until(b'\n', &mut lines).map_err(spool_error)? == 0 {
                    break;
                }
            }
            if lines.is_empty() {
                break;
            }
            let lines = String::from_utf8(lines)
                .map_err(|e| spool_error(io::Error::new(io::ErrorKind::InvalidData, e)))?;
            self.writer
                .store_feed(FeedWrite::Page {
                    chain_id,
                    block,
                    page,
                    lines,
                })
                .await?;
            page += 1;
        }
        self.writer
            .store_feed(FeedWrite::Finish {
                feed: feed.clone(),
                chain_id,
                pages: page,
                kept: self.kept.max(1),
            })
            .await?;
        tracing::info!(target: "agentindex::feeds", chain_id, block, agents = feed.agents, bytes = feed.bytes, took = ?started.elapsed(), "stored a reputation feed");
        Ok(feed)
    }

    /// The feed's lines, in a temporary file, computed on a lowered thread of its own.
    async fn compute(
        &self,
        chain: &Arc<ChainContext>,
        block: u64,
        mut stop: watch::Receiver<bool>,
    ) -> Result<Spooled, KeeperError> {
        let (store, chain) = (self.store.clone(), Arc::clone(chain));
        let runtime = tokio::runtime::Handle::current();
        let (sent, outcome) = oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("feed-keeper".into())
            .spawn(move || {
                priority::lower_this_thread("the feed keeper's thread");
                let work = low_priority::scope(spool(&store, &chain, block));
                let result = runtime.block_on(async move {
                    tokio::select! {
                        result = work => result,
                        _ = stop.wait_for(|stopped| *stopped) => Err(KeeperError::Stopped),
                    }
                });
                let _ = sent.send(result);
            });
        if let Err(source) = spawned {
            return Err(KeeperError::Thread(source));
        }
        outcome.await.unwrap_or(Err(KeeperError::Stopped))
    }
}

/// Writes the feed's lines into a temporary file.
async fn spool(store: &Store, chain: &ChainContext, block: u64) -> Result<Spooled, KeeperError> {
    let chain_id = chain.chain_id;
    let lines_error = |source| KeeperError::Lines {
        chain_id,
        block,
        source,
    };
    let mut out = SpoolWriter::create().map_err(|e| lines_error(FeedLinesError::Write(e)))?;
    let snapshot = Snapshot::AsOf {
        block,
        rules: &chain.rules,
    };
    write_lines(store, chain_id, snapshot, |line| out.write_line(line))
        .await
        .map_err(lines_error)?;
    out.finish()
        .map_err(|e| lines_error(FeedLinesError::Write(e)))
}
