//! The SQLite store: every SQL statement of the indexer lives under this module.
//!
//! One writer ([`writer`]) applies batches — raw events, the facts decoded from them, the agents
//! they touch, the new cursor and reorg window — in one transaction each; readers use a separate
//! read-only pool. The database runs in WAL mode so readers never block the writer.

mod agents;
mod batch;
mod checkpoint;
mod cursor;
mod decode;
mod documents;
pub mod dump;
mod facts;
mod feedback;
mod interface;
#[cfg(test)]
mod migration_tests;
mod payments;
mod reputation;
mod rewind;
mod rows;
mod sql;
mod writer;

pub use agents::wallet_from_metadata;
pub use batch::{AgentSnapshot, Batch, ChainContext, ChainContexts, EventRecord};
pub use cursor::{ChainProgress, ChainStatus, WatchedSets};
pub use documents::{DocumentCounts, DocumentResult, DueDocument};
pub use facts::PreparedBatch;
pub use reputation::AgentReputation;

/// Each agent's credited payments, newest first, with why each does not count (`None`: it does).
pub type ClassifiedPayments = std::collections::BTreeMap<
    String,
    Vec<(
        crate::reputation::Payment,
        Option<crate::reputation::Exclusion>,
    )>,
>;
pub use interface::{StoreRead, WriteBackend};
pub use writer::{ApplySummary, QueuedBatch, SqliteWriter, Writer};

