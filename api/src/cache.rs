//! A cache of GraphQL query responses, valid while the database is unchanged: each entry carries
//! the database's version it was computed at (SQLite's `data_version`; on PostgreSQL the
//! position of its write-ahead log, or of the replay on a streaming replica), and a commit by any
//! other connection (the indexer's writer, in this process or on another machine) changes that
//! number, so a stale answer is never served. Dashboards and SDKs that ask the same question
//! repeatedly get it from memory.
//!
//! The cache is bounded in bytes (`[api.caches] response_cache_bytes`, keys and bodies counted),
//! dropping the least recently used answers first, and its keys ([`CacheKey`]) are bounded in
//! size, so no stream of distinct questions grows it past its bound.

use crate::cache_key::CacheKey;
use crate::lru::VersionedLru;
use agentindex_indexer::store::{Dialect, low_priority};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Mutex;

/// Largest response body kept: larger answers are rare and would crowd out many small ones.
const MAX_BODY: usize = 256 * 1024;
/// Bytes an entry costs beyond its key and body (the map's and the order's bookkeeping), so a
/// flood of tiny answers is bounded too.
const ENTRY_OVERHEAD: usize = 128;

/// The cache.
#[derive(Debug)]
pub struct ResponseCache {
    pool: AnyPool,
    /// The runtime the cache was made on (the server's own), where a probe asked for from the
    /// low-priority lane is run: the probe's lock is one every request takes, and a lowered
    /// thread must never hold it.
    main: Option<tokio::runtime::Handle>,
    /// One connection reserved for reading `data_version` (the number is per connection), and
    /// the newest version it read.
    probe: Mutex<Probe>,
    /// Probes started so far: the number of the next one, less one.
    started: AtomicU64,
    /// Bodies by key, at the database version they were computed at.
    entries: std::sync::Mutex<VersionedLru<CacheKey, Arc<[u8]>>>,
}

impl ResponseCache {
    /// A cache over the database `pool` reads, holding at most `max_bytes` of keys and bodies.
    pub fn new(pool: AnyPool, max_bytes: usize) -> Self {
        Self {
            pool,
            main: tokio::runtime::Handle::try_current().ok(),
            probe: Mutex::new(Probe::default()),
            started: AtomicU64::new(0),
            entries: std::sync::Mutex::new(VersionedLru::new(max_bytes)),
        }
    }

    /// The database's current version, as this cache's probe connection sees it. Asked for
    /// inside a low-priority scope, the probe runs on the server's own runtime.
    pub async fn version(self: &Arc<Self>) -> sqlx::Result<i64> {
        match &self.main {
            Some(main) if low_priority::in_scope() => {
                let cache = Arc::clone(self);
                main.spawn(async move { cache.probe().await })
                    .await
                    .map_err(|e| sqlx::Error::Io(std::io::Error::other(e)))?
            }
            _ => self.probe().await,
        }
    }

    /// Reads the version, or hands back one read by a probe that started after this call did:
    /// that read sees every commit this one would. Every request asks, and one at a time on the
    /// one connection each would queue behind all those before it; this way requests that
    /// arrive while a probe runs share the next one, so none waits for more than two.
    async fn probe(&self) -> sqlx::Result<i64> {
        let arrived_after = self.started.load(Ordering::SeqCst);
        let mut probe = self.probe.lock().await;
        if let Some((number, version)) = probe.newest
            && number > arrived_after
        {
            return Ok(version);
        }
        let number = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        if probe.connection.is_none() {
            probe.connection = Some(self.pool.acquire().await?);
        }
        let conn: &mut AnyConnection = probe.connection.as_mut().expect("just set");
        let sql = match Dialect::of(conn) {
            Dialect::Sqlite => "PRAGMA data_version",
            Dialect::Postgres => {
                "SELECT CAST((CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                                   ELSE pg_current_wal_lsn() END) - '0/0' AS BIGINT)"
            }
        };
        let version = sqlx::query_scalar(sql).fetch_one(conn).await?;
        probe.newest = Some((number, version));
        Ok(version)
    }

    /// The response cached for `key` at `version`.
    pub(crate) fn get(&self, key: &CacheKey, version: i64) -> Option<Vec<u8>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.get(key, version).map(|body| body.to_vec())
    }

    /// Keeps `body` as the response to `key` at `version`; answers of an older version are
    /// dropped first.
    pub(crate) fn put(&self, key: CacheKey, version: i64, body: &[u8]) {
        if body.len() > MAX_BODY {
            return;
        }
        let weight = 2 * key.len() + body.len() + ENTRY_OVERHEAD;
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.insert(key, version, Arc::from(body), weight);
    }

    /// Bytes held (keys, bodies and bookkeeping), as `/metrics` shows them.
    pub fn bytes(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .weight()
    }
}

