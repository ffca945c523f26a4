//! Reputation feeds made once and served many times. Computing the indexed block's feed reads
//! and scores every agent of a chain (seconds at 100,000 agents); reading a stored one copies
//! a file's worth of pages. So that no anonymous client can keep the database and a core busy:
//!
//! - a feed is kept while it is valid: the indexed block's while the database is unchanged
//!   (its version, like the response cache), a stored one while its digest is the stored one;
//!   in temporary files ([`crate::feed_spool`]) of at most `[api.caches] feed_cache_bytes`
//!   together, the least recently used dropped first; memory holds only their names and digests;
//! - feeds are made in two lanes, each one at a time: the indexed block's ([`Lane::Newest`]),
//!   and the stored ones ([`Lane::Stored`]); a request for the feed being made in its lane waits
//!   for it, a request for another feed not kept in a busy lane is refused with 503 and
//!   `Retry-After` ([`FeedCacheError::Busy`]), so reading stored feeds never holds up the
//!   newest;
//! - one client may take [`FEEDS_PER_CLIENT`] feeds at once and then one per
//!   `[api.caches] feed_timeout_secs` ([`FeedCache::charge`]; [`FeedCacheError::ClientShare`],
//!   429), counted per network (an IPv6 client's /48), whether the feed is made for it or was
//!   kept: a feed is hundreds of megabytes at 100,000 agents, so neither a lane nor the server's
//!   time sending them is a single client's to take; a client past its share is refused before
//!   a feed not kept is made for it ([`FeedCache::get`]), so it sets no lane to work; the
//!   operator's `unlimited_clients` are not counted;
//! - each runs on a thread of its own at the lowest priority, off the threads that answer
//!   requests (its encoding is CPU work they must not wait behind), is not stopped when its
//!   client hangs up, and is stopped after `[api.caches] feed_timeout_secs`
//!   ([`FeedCacheError::TimedOut`]).

mod shares;

use crate::client::ClientKey;
use crate::client_error::{self, Hidden};
use crate::feed_spool::{Feed, FeedWriter};
use crate::lru::Lru;
use agentindex_indexer::store::low_priority;
use prometheus_client::metrics::counter::Counter;
use shares::Shares;
use std::fmt::Display;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Seconds a client refused because a lane is busy is told to wait.
pub(crate) const BUSY_RETRY_AFTER_SECS: u64 = 5;
/// Feeds one client may take in a row before it may take only one per period.
pub const FEEDS_PER_CLIENT: u32 = 2;
/// Bytes a kept feed costs beyond its file (its entry, name and digest in memory).
const ENTRY_OVERHEAD: usize = 256;

/// Why a feed could not be had from the cache.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FeedCacheError {
    /// Another feed of the same lane is being computed.
    #[error(
        "the feed of block {computing} is being computed and one {lane} feed is computed at a \
         time; ask again in {BUSY_RETRY_AFTER_SECS} s"
    )]
    Busy {
        /// The lane.
        lane: Lane,
        /// The block whose feed is being computed.
        computing: u64,
    },
    /// The client took its share of feeds.
    #[error(
        "{client} has taken its share of reputation feeds ({FEEDS_PER_CLIENT} in a row, then \
         one every {period_secs} s); ask again in {retry_after_secs} s, or send If-None-Match \
         with the ETag of a feed already taken"
    )]
    ClientShare {
        /// The client.
        client: ClientKey,
        /// `[api.caches] feed_timeout_secs`.
        period_secs: u64,
        /// Seconds until it may start another.
        retry_after_secs: u64,
    },
    /// The computation ran past its time.
    #[error("computing the feed of block {block} took longer than {limit:?} and was stopped")]
    TimedOut {
        /// The block asked for.
        block: u64,
        /// `[api.caches] feed_timeout_secs`.
        limit: Duration,
    },
    /// The computation failed (the details are in the log, under the id).
    #[error("{0}")]
    Failed(Hidden),
}

impl FeedCacheError {
    /// Seconds the client should wait before asking again, when waiting helps.
    pub(crate) fn retry_after_secs(&self) -> Option<u64> {
        match self {
            FeedCacheError::Busy { .. } | FeedCacheError::TimedOut { .. } => {
                Some(BUSY_RETRY_AFTER_SECS)
            }
            FeedCacheError::ClientShare {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            FeedCacheError::Failed(_) => None,
        }
    }
}

/// Which feed: chain, block, and whether the stored one or the latest (which differ at a
/// stored boundary that is also the indexed block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FeedKey {
    /// The chain.
    pub(crate) chain_id: u64,
    /// The block the feed is as of.
    pub(crate) block: u64,
    /// A stored feed (else the latest).
    pub(crate) stored: bool,
}

