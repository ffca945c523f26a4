//! A cache of GraphQL query responses, valid while the database is unchanged: each entry carries
//! the database's version it was computed at (SQLite's `data_version`; on PostgreSQL the
//! position of its write-ahead log, or of the replay on a streaming replica), and a commit by any
//! other connection (the indexer's writer, in this process or on another machine) changes that
//! number, so a stale answer is never served. Dashboards and SDKs that ask the same question
//! repeatedly get it from memory.

use agentindex_indexer::store::Dialect;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};
use std::collections::HashMap;
use tokio::sync::Mutex;

/// Responses kept at most; the cache is emptied when it would grow past this.
const CAPACITY: usize = 4_096;
/// Largest response body kept.
const MAX_BODY: usize = 256 * 1024;

/// The cache.
#[derive(Debug)]
pub struct ResponseCache {
    pool: AnyPool,
    /// One connection reserved for reading `data_version` (the number is per connection).
    probe: Mutex<Option<PoolConnection<Any>>>,
    entries: std::sync::Mutex<(i64, HashMap<String, Vec<u8>>)>,
}

impl ResponseCache {
    /// A cache over the database `pool` reads.
    pub fn new(pool: AnyPool) -> Self {
        Self {
            pool,
            probe: Mutex::new(None),
            entries: std::sync::Mutex::new((i64::MIN, HashMap::new())),
        }
    }

    /// The database's current version, as this cache's probe connection sees it.
    pub async fn version(&self) -> sqlx::Result<i64> {
        let mut probe = self.probe.lock().await;
        if probe.is_none() {
            *probe = Some(self.pool.acquire().await?);
        }
        let conn: &mut AnyConnection = probe.as_mut().expect("just set");
        let probe = match Dialect::of(conn) {
            Dialect::Sqlite => "PRAGMA data_version",
            Dialect::Postgres => {
                "SELECT CAST((CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                                   ELSE pg_current_wal_lsn() END) - '0/0' AS BIGINT)"
            }
        };
        sqlx::query_scalar(probe).fetch_one(conn).await
    }

    /// The response cached for `key` at `version`.
    pub fn get(&self, key: &str, version: i64) -> Option<Vec<u8>> {
        let entries = self.entries.lock().expect("not poisoned");
        (entries.0 == version)
            .then(|| entries.1.get(key).cloned())
            .flatten()
    }

    /// Keeps `body` as the response to `key` at `version`.
    pub fn put(&self, key: String, version: i64, body: Vec<u8>) {
        if body.len() > MAX_BODY {
            return;
        }
        let mut entries = self.entries.lock().expect("not poisoned");
        if entries.0 != version || entries.1.len() >= CAPACITY {
            entries.0 = version;
            entries.1.clear();
        }
        entries.1.insert(key, body);
    }
}