use crate::primitives::BlockRef;
use crate::reputation::{ReputationRules, TrustRank};
use checkpoint::Checkpointer;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL is not `sqlite://…`.
    #[error("database url {url:?}: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// Opening or migrating the database failed.
    #[error("opening {url}: {source}")]
    Open {
        /// The URL.
        url: String,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// Migrations failed.
    #[error("migrating {url}: {source}")]
    Migrate {
        /// The URL.
        url: String,
        /// The migrator's error.
        source: sqlx::migrate::MigrateError,
    },
    /// A statement failed.
    #[error("{context}: {source}")]
    Query {
        /// What the statement was for.
        context: &'static str,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// A stored value does not read back.
    #[error("{what}: {reason}")]
    Corrupt {
        /// What was read.
        what: String,
        /// Why it does not parse.
        reason: String,
    },
    /// A number does not fit the database's integers.
    #[error("{what}: {source}")]
    OutOfRange {
        /// The column or parameter.
        what: String,
        /// The value and which way it did not fit.
        source: crate::primitives::IntOutOfRange,
    },
    /// A backup could not be written.
    #[error("backup to {target}: {reason}")]
    Backup {
        /// The file asked for.
        target: String,
        /// What went wrong.
        reason: String,
    },
    /// The writer task is gone (it stopped on an earlier error or at shutdown).
    #[error("the store writer has stopped")]
    WriterGone,
    /// A batch does not continue the chain's cursor.
    #[error("chain {chain_id}: batch starts after block {expected}, but the cursor is at {actual}")]
    OutOfOrder {
        /// The chain.
        chain_id: u64,
        /// Where the batch expected the cursor.
        expected: u64,
        /// Where it is.
        actual: u64,
    },
}

/// Result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

/// Attaches a description to a driver error.
pub(crate) trait QueryContext<T> {
    fn context(self, what: &'static str) -> StoreResult<T>;
}

impl<T> QueryContext<T> for Result<T, sqlx::Error> {
    fn context(self, context: &'static str) -> StoreResult<T> {
        self.map_err(|source| StoreError::Query { context, source })
    }
}

/// The embedded migrations (`migrations/` at the repository root).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// An open, migrated database: a one-connection pool for the writer and a read-only pool.
#[derive(Debug, Clone)]
pub struct Store {
    write: SqlitePool,
    read: SqlitePool,
    /// A connection of its own for WAL checkpoints, and the task that runs them.
    checkpoint: SqlitePool,
    checkpointer: Checkpointer,
    /// The descriptor the set-up lock was taken on, kept open as long as the store: closing any
    /// descriptor of the database file drops every POSIX lock this process holds on it,
    /// SQLite's own included, and another process could then checkpoint and delete the
    /// write-ahead log under this one's connections (a corrupt database).
    _file: Arc<std::fs::File>,
}

impl Store {
    /// Opens (creating if missing) and migrates the database at `url`.
    pub async fn open(url: &str) -> StoreResult<Self> {
        let options = connect_options(url)?;
        if let Some(parent) = options.get_filename().parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::Url {
                url: url.into(),
                reason: format!("creating {}: {e}", parent.display()),
            })?;
        }
        let open_error = |source| StoreError::Open {
            url: url.into(),
            source,
        };
        // Two processes opening one new database at once (`index` and `serve` started together)
        // would both set it up and apply the first migration, and one would fail; an advisory
        // lock on the file (flock, which SQLite's own locks leave alone) makes the second wait
        // until the first has it migrated. The descriptor stays open with the store (see
        // `_file`): closing it would drop SQLite's locks too.
        let path = options.get_filename().to_path_buf();
        let lock = tokio::task::spawn_blocking(move || {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            file.lock()?;
            Ok::<_, std::io::Error>(file)
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|locked| locked)
        .map_err(|e| StoreError::Url {
            url: url.into(),
            reason: format!("locking the file while it is set up: {e}"),
        })?;
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                options
                    .clone()
                    .create_if_missing(true)
                    // Checkpoints run on their own connection (see `checkpoint`).
                    .pragma("wal_autocheckpoint", "0"),
            )
            .await
            .map_err(open_error)?;
        let migrated = MIGRATOR.run(&write).await;
        lock.unlock().map_err(|e| StoreError::Url {
            url: url.into(),
            reason: format!("unlocking the file after setting it up: {e}"),
        })?;
        migrated.map_err(|source| StoreError::Migrate {
            url: url.into(),
            source,
        })?;
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            // Readers map the file: a page read is then a memory access, not a system call and
            // a copy into each connection's own cache.
            .connect_with(
                options
                    .clone()
                    .read_only(true)
                    .pragma("mmap_size", READ_MMAP_BYTES),
            )
            .await
            .map_err(open_error)?;
        let checkpoint = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(open_error)?;
        let checkpointer = Checkpointer::spawn(checkpoint.clone());
        Ok(Self {
            write,
            read,
            checkpoint,
            checkpointer,
            _file: Arc::new(lock),
        })
    }

    /// The read-only pool, for queries that never write.
    pub fn reader(&self) -> &SqlitePool {
        &self.read
    }

    /// Starts the single writer task; `capacity` bounds the queue of pending batches.
    pub fn writer(&self, capacity: usize) -> Writer {
        Writer::sqlite(self.write.clone(), self.checkpointer.clone(), capacity)
    }

    /// Writes a consistent copy of the database to `target` while indexing and serving go on:
    /// one read transaction's snapshot, compacted (`VACUUM INTO`). Refuses an existing file.
    pub async fn backup(&self, target: &std::path::Path) -> StoreResult<u64> {
        let failed = |reason: String| StoreError::Backup {
            target: target.display().to_string(),
            reason,
        };
        if target.exists() {
            return Err(failed("the file exists; a backup never overwrites".into()));
        }
        let name = target
            .to_str()
            .ok_or_else(|| failed("the path is not valid UTF-8".into()))?;
        sqlx::query("VACUUM INTO ?")
            .bind(name)
            .execute(&self.read)
            .await
            .map_err(|e| failed(e.to_string()))?;
        std::fs::metadata(target)
            .map(|m| m.len())
            .map_err(|e| failed(e.to_string()))
    }

    /// Closes both pools, flushing the WAL.
    pub async fn close(&self) {
        self.read.close().await;
        self.checkpoint.close().await;
        self.write.close().await;
    }
}

impl StoreRead for Store {
    /// Where `chain_id`'s index stands, if it was ever started.
    async fn progress(&self, chain_id: u64) -> StoreResult<Option<ChainProgress>> {
        cursor::progress(&self.read, chain_id).await
    }

    /// Documents never fetched or due at `now` (unix seconds), at most `limit`.
    async fn due_documents(&self, now: i64, limit: i64) -> StoreResult<Vec<DueDocument>> {
        documents::due(&self.read, now, limit).await
    }

    /// Documents fetched, invalid, failed and not tried yet.
    async fn document_counts(&self) -> StoreResult<documents::DocumentCounts> {
        documents::counts(&self.read).await
    }

    /// Whether every document an agent points at was fetched or failed at least once.
    async fn documents_attempted(&self) -> StoreResult<bool> {
        documents::all_attempted(&self.read).await
    }

    /// The payments credited to `agent_key` up to `up_to_block`, in chain order.
    async fn payments(
        &self,
        agent_key: &str,
        up_to_block: u64,
    ) -> StoreResult<Vec<crate::reputation::Payment>> {
        payments::of_agent(&self.read, agent_key, up_to_block).await
    }