/// The two lanes feeds are made in, one at a time each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// The feed of a chain's indexed block (what a request without `block` asks for).
    Newest,
    /// A feed the indexer stored, read back.
    Stored,
}

impl Lane {
    /// Its place in [`FeedCache`]'s `running`.
    fn index(self) -> usize {
        match self {
            Lane::Newest => 0,
            Lane::Stored => 1,
        }
    }
}

impl std::fmt::Display for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Lane::Newest => "newest-block",
            Lane::Stored => "stored",
        })
    }
}

type Outcome = Option<Result<Arc<Feed>, FeedCacheError>>;

/// The computation in flight in one lane.
struct Running {
    key: FeedKey,
    version: i64,
    outcome: watch::Receiver<Outcome>,
}

/// The cache.
pub(crate) struct FeedCache {
    /// Feeds with the version they are valid at (see [`FeedCache::get`]).
    kept: Mutex<Lru<FeedKey, (i64, Arc<Feed>)>>,
    /// The computation in flight per lane: [newest, stored].
    running: Mutex<[Option<Running>; 2]>,
    /// Each client's network's share of feeds (an IPv6 client's /48, so its /64s share one;
    /// see [`crate::client`]).
    shares: Shares,
    /// The operator's own clients, never counted.
    unlimited: Vec<agentindex_indexer::config::IpNetwork>,
    timeout: Duration,
    /// Counts computations started (`/metrics`).
    computations: Counter,
}