/// The probe's connection and the newest version it read, with the number of the probe that
/// read it.
#[derive(Debug, Default)]
struct Probe {
    connection: Option<PoolConnection<Any>>,
    newest: Option<(u64, i64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn cache(max_bytes: usize) -> ResponseCache {
        agentindex_indexer::store::install_drivers();
        let pool = sqlx::any::AnyPoolOptions::new()
            .connect_lazy("sqlite::memory:")
            .unwrap();
        ResponseCache::new(pool, max_bytes)
    }

    #[tokio::test]
    async fn a_probe_asked_for_at_low_priority_runs_on_the_servers_runtime() {
        let cache = Arc::new(cache(1 << 20).await);
        let here = cache.version().await.unwrap();
        let lane = crate::low_priority_lane::LowPriorityLane::start();
        let probe = Arc::clone(&cache);
        // On the lane the probe is handed to this runtime, and answers the same.
        let there = lane
            .run(async move { probe.version().await })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(there, here);
    }

    /// Callers waiting while a probe runs share the next one; a caller arriving after a
    /// commit never gets a version read before it.
    #[tokio::test]
    async fn callers_that_queue_behind_a_probe_share_the_next_one() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("v.db").display());
        agentindex_indexer::store::install_drivers();
        let pool = AnyPool::connect(&url).await.unwrap();
        let writer = AnyPool::connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&writer)
            .await
            .unwrap();
        let cache = Arc::new(ResponseCache::new(pool, 1 << 20));
        let first = cache.version().await.unwrap();
        assert_eq!(cache.started.load(Ordering::SeqCst), 1);

        // Twenty callers arrive while the probe is busy (its lock held here); this runtime has
        // one thread, so each runs up to the lock before this test goes on.
        let busy = cache.probe.lock().await;
        let callers: Vec<_> = (0..20)
            .map(|_| {
                let cache = Arc::clone(&cache);
                tokio::spawn(async move { cache.version().await.unwrap() })
            })
            .collect();
        tokio::task::yield_now().await;
        sqlx::query("INSERT INTO t VALUES (1)")
            .execute(&writer)
            .await
            .unwrap();
        drop(busy);
        let mut versions = Vec::new();
        for caller in callers {
            versions.push(caller.await.unwrap());
        }
        assert_eq!(
            cache.started.load(Ordering::SeqCst),
            2,
            "one probe for the twenty"
        );
        assert!(versions.iter().all(|v| *v == versions[0]), "{versions:?}");
        assert_ne!(versions[0], first, "the probe came after the commit");

        // A caller after another commit gets a fresh probe, never the shared answer.
        sqlx::query("INSERT INTO t VALUES (2)")
            .execute(&writer)
            .await
            .unwrap();
        let after = cache.version().await.unwrap();
        assert_ne!(after, versions[0]);
        assert_eq!(cache.started.load(Ordering::SeqCst), 3);
    }

    fn key(n: usize) -> CacheKey {
        CacheKey::of(
            "graphql",
            &async_graphql::Request::new(format!("{{ a{n} }}")),
        )
    }

    #[tokio::test]
    async fn answers_are_served_at_their_version_only() {
        let cache = cache(1 << 20).await;
        cache.put(key(1), 7, b"one");
        assert_eq!(cache.get(&key(1), 7).as_deref(), Some(&b"one"[..]));
        assert_eq!(cache.get(&key(1), 8), None, "never a stale answer");
        cache.put(key(2), 8, b"two");
        assert_eq!(cache.get(&key(1), 8), None);
        assert_eq!(cache.get(&key(1), 7), None, "older versions are dropped");
        assert_eq!(cache.get(&key(2), 8).as_deref(), Some(&b"two"[..]));
    }

    #[tokio::test]
    async fn the_bytes_held_stay_within_the_bound_however_many_keys_come() {
        let bound = 64 * 1024;
        let cache = cache(bound).await;
        for n in 0..10_000 {
            cache.put(key(n), 1, &[b'x'; 1000]);
            assert!(cache.bytes() <= bound, "{} bytes after {n}", cache.bytes());
        }
        assert!(
            cache.bytes() > bound / 2,
            "the cache is used: {}",
            cache.bytes()
        );
        assert!(cache.get(&key(9_999), 1).is_some(), "the newest is kept");
        assert!(cache.get(&key(0), 1).is_none(), "the oldest went");
        cache.put(key(1), 1, &vec![b'x'; MAX_BODY + 1]);
        assert!(cache.get(&key(1), 1).is_none(), "too large to keep");
    }
}
