//! WAL checkpoints off the writer's path. SQLite's automatic checkpoint runs inside the commit
//! that crosses its threshold, so the writer would wait for the copy into the database file and
//! its fsyncs every batch or two; with `synchronous = NORMAL` those are the only fsyncs a commit
//! can meet, and they took a seventh of the time of a backfill (4.8 s, 4.1 s without them, on the
//! 210,000-event benchmark).
//!
//! The write connection therefore has automatic checkpoints off, and this task runs a `PASSIVE`
//! checkpoint on its own connection after the writer commits, at most every [`INTERVAL`]. A
//! passive checkpoint never blocks the writer or a reader; durability is that of the automatic
//! checkpoint (a commit is in the WAL before it is acknowledged; the fsyncs happen at
//! checkpoints), only on another thread.

use sqlx::SqlitePool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The shortest time between two checkpoints: a backfill commits every ~100 ms, so this lets a
/// few batches share one copy and fsync, while at the tip a block's commit is checkpointed soon.
const INTERVAL: Duration = Duration::from_millis(250);

/// A handle the writer nudges after each commit; the task ends when every handle is dropped
/// or its pool is closed.
#[derive(Debug, Clone)]
pub(super) struct Checkpointer {
    commits: Arc<watch::Sender<u64>>,
}

impl Checkpointer {
    /// Starts the checkpoint task on `pool` (a one-connection pool of its own).
    pub(super) fn spawn(pool: SqlitePool) -> Self {
        let (commits, seen) = watch::channel(0);
        tokio::spawn(run(pool, seen));
        Self {
            commits: Arc::new(commits),
        }
    }

    /// Tells the task the writer committed.
    pub(super) fn committed(&self) {
        self.commits.send_modify(|count| *count += 1);
    }
}

async fn run(pool: SqlitePool, mut commits: watch::Receiver<u64>) {
    while commits.changed().await.is_ok() {
        if pool.is_closed() {
            return;
        }
        if let Err(error) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&pool)
            .await
        {
            if pool.is_closed() {
                return;
            }
            // The next commit tries again; the WAL only grows meanwhile.
            tracing::warn!(target: "agentindex::store", %error, "WAL checkpoint failed");
        }
        tokio::time::sleep(INTERVAL).await;
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use std::time::{Duration, Instant};

    /// In WAL mode the database file itself only grows when a checkpoint copies pages into it.
    /// The write connection never checkpoints on its own, so the file of a fresh database
    /// (migrated, all of it still in the WAL) grows after a commit only if this task ran.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_is_copied_into_the_database_file_without_closing() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("checkpoint.db");
        let store = Store::open(&format!("sqlite://{}", path.display()))
            .await
            .expect("the store opens");
        let size = || std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let before = size();
        store
            .writer(1)
            .init_chain(1, "test", 1)
            .await
            .expect("a commit");
        let deadline = Instant::now() + Duration::from_secs(10);
        while size() <= before {
            assert!(
                Instant::now() < deadline,
                "the database file stayed at {before} bytes: nothing was checkpointed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        store.close().await;
    }
}
