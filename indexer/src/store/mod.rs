//! The store, on SQLite or PostgreSQL: every SQL statement of the indexer lives under this
//! module, written once for both ([`dialect`] holds where they differ).
//!
//! One writer ([`writer`]) applies batches — raw events, the facts decoded from them, the agents
//! they touch, the new cursor and reorg window — in one transaction each; readers use a separate
//! pool. SQLite runs in WAL mode and PostgreSQL under MVCC, so readers never block the writer.

mod agents;
mod batch;
mod cardano;
mod checkpoint;
mod columns;
pub mod copy;
mod cursor;
mod decode;
mod dialect;
mod documents;
pub mod dump;
mod facts;
mod feedback;
mod identity_rows;
pub mod in_list;
mod interface;
mod liveness;
pub mod low_priority;

#[cfg(test)]
mod migration_tests;
mod packed_row;
mod payments;
mod postgres;
mod postgres_copy;
mod reputation;
mod rewind;
mod row_values;
mod rows;
mod sql;
mod sql_writer;
pub mod sqlite;
mod sqlite_guard;
mod stages;
mod statistics;
mod stored_feeds;
mod wrapped_driver;
mod writer;

pub use agents::wallet_from_metadata;
pub use batch::{AgentSnapshot, Batch, CardanoTx, ChainContext, ChainContexts, EventRecord};
pub use cursor::{ChainProgress, ChainStatus, WatchedSets};
pub use documents::{DocumentCounts, DocumentResult, DueDocument};
pub use facts::PreparedBatch;
pub use interface::{ApplySummary, StoreRead, WriteBackend};
pub use liveness::{DueProbe, ProbeResult};
pub use payments::ClassifiedPayments;
pub use reputation::{AgentReputation, RanksAhead, StoredReputation};
pub use stored_feeds::{FeedWrite, StoredFeed};
pub use writer::{QueuedBatch, SqlWriter, Writer};

use crate::primitives::BlockRef;
use crate::reputation::{ReputationRules, TrustRank};
pub use columns::{Flag, JsonColumn, MaybeFlag};
pub use dialect::Dialect;
pub use postgres::SCORES_TURN_LOCK;
use sqlx::AnyPool;
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
    /// An index could not be copied.
    #[error("copy: {0}")]
    Copy(String),
    /// A backup could not be written.
    #[error("backup to {target}: {reason}")]
    Backup {
        /// The file asked for.
        target: String,
        /// What went wrong.
        reason: String,
    },
    /// Another process writes this chain already (PostgreSQL: it holds the chain's lock).
    #[error(
        "chain {chain_id} already has a writer: {holder} holds its lock; one database takes one \
         `agentindex index` per chain (start `agentindex serve` for more readers)"
    )]
    SecondWriter {
        /// The chain.
        chain_id: u64,
        /// Who holds the lock, as far as the database tells.
        holder: String,
    },
    /// A stored reputation feed was not made visible.
    #[error("the reputation feed of chain {chain_id} at block {block} was not stored: {reason}")]
    FeedIncomplete {
        /// The chain.
        chain_id: u64,
        /// The feed's block.
        block: u64,
        /// Why.
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

/// Which items of each agent's list to read: its newest `rows` strictly before the (block, log
/// index) position `after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageWindow {
    /// Items per agent.
    pub rows: u64,
    /// Position of the last item already seen, if any.
    pub after: Option<(u64, u64)>,
}

/// How a store's read pool is set up.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenOptions {
    /// How long one statement of the read pool may run, so a statement whose caller gave up
    /// (an API query past its time limit) stops in the database too instead of holding a
    /// connection and a core. `None`: no limit (indexing, `copy`, `dump`).
    ///
    /// PostgreSQL: the `statement_timeout` of every read connection. SQLite: a deadline each
    /// statement gets as it starts, kept by the connection's progress handler (see
    /// `sqlite_guard`); a statement past it fails with `interrupted`.
    pub read_statement_timeout: Option<Duration>,
    /// Connections of a second read pool, for reads nobody waits on (see [`low_priority`]):
    /// their SQLite worker threads run at the lowest priority, so requests others wait on get
    /// a core first. 0: no such pool. PostgreSQL runs its reads in its own processes and has
    /// no such pool.
    pub low_priority_readers: u32,
}

/// Installs the drivers of sqlx's `Any` pools and connections, the store's own: for PostgreSQL
/// one whose connections also bulk-load rows with `COPY` (see `postgres_copy`), for SQLite one
/// whose connections can stop a statement past a time limit. Safe to call any number of times;
/// everything that opens an `Any` connection calls this, not sqlx's own (the first one wins).
pub fn install_drivers() {
    static DRIVERS: std::sync::Once = std::sync::Once::new();
    DRIVERS.call_once(|| {
        sqlx::any::install_drivers(&[postgres_copy::DRIVER, sqlite_guard::DRIVER])
            .expect("sqlx's Any drivers were installed before the store's (install_drivers)");
    });
}