    /// Every ERC-8004 feedback of an agent, in chain order, revocations applied.
    async fn feedback(
        &self,
        chain_id: u64,
        registry: &alloy::primitives::Address,
        token_id: &alloy::primitives::U256,
    ) -> StoreResult<Vec<crate::reputation::FeedbackEntry>> {
        feedback::of_agent(&self.read, chain_id, registry, token_id).await
    }

    /// Every payment credited to each of `keys` (agents of `chain_id`), newest first, with why
    /// it does not count for reputation (`None`: it counts).
    async fn classified_payments(
        &self,
        chain_id: u64,
        keys: &[String],
        rules: &ReputationRules,
    ) -> StoreResult<ClassifiedPayments> {
        let mut conn = self
            .read
            .acquire()
            .await
            .context("acquiring a read connection")?;
        reputation::classified_payments(&mut conn, chain_id, keys, rules).await
    }

    /// The stored reputation of `agent_key`: as of the newest block among its own facts.
    async fn reputation(&self, agent_key: &str) -> StoreResult<Option<AgentReputation>> {
        reputation::stored(&self.read, agent_key).await
    }

    /// Every agent of `chain_id` registered by `block` with its reputation as of `block`, in
    /// key order, handed to `page` a few hundred at a time, all read from one snapshot.
    async fn reputation_as_of(
        &self,
        chain_id: u64,
        block: u64,
        rules: &ReputationRules,
        page: impl FnMut(Vec<AgentReputation>),
    ) -> StoreResult<()> {
        let mut tx = self
            .read
            .begin()
            .await
            .context("starting a reputation snapshot")?;
        reputation::as_of_block(&mut tx, chain_id, block, rules, page).await?;
        tx.rollback().await.context("ending a reputation snapshot")
    }

    /// The trust rank of `chain_id` in force at `block`, computed from the counted payments.
    async fn trust_rank(
        &self,
        chain_id: u64,
        block: u64,
        rules: &ReputationRules,
    ) -> StoreResult<(TrustRank, u64)> {
        let mut conn = self
            .read
            .acquire()
            .await
            .context("acquiring a read connection")?;
        reputation::trust_rank_at(&mut conn, chain_id, block, rules).await
    }

    /// The remembered unfinalized blocks of `chain_id`, oldest first.
    async fn window(&self, chain_id: u64) -> StoreResult<Vec<BlockRef>> {
        cursor::window(&self.read, chain_id).await
    }

    /// Agent contracts and payment addresses discovered on `chain_id`.
    async fn watched(&self, chain_id: u64) -> StoreResult<WatchedSets> {
        cursor::watched(&self.read, chain_id).await
    }

    /// Head, finalized and indexed block of every chain, for `/status`.
    async fn statuses(&self) -> StoreResult<Vec<ChainStatus>> {
        cursor::statuses(&self.read).await
    }

    /// The canonical dump of everything derived from the chains (see [`dump`]).
    async fn canonical_dump(&self) -> StoreResult<String> {
        dump::canonical(&self.read).await
    }
}

/// How much of the database file each reader maps into memory (address space, shared with
/// the operating system's page cache; not memory of its own).
const READ_MMAP_BYTES: &str = "4294967296";

/// Rows a connection's thread may read ahead of the task taking them. sqlx's default (50) makes
/// the two threads hand over every few dozen rows, and the switches cost more than the reads
/// when rescoring loads hundreds of thousands of rows.
const ROW_BUFFER: usize = 4096;

/// The page size of a new database (an existing one keeps its own). Twice SQLite's default:
/// a backfill appends rows in key order to every table, and larger pages mean fewer splits and
/// WAL frames per row (5% off the 210,000-event backfill; 16 KiB gained little more).
const PAGE_SIZE: u32 = 8192;

fn connect_options(url: &str) -> StoreResult<SqliteConnectOptions> {
    let path = url
        .strip_prefix("sqlite://")
        .ok_or_else(|| StoreError::Url {
            url: url.into(),
            reason: "expected sqlite://relative/path.db or sqlite:///absolute/path.db".into(),
        })?;
    if path.is_empty() {
        return Err(StoreError::Url {
            url: url.into(),
            reason: "no file path".into(),
        });
    }
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}")).map_err(|e| {
        StoreError::Url {
            url: url.into(),
            reason: e.to_string(),
        }
    })?;
    Ok(options
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30))
        .row_buffer_size(ROW_BUFFER)
        .page_size(PAGE_SIZE)
        .pragma("cache_size", "-16384"))
}