impl std::fmt::Debug for FeedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedCache")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl FeedCache {
    /// A cache of at most `max_bytes` of feeds (in files), each computed in at most `timeout`,
    /// counting its computations in `computations`; `unlimited` clients take feeds at will.
    pub(crate) fn new(
        max_bytes: usize,
        timeout: Duration,
        computations: Counter,
        unlimited: Vec<agentindex_indexer::config::IpNetwork>,
    ) -> Self {
        Self {
            kept: Mutex::new(Lru::new(max_bytes)),
            running: Mutex::new([None, None]),
            shares: Shares::new(timeout),
            unlimited,
            timeout,
            computations,
        }
    }

    /// Bytes of feeds held (in files), for `/metrics`.
    pub(crate) fn bytes(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).weight()
    }

    /// The feed `key` at `version`, asked for by `client` in `lane`: kept, or being computed
    /// (waited for), or computed now by `compute` when the lane is free. `compute` writes every
    /// line of the feed into the writer it is given and hands the writer back. A feed kept at
    /// another version is never served (the newest lane passes the database's version; a
    /// stored feed one of its digest). A client that could not take the feed now gets a kept
    /// one (it may hold it already: `If-None-Match`), but nothing is made or waited for on its
    /// behalf; taking it is [`FeedCache::charge`]'s.
    pub(crate) async fn get<F, W, E>(
        self: &Arc<Self>,
        client: ClientKey,
        key: FeedKey,
        version: i64,
        lane: Lane,
        compute: F,
    ) -> Result<Arc<Feed>, FeedCacheError>
    where
        F: FnOnce(FeedWriter) -> W + Send + 'static,
        W: Future<Output = Result<FeedWriter, E>> + Send + 'static,
        E: Display + Send + 'static,
    {
        if let Some(feed) = self.kept(key, version) {
            return Ok(feed);
        }
        self.may_take(client)?;
        let mut outcome = {
            let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            let slot = &mut running[lane.index()];
            match slot {
                Some(other) if other.key == key && other.version == version => {
                    other.outcome.clone()
                }
                Some(other) => {
                    return Err(FeedCacheError::Busy {
                        lane,
                        computing: other.key.block,
                    });
                }
                None => {
                    // Kept between the first look and taking the lock.
                    if let Some(feed) = self.kept(key, version) {
                        return Ok(feed);
                    }
                    let (done, outcome) = watch::channel(None);
                    *slot = Some(Running {
                        key,
                        version,
                        outcome: outcome.clone(),
                    });
                    tokio::spawn(Arc::clone(self).compute(key, version, lane, compute, done));
                    outcome
                }
            }
        };
        let finished = outcome.wait_for(Option::is_some).await;
        match finished.as_deref() {
            Ok(Some(result)) => result.clone(),
            // The task ended without a word: it panicked, and its guard logged nothing.
            _ => Err(FeedCacheError::Failed(client_error::hide(
                "computing the reputation feed",
                &"the computation ended without an outcome",
            ))),
        }
    }

    /// Counts a feed `client` takes now against its share, or refuses it.
    pub(crate) fn charge(&self, client: ClientKey) -> Result<(), FeedCacheError> {
        if self.is_unlimited(client) {
            return Ok(());
        }
        self.shares
            .take(client.network(), Instant::now())
            .map_err(|wait| self.share_spent(client, wait))
    }

    /// Refuses `client` if it could not take a feed now, taking nothing.
    fn may_take(&self, client: ClientKey) -> Result<(), FeedCacheError> {
        if self.is_unlimited(client) {
            return Ok(());
        }
        self.shares
            .may_take(client.network(), Instant::now())
            .map_err(|wait| self.share_spent(client, wait))
    }

    fn is_unlimited(&self, client: ClientKey) -> bool {
        self.unlimited
            .iter()
            .any(|network| network.contains(client.address()))
    }

    fn share_spent(&self, client: ClientKey, wait: Duration) -> FeedCacheError {
        FeedCacheError::ClientShare {
            client,
            period_secs: self.timeout.as_secs(),
            retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
        }
    }

    /// The feed `key` if it is kept at `version`.
    pub(crate) fn kept(&self, key: FeedKey, version: i64) -> Option<Arc<Feed>> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.get(&key) {
            Some((at, feed)) if *at == version => Some(Arc::clone(feed)),
            _ => None,
        }
    }

    async fn compute<F, W, E>(
        self: Arc<Self>,
        key: FeedKey,
        version: i64,
        lane: Lane,
        compute: F,
        done: watch::Sender<Outcome>,
    ) where
        F: FnOnce(FeedWriter) -> W + Send + 'static,
        W: Future<Output = Result<FeedWriter, E>> + Send + 'static,
        E: Display + Send + 'static,
    {
        // Clears the lane however this task ends, so one failure never blocks it.
        let clear = ClearRunning(&self, lane);
        self.computations.inc();
        let started = Instant::now();
        let limit = self.timeout;
        let runtime = tokio::runtime::Handle::current();
        let (sent, written) = tokio::sync::oneshot::channel();
        // A thread of its own, at the lowest priority: the encoding between reads is CPU work
        // that requests must never wait behind, so it gets only the time they leave. The
        // timeout drops the computation at its next read.
        let spawned = std::thread::Builder::new()
            .name("reputation-feed".into())
            .spawn(move || {
                agentindex_indexer::priority::lower_this_thread("the reputation feed's thread");
                // Its reads run on the store's low-priority connections too.
                let outcome = runtime.block_on(low_priority::scope(async move {
                    let writer = FeedWriter::create().map_err(|e| hidden(&e))?;
                    match tokio::time::timeout(limit, compute(writer)).await {
                        Ok(Ok(writer)) => writer.finish().map(Feed::from).map_err(|e| hidden(&e)),
                        Ok(Err(error)) => Err(hidden(&error)),
                        Err(_) => Err(FeedCacheError::TimedOut {
                            block: key.block,
                            limit,
                        }),
                    }
                }));
                let _ = sent.send(outcome);
            });
        let written = match spawned {
            Ok(_) => written
                .await
                .unwrap_or_else(|_| Err(hidden(&"the feed's thread ended without an outcome"))),
            Err(error) => Err(hidden(&error)),
        };
        let result = written.map(|feed| {
            let feed = Arc::new(feed);
            self.keep(key, version, Arc::clone(&feed));
            feed
        });
        if let Err(FeedCacheError::TimedOut { .. }) = &result {
            tracing::warn!(target: "agentindex::api", chain_id = key.chain_id, block = key.block, ?limit, "a feed computation timed out");
        }
        tracing::info!(target: "agentindex::api", chain_id = key.chain_id, block = key.block, %lane, took = ?started.elapsed(), ok = result.is_ok(), "computed a reputation feed");
        // The lane is free (and the feed kept) before anyone waiting hears of the outcome, so a
        // waiter's next request never finds the lane still taken by a finished computation.
        drop(clear);
        done.send_replace(Some(result));
    }

    fn keep(&self, key: FeedKey, version: i64, feed: Arc<Feed>) {
        let weight = usize::try_from(feed.len)
            .unwrap_or(usize::MAX)
            .saturating_add(ENTRY_OVERHEAD);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(key, (version, feed), weight);
    }
}

/// A failed computation as clients see it (the details logged under its id).
fn hidden(error: &dyn Display) -> FeedCacheError {
    FeedCacheError::Failed(client_error::hide("computing the reputation feed", error))
}

struct ClearRunning<'a>(&'a FeedCache, Lane);

impl Drop for ClearRunning<'_> {
    fn drop(&mut self) {
        let mut running = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        running[self.1.index()] = None;
    }
}

#[cfg(test)]
mod tests;