/// An open, migrated database: a one-connection pool for the writer and a pool for readers, on
/// SQLite or on PostgreSQL.
#[derive(Debug, Clone)]
pub struct Store {
    write: AnyPool,
    read: AnyPool,
    /// The read pool of [`low_priority`] scopes, if the store has one.
    read_low: Option<AnyPool>,
    dialect: Dialect,
    /// What only SQLite has: its checkpoints, backups and file lock.
    sqlite: Option<sqlite::SqliteParts>,
}

/// How long opening the database may take before the wait is reported.
const DATABASE_PATIENCE: Duration = Duration::from_millis(1500);

impl Store {
    /// Opens (creating if missing) and migrates the database at `url`: `sqlite://path` or
    /// `postgres://user:password@host:port/dbname`.
    pub async fn open(url: &str) -> StoreResult<Self> {
        Self::open_with(url, OpenOptions::default()).await
    }

    /// Opens the database at `url` as [`Store::open`] does, its read pool set up by `options`
    /// (the API's: statements stopped by the database past a time limit).
    pub async fn open_with(url: &str, options: OpenOptions) -> StoreResult<Self> {
        install_drivers();
        let opening = Self::open_dialect(url, options);
        tokio::pin!(opening);
        match tokio::time::timeout(DATABASE_PATIENCE, &mut opening).await {
            Ok(opened) => opened,
            Err(_) => {
                // Said at once; the open goes on to its own timeout and error.
                tracing::warn!(
                    target: "agentindex::store",
                    database = %crate::redact::url(url),
                    check = "that the database server runs, that its host and port are right, and that no firewall drops the connection",
                    "database does not answer within {:.1} s; still waiting",
                    DATABASE_PATIENCE.as_secs_f64()
                );
                opening.await
            }
        }
    }

    async fn open_dialect(url: &str, options: OpenOptions) -> StoreResult<Self> {
        match Dialect::of_url(url) {
            Some(Dialect::Sqlite) => {
                let opened = sqlite::open(url, &options).await?;
                Ok(Self {
                    write: opened.write,
                    read: opened.read,
                    read_low: opened.read_low,
                    dialect: Dialect::Sqlite,
                    sqlite: Some(opened.parts),
                })
            }
            Some(Dialect::Postgres) => {
                let opened = postgres::open(url, options.read_statement_timeout).await?;
                Ok(Self {
                    write: opened.write,
                    read: opened.read,
                    read_low: None,
                    dialect: Dialect::Postgres,
                    sqlite: None,
                })
            }
            None => Err(StoreError::Url {
                url: crate::redact::url(url),
                reason:
                    "expected sqlite://path/to/file.db or postgres://user:password@host:port/dbname"
                        .into(),
            }),
        }
    }

    /// A read transaction whose every query sees one snapshot ([`sql::snapshot_of`]).
    async fn snapshot(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Any>> {
        sql::snapshot_of(self.reader()).await
    }

    /// The read pool, for queries that never write: inside a [`low_priority::scope`], the
    /// low-priority one if the store has one.
    pub fn reader(&self) -> &AnyPool {
        match &self.read_low {
            Some(low) if low_priority::in_scope() => low,
            _ => &self.read,
        }
    }

    /// Which database this is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Starts the single writer task; `capacity` bounds the queue of pending batches.
    pub fn writer(&self, capacity: usize) -> Writer {
        let checkpointer = self.sqlite.as_ref().map(|parts| parts.checkpointer.clone());
        Writer::spawn(
            SqlWriter::new(
                self.write.clone(),
                self.read.clone(),
                self.dialect,
                checkpointer,
            ),
            capacity,
        )
    }

    /// Writes a consistent copy of the database to `target` while indexing and serving go on.
    /// SQLite only: a PostgreSQL database is backed up with its own tools (`pg_dump`).
    pub async fn backup(&self, target: &std::path::Path) -> StoreResult<u64> {
        match &self.sqlite {
            Some(parts) => sqlite::backup(&parts.native, target).await,
            None => Err(StoreError::Backup {
                target: target.display().to_string(),
                reason: "a PostgreSQL database is backed up with pg_dump (see docs/operations.md)"
                    .into(),
            }),
        }
    }

    /// Closes every pool (on SQLite, flushing the WAL).
    pub async fn close(&self) {
        self.read.close().await;
        if let Some(low) = &self.read_low {
            low.close().await;
        }
        if let Some(parts) = &self.sqlite {
            parts.native.close().await;
        }
        self.write.close().await;
    }
}

impl StoreRead for Store {
    /// Where `chain_id`'s index stands, if it was ever started.
    async fn progress(&self, chain_id: u64) -> StoreResult<Option<ChainProgress>> {
        cursor::progress(self.reader(), chain_id).await
    }

