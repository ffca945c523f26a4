//! Reputation feeds computed once and served many times. Computing a feed reads every agent of a
//! chain as of a block, so an anonymous client asking for block after block could keep the
//! database and a core busy; here:
//!
//! - a computed feed is kept while the database is unchanged (keyed by chain and block, valid at
//!   the database version it was computed at, like the response cache), in at most
//!   `[api.caches] feed_cache_bytes`, the least recently used dropped first;
//! - one feed is computed at a time: a request for the feed being computed waits for it, a
//!   request for another uncached feed is refused with 503 and `Retry-After`
//!   ([`FeedCacheError::Busy`]);
//! - a computation runs in its own task (a client that hangs up does not waste it) and is stopped
//!   after `[api.caches] feed_timeout_secs` ([`FeedCacheError::TimedOut`]).
//!
//! The body is held whole: its digest goes in a header before the body, and a kept body is
//! served without copying.

use crate::client_error::{self, Hidden};
use crate::lru::VersionedLru;
use axum::body::Bytes;
use prometheus_client::metrics::counter::Counter;
use sha2::{Digest, Sha256};
use std::fmt::Display;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// Seconds a client refused because another feed is being computed is told to wait.
pub(crate) const BUSY_RETRY_AFTER_SECS: u64 = 5;
/// Bytes a kept feed costs beyond its body.
const ENTRY_OVERHEAD: usize = 256;

/// Why a feed could not be had from the cache.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FeedCacheError {
    /// Another feed is being computed.
    #[error(
        "the feed of block {computing} is being computed and one feed is computed at a time; \
         ask again in {BUSY_RETRY_AFTER_SECS} s (the indexed block's feed is usually ready)"
    )]
    Busy {
        /// The block whose feed is being computed.
        computing: u64,
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

/// A computed feed.
#[derive(Debug)]
pub(crate) struct Feed {
    /// One canonical JSON line per agent.
    pub(crate) body: Bytes,
    /// SHA-256 of the body.
    pub(crate) digest: [u8; 32],
}

/// Which feed: chain and block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FeedKey {
    /// The chain.
    pub(crate) chain_id: u64,
    /// The block the feed is as of.
    pub(crate) block: u64,
}

type Outcome = Option<Result<Arc<Feed>, FeedCacheError>>;

/// The computation in flight.
struct Running {
    key: FeedKey,
    version: i64,
    outcome: watch::Receiver<Outcome>,
}

/// The cache.
pub(crate) struct FeedCache {
    /// Feeds at the database version they were computed at.
    kept: Mutex<VersionedLru<FeedKey, Arc<Feed>>>,
    running: Mutex<Option<Running>>,
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
    /// A cache of at most `max_bytes` of feeds, each computed in at most `timeout`, counting
    /// its computations in `computations`.
    pub(crate) fn new(max_bytes: usize, timeout: Duration, computations: Counter) -> Self {
        Self {
            kept: Mutex::new(VersionedLru::new(max_bytes)),
            running: Mutex::new(None),
            timeout,
            computations,
        }
    }

