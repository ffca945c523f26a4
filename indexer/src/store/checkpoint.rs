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
//!
//! The task also checkpoints once when the store opens. A process that stopped without closing
//! its connections (killed, crashed, or a benchmark's loader) leaves its WAL behind, and SQLite
//! recovers it on open with nothing marked as copied: until a checkpoint runs, every page a
//! reader looks for is first searched for among the WAL's frames. After a transaction of
//! gigabytes (rules adopted at a million agents) that search was a third of the API's processor
//! time on lookups by id, and a `serve` with no indexer beside it would never commit to start a
//! checkpoint.

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
    /// How many checkpoints the task has run (the one at open included), failed or not.
    #[cfg(test)]
    runs: watch::Receiver<u64>,
}

impl Checkpointer {
    /// Starts the checkpoint task on `pool` (a one-connection pool of its own); its first
    /// checkpoint runs at once, for whatever WAL the file was opened with.
    pub(super) fn spawn(pool: SqlitePool) -> Self {
        let (commits, mut seen) = watch::channel(0);
        seen.mark_changed();
        let (ran, _runs) = watch::channel(0);
        tokio::spawn(run(pool, seen, ran));
        Self {
            commits: Arc::new(commits),
            #[cfg(test)]
            runs: _runs,
        }
    }

    /// Waits up to `patience` for the task to have run at least `count` checkpoints; false if
    /// it did not (it ended, or took longer).
    #[cfg(test)]
    pub(super) async fn ran(&self, count: u64, patience: Duration) -> bool {
        let mut runs = self.runs.clone();
        let waited = tokio::time::timeout(patience, runs.wait_for(|ran| *ran >= count)).await;
        matches!(waited, Ok(Ok(_)))
    }

    /// Tells the task the writer committed.
    pub(super) fn committed(&self) {
        self.commits.send_modify(|count| *count += 1);
    }
}

async fn run(pool: SqlitePool, mut commits: watch::Receiver<u64>, ran: watch::Sender<u64>) {
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
        ran.send_modify(|count| *count += 1);
        tokio::time::sleep(INTERVAL).await;
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use sqlx::{ConnectOptions, Connection, Executor};
    use std::path::Path;
    use std::str::FromStr;
    use std::time::Duration;

    /// How long a test waits for the task before failing.
    const PATIENCE: Duration = Duration::from_secs(10);

    /// Whether the database file itself (not its WAL) holds `marker`'s bytes: a row is in
    /// the file only once a checkpoint copied the page it was committed in.
    fn file_holds(path: &Path, marker: &str) -> bool {
        let bytes = std::fs::read(path).unwrap_or_default();
        bytes
            .windows(marker.len())
            .any(|window| window == marker.as_bytes())
    }

    /// Waits until the checkpoint task of `store` has run `count` times.
    async fn checkpoints(store: &Store, count: u64) {
        let parts = store.sqlite.as_ref().expect("a SQLite store");
        assert!(
            parts.checkpointer.ran(count, PATIENCE).await,
            "the checkpoint task did not run {count} checkpoints within {PATIENCE:?}"
        );
    }

    /// The write connection never checkpoints on its own, so a commit's row reaches the
    /// database file only if the task checkpoints after it (the one at open has run before).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_is_copied_into_the_database_file_without_closing() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("checkpoint.db");
        let store = Store::open(&format!("sqlite://{}", path.display()))
            .await
            .expect("the store opens");
        checkpoints(&store, 1).await;
        let name = "a-chain-only-the-commit-names";
        store
            .writer(1)
            .init_chain(1, name, 1)
            .await
            .expect("a commit");
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !file_holds(&path, name) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the committed row never reached the database file: nothing was checkpointed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        store.close().await;
    }

    /// A WAL another connection left behind (as a process killed before closing leaves it) is
    /// copied into the database file when a store opens it, with nothing committed since.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wal_left_behind_is_copied_when_the_store_opens() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("left.db");
        let url = format!("sqlite://{}", path.display());
        // Migrated and closed: the migrations are in the file, the WAL is gone.
        Store::open(&url)
            .await
            .expect("the store opens")
            .close()
            .await;
        let marker = "a-row-left-in-the-wal";
        let mut left = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
            .expect("options")
            .connect()
            .await
            .expect("a connection of its own");
        left.execute("PRAGMA wal_autocheckpoint = 0")
            .await
            .expect("automatic checkpoints off");
        left.execute("CREATE TABLE left_behind (marker TEXT)")
            .await
            .expect("a table");
        sqlx::query("INSERT INTO left_behind (marker) VALUES (?)")
            .bind(marker)
            .execute(&mut left)
            .await
            .expect("a row");
        assert!(
            !file_holds(&path, marker),
            "the row reached the file before any checkpoint"
        );
        // Open while the other connection stays open: its close would checkpoint.
        let store = Store::open(&url).await.expect("the store opens again");
        checkpoints(&store, 1).await;
        assert!(
            file_holds(&path, marker),
            "the WAL found at open was not copied into the database file"
        );
        store.close().await;
        left.close().await.expect("the other connection closes");
    }
}