    /// Documents never fetched or due at `now` (unix seconds), at most `limit`.
    async fn due_documents(&self, now: i64, limit: i64) -> StoreResult<Vec<DueDocument>> {
        documents::due(self.reader(), now, limit).await
    }

    /// Endpoints due for a probe at `now`, soonest first.
    async fn due_probes(&self, now: i64, limit: i64) -> StoreResult<Vec<DueProbe>> {
        liveness::due(self.reader(), now, limit).await
    }

    /// Documents fetched, invalid, failed and not tried yet.
    async fn document_counts(&self) -> StoreResult<documents::DocumentCounts> {
        documents::counts(self.reader()).await
    }

    /// Whether every document an agent points at was fetched or failed at least once.
    async fn documents_attempted(&self) -> StoreResult<bool> {
        documents::all_attempted(self.reader()).await
    }

    /// The payments credited to `agent_key` up to `up_to_block`, in chain order.
    async fn payments(
        &self,
        agent_key: &str,
        up_to_block: u64,
    ) -> StoreResult<Vec<crate::reputation::Payment>> {
        payments::of_agent(self.reader(), agent_key, up_to_block).await
    }

    /// Every ERC-8004 feedback of an agent, in chain order, revocations applied.
    async fn feedback(
        &self,
        chain_id: u64,
        registry: &alloy::primitives::Address,
        token_id: &alloy::primitives::U256,
    ) -> StoreResult<Vec<crate::reputation::FeedbackEntry>> {
        feedback::of_agent(self.reader(), chain_id, registry, token_id).await
    }

    /// The window `page` of the payments credited to each of `keys` (agents of `chain_id`),
    /// newest first, with why each does not count for reputation (`None`: it counts).
    async fn classified_payments(
        &self,
        chain_id: u64,
        keys: &[String],
        page: PageWindow,
        rules: &ReputationRules,
    ) -> StoreResult<ClassifiedPayments> {
        let mut conn = self
            .reader()
            .acquire()
            .await
            .context("acquiring a read connection")?;
        reputation::classified_payments(&mut conn, chain_id, keys, page, rules).await
    }

    /// The stored reputation of `agent_key`: as of the newest block among its own facts.
    async fn reputation(&self, agent_key: &str) -> StoreResult<Option<AgentReputation>> {
        reputation::stored(self.reader(), agent_key).await
    }

    /// Every agent of `chain_id` with its stored reputation, in key order, handed to `page` a
    /// thousand at a time, all read from one snapshot.
    async fn stored_reputations(
        &self,
        chain_id: u64,
        page: impl FnMut(Vec<StoredReputation>),
    ) -> StoreResult<()> {
        let mut tx = self.snapshot().await?;
        reputation::stored_in_key_order(&mut tx, chain_id, page).await?;
        tx.rollback().await.context("ending a reputation snapshot")
    }

    /// Every agent of `chain_id` registered by `block` with its reputation as of `block`, in
    /// key order, handed to `page` a thousand at a time, all read from one snapshot.
    async fn reputation_as_of(
        &self,
        chain_id: u64,
        block: u64,
        rules: &ReputationRules,
        page: impl FnMut(Vec<AgentReputation>),
    ) -> StoreResult<()> {
        let mut tx = self.snapshot().await?;
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
            .reader()
            .acquire()
            .await
            .context("acquiring a read connection")?;
        reputation::trust_rank_at(&mut conn, chain_id, block, rules).await
    }

    /// The remembered unfinalized blocks of `chain_id`, oldest first.
    async fn window(&self, chain_id: u64) -> StoreResult<Vec<BlockRef>> {
        cursor::window(self.reader(), chain_id).await
    }

    /// How many runs of each followed Cardano policy were read on `chain_id`.
    async fn script_runs(
        &self,
        chain_id: u64,
    ) -> StoreResult<std::collections::BTreeMap<String, u64>> {
        cardano::script_runs(self.reader(), chain_id).await
    }

    /// Agent contracts and payment addresses discovered on `chain_id`.
    async fn watched(&self, chain_id: u64) -> StoreResult<WatchedSets> {
        cursor::watched(self.reader(), chain_id).await
    }

    /// Head, finalized and indexed block of every chain, for `/status`.
    async fn statuses(&self) -> StoreResult<Vec<ChainStatus>> {
        cursor::statuses(self.reader()).await
    }

    /// The canonical dump of everything derived from the chains (see [`dump`]).
    async fn canonical_dump(&self) -> StoreResult<String> {
        dump::canonical(self.reader()).await
    }
}