    /// Bytes of feeds held, for `/metrics`.
    pub(crate) fn bytes(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).weight()
    }

    /// The feed `key` at database `version`: kept, or being computed (waited for), or computed
    /// now by `compute` when nothing else is.
    pub(crate) async fn get<F, E>(
        self: &Arc<Self>,
        key: FeedKey,
        version: i64,
        compute: F,
    ) -> Result<Arc<Feed>, FeedCacheError>
    where
        F: Future<Output = Result<Vec<u8>, E>> + Send + 'static,
        E: Display + Send + 'static,
    {
        if let Some(feed) = self.kept(key, version) {
            return Ok(feed);
        }
        let mut outcome = {
            let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            match &*running {
                Some(other) if other.key == key && other.version == version => {
                    other.outcome.clone()
                }
                Some(other) => {
                    return Err(FeedCacheError::Busy {
                        computing: other.key.block,
                    });
                }
                None => {
                    // Kept between the first look and taking the lock.
                    if let Some(feed) = self.kept(key, version) {
                        return Ok(feed);
                    }
                    let (done, outcome) = watch::channel(None);
                    *running = Some(Running {
                        key,
                        version,
                        outcome: outcome.clone(),
                    });
                    tokio::spawn(Arc::clone(self).compute(key, version, compute, done));
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

    fn kept(&self, key: FeedKey, version: i64) -> Option<Arc<Feed>> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(&key, version).cloned()
    }

    async fn compute<F, E>(
        self: Arc<Self>,
        key: FeedKey,
        version: i64,
        compute: F,
        done: watch::Sender<Outcome>,
    ) where
        F: Future<Output = Result<Vec<u8>, E>> + Send + 'static,
        E: Display + Send + 'static,
    {
        // Clears `running` however this task ends, so one failure never blocks the feed.
        let _clear = ClearRunning(&self);
        self.computations.inc();
        let started = std::time::Instant::now();
        let result = match tokio::time::timeout(self.timeout, compute).await {
            Ok(Ok(body)) => {
                let digest = Sha256::digest(&body).into();
                let feed = Arc::new(Feed {
                    body: Bytes::from(body),
                    digest,
                });
                self.keep(key, version, Arc::clone(&feed));
                Ok(feed)
            }
            Ok(Err(error)) => Err(FeedCacheError::Failed(client_error::hide(
                "computing the reputation feed",
                &error,
            ))),
            Err(_) => {
                tracing::warn!(target: "agentindex::api", chain_id = key.chain_id, block = key.block, limit = ?self.timeout, "a feed computation timed out");
                Err(FeedCacheError::TimedOut {
                    block: key.block,
                    limit: self.timeout,
                })
            }
        };
        tracing::info!(target: "agentindex::api", chain_id = key.chain_id, block = key.block, took = ?started.elapsed(), ok = result.is_ok(), "computed a reputation feed");
        done.send_replace(Some(result));
    }

    fn keep(&self, key: FeedKey, version: i64, feed: Arc<Feed>) {
        let weight = feed.body.len() + ENTRY_OVERHEAD;
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(key, version, feed, weight);
    }
}

struct ClearRunning<'a>(&'a FeedCache);

impl Drop for ClearRunning<'_> {
    fn drop(&mut self) {
        *self.0.running.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::oneshot;

    const AT: FeedKey = FeedKey {
        chain_id: 1,
        block: 10,
    };

    #[tokio::test]
    async fn two_requests_for_one_feed_compute_it_once_and_another_waits_its_turn() {
        let cache = Arc::new(FeedCache::new(
            1 << 20,
            Duration::from_secs(30),
            Counter::default(),
        ));
        let computed = Arc::new(AtomicUsize::new(0));
        let (release, released) = oneshot::channel::<()>();
        let count = Arc::clone(&computed);
        let first = tokio::spawn({
            let cache = Arc::clone(&cache);
            async move {
                cache
                    .get(AT, 1, async move {
                        count.fetch_add(1, Ordering::SeqCst);
                        released.await.ok();
                        Ok::<_, String>(b"line\n".to_vec())
                    })
                    .await
            }
        });
        // The first computation is running once `running` holds it.
        while cache.running.lock().unwrap().is_none() {
            tokio::task::yield_now().await;
        }
        let count = Arc::clone(&computed);
        let second = tokio::spawn({
            let cache = Arc::clone(&cache);
            async move {
                cache
                    .get(AT, 1, async move {
                        count.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, String>(b"other\n".to_vec())
                    })
                    .await
            }
        });
        let other_block = FeedKey { block: 9, ..AT };
        let busy = cache
            .get(other_block, 1, async { Ok::<_, String>(Vec::new()) })
            .await;
        assert!(
            matches!(busy, Err(FeedCacheError::Busy { computing: 10 })),
            "{busy:?}"
        );
        release.send(()).unwrap();
        let (first, second) = (
            first.await.unwrap().unwrap(),
            second.await.unwrap().unwrap(),
        );
        assert_eq!(&first.body[..], b"line\n");
        assert_eq!(
            &second.body[..],
            b"line\n",
            "the second got the first's feed"
        );
        assert_eq!(computed.load(Ordering::SeqCst), 1);
        let again = cache
            .get(AT, 1, async { Ok::<_, String>(b"recomputed\n".to_vec()) })
            .await
            .unwrap();
        assert_eq!(&again.body[..], b"line\n", "kept");
        let changed = cache
            .get(AT, 2, async { Ok::<_, String>(b"new\n".to_vec()) })
            .await
            .unwrap();
        assert_eq!(&changed.body[..], b"new\n", "a changed database recomputes");
    }

    #[tokio::test]
    async fn a_slow_computation_is_stopped_and_a_failure_is_hidden_then_the_next_one_runs() {
        let cache = Arc::new(FeedCache::new(
            1 << 20,
            Duration::from_millis(50),
            Counter::default(),
        ));
        let slow = cache
            .get(AT, 1, async {
                std::future::pending::<()>().await;
                Ok::<_, String>(Vec::new())
            })
            .await;
        assert!(
            matches!(slow, Err(FeedCacheError::TimedOut { block: 10, .. })),
            "{slow:?}"
        );
        let failed = cache
            .get(AT, 1, async {
                Err::<Vec<u8>, _>("no such table: agent_reputation")
            })
            .await
            .unwrap_err();
        let message = failed.to_string();
        assert!(
            message.contains("error id") && !message.contains("agent_reputation"),
            "{message}"
        );
        let ok = cache
            .get(AT, 1, async { Ok::<_, String>(b"x\n".to_vec()) })
            .await;
        assert!(ok.is_ok(), "nothing is left running: {ok:?}");
    }

    #[tokio::test]
    async fn kept_feeds_stay_within_their_bytes() {
        let cache = Arc::new(FeedCache::new(
            4096,
            Duration::from_secs(30),
            Counter::default(),
        ));
        for block in 0..20 {
            let key = FeedKey { block, ..AT };
            cache
                .get(key, 1, async { Ok::<_, String>(vec![b'x'; 1000]) })
                .await
                .unwrap();
            assert!(cache.bytes() <= 4096, "{}", cache.bytes());
        }
        assert!(cache.bytes() > 0);
    }
}
