//! The writer's database side for SQLite and PostgreSQL alike ([`SqlWriter`]): each command of
//! the writer task as one transaction on the write connection. A batch runs through every
//! stage in order (`stages/`), a rewind undoes them (`rewind.rs`).

use super::batch::{Batch, ChainContext, ChainContexts};
use super::checkpoint::Checkpointer;
use super::documents::{self, DocumentResult};
use super::facts::{self, PreparedBatch};
use super::interface::{ApplySummary, WriteBackend};
use super::stages::{BatchContext, STAGES};
use super::statistics::Statistics;
use super::{Dialect, QueryContext, StoreError, StoreResult, cursor, postgres, reputation, rewind};
use crate::primitives::sql_uint;
use crate::schema::chain_cursor;
use crate::store::decode::int;
use sqlx::{AnyConnection, AnyPool};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// The database side of the writer: the write connection, on SQLite the task that checkpoints
/// the WAL after each command (see `checkpoint`), on PostgreSQL the chains' writer locks (see
/// `postgres`) and the planner statistics it keeps current (see `statistics`).
/// [`Store::writer`](super::Store::writer) starts one.
pub struct SqlWriter {
    pool: AnyPool,
    /// A read pool, for the trust ranks computed ahead on snapshots (`reputation::RanksAhead`).
    read: AnyPool,
    dialect: Dialect,
    checkpointer: Option<Checkpointer>,
    statistics: Statistics,
    /// Whether what agents declare may have changed since the last endpoints sync (a
    /// document or a link did): only then does a sync bring the endpoints in line, since that
    /// reads every document. Set when the writer starts, so its first sync does.
    declarations_changed: AtomicBool,
    /// Syncs since the endpoints were last brought in line: every
    /// [`RETARGET_AT_LEAST_EVERY`]th brings them in line whatever this writer saw, for the
    /// documents another process's writer saved (chains split across indexers on one
    /// PostgreSQL database).
    syncs_without_retarget: AtomicU32,
    /// Whether the last sync left agents without a liveness summary.
    summaries_pending: AtomicBool,
    /// The endpoints the last sync declared.
    declared: AtomicU64,
}

impl SqlWriter {
    /// The database side over the write `pool`, checkpointing SQLite's WAL with `checkpointer`.
    pub(super) fn new(
        pool: AnyPool,
        read: AnyPool,
        dialect: Dialect,
        checkpointer: Option<Checkpointer>,
    ) -> Self {
        Self {
            pool,
            read,
            dialect,
            checkpointer,
            statistics: Statistics::default(),
            declarations_changed: AtomicBool::new(true),
            syncs_without_retarget: AtomicU32::new(0),
            summaries_pending: AtomicBool::new(true),
            declared: AtomicU64::new(0),
        }
    }
}

/// An endpoints sync brings the endpoints in line at least once in this many, changed or not.
const RETARGET_AT_LEAST_EVERY: u32 = 60;

impl SqlWriter {
    /// Marks what agents declare as possibly changed when `changed`.
    fn note_declarations(&self, changed: bool) {
        if changed {
            self.declarations_changed.store(true, Ordering::Relaxed);
        }
    }
}

impl WriteBackend for SqlWriter {
    type Prepared = PreparedBatch;

    fn prepare(batch: Batch) -> StoreResult<PreparedBatch> {
        facts::prepare(batch)
    }

    async fn init_chain(&self, chain_id: u64, name: &str, start_block: u64) -> StoreResult<()> {
        init(&self.pool, self.dialect, chain_id, name, start_block).await
    }

    async fn apply(&self, prepared: PreparedBatch) -> StoreResult<ApplySummary> {
        let chain = std::sync::Arc::clone(&prepared.batch.chain);
        let summary = apply(&self.pool, self.dialect, &self.statistics, prepared).await?;
        chain.ranks_ahead.start(&self.read);
        Ok(summary)
    }

    async fn rewind(&self, chain: &ChainContext, ancestor: u64) -> StoreResult<u64> {
        let removed = rewind_chain(&self.pool, chain, ancestor).await?;
        chain.ranks_ahead.start(&self.read);
        Ok(removed)
    }

    async fn adopt_rules(&self, chain: &ChainContext) -> StoreResult<u64> {
        adopt_rules(&self.pool, chain).await
    }

    async fn rescore(&self, chain: &ChainContext, keys: Vec<String>) -> StoreResult<()> {
        rescore(&self.pool, chain, keys).await
    }

    async fn record_heads(&self, chain_id: u64, head: u64, finalized: u64) -> StoreResult<()> {
        heads(&self.pool, chain_id, head, finalized).await
    }

    async fn settle_reputation(&self, chain: &ChainContext, head: u64) -> StoreResult<()> {
        let mut tx = self
            .pool
            .begin()
            .await
            .context("starting to settle reputation")?;
        scores_turn(&mut tx).await?;
        let ahead = Some(&*chain.ranks_ahead);
        reputation::settle(&mut tx, chain.chain_id, &chain.rules, head, ahead).await?;
        cursor::settled(&mut tx, chain.chain_id, Some(head)).await?;
        tx.commit().await.context("committing settled reputation")?;
        chain.ranks_ahead.start(&self.read);
        Ok(())
    }

    async fn save_documents(
        &self,
        results: &[DocumentResult],
        chains: &ChainContexts,
    ) -> StoreResult<()> {
        let changed = save_documents(&self.pool, results, chains).await?;
        self.note_declarations(changed);
        Ok(())
    }

    async fn sync_documents(&self) -> StoreResult<u64> {
        let synced = sync_documents(&self.pool).await?;
        self.note_declarations(synced.links_changed);
        Ok(synced.recomputed)
    }

    async fn sync_probes(&self, now: i64) -> StoreResult<u64> {
        // With nothing new declared and every agent summarised there is nothing to do, and
        // nothing is committed (a commit would cost the API's readers their caches).
        let skipped = self.syncs_without_retarget.fetch_add(1, Ordering::Relaxed);
        let changed = self.declarations_changed.swap(false, Ordering::Relaxed)
            || skipped + 1 >= RETARGET_AT_LEAST_EVERY;
        if !changed && !self.summaries_pending.load(Ordering::Relaxed) {
            return Ok(self.declared.load(Ordering::Relaxed));
        }
        if changed {
            self.syncs_without_retarget.store(0, Ordering::Relaxed);
        }
        let synced = match sync_probes(&self.pool, now, changed).await {
            Ok(synced) => synced,
            Err(error) => {
                self.note_declarations(changed);
                return Err(error);
            }
        };
        self.summaries_pending
            .store(!synced.complete, Ordering::Relaxed);
        self.declared.store(synced.declared, Ordering::Relaxed);
        Ok(synced.declared)
    }

    async fn save_probes(
        &self,
        results: &[super::ProbeResult],
        now: i64,
        retention_secs: i64,
    ) -> StoreResult<Vec<String>> {
        let mut tx = self.pool.begin().await.context("starting to save probes")?;
        let agents = super::liveness::save(&mut tx, results, now, retention_secs).await?;
        tx.commit().await.context("committing probes")?;
        Ok(agents)
    }

    async fn store_feed(&self, write: &super::stored_feeds::FeedWrite) -> StoreResult<()> {
        super::stored_feeds::write(&self.pool, write).await
    }

    fn after_command(&self) {
        // A checkpoint copies what the command committed into the database file, elsewhere.
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.committed();
        }
    }
}

async fn init(
    pool: &AnyPool,
    dialect: Dialect,
    chain_id: u64,
    name: &str,
    start_block: u64,
) -> StoreResult<()> {
    let mut conn = pool
        .acquire()
        .await
        .context("acquiring the write connection")?;
    if dialect == Dialect::Postgres {
        postgres::lock_chain(&mut conn, chain_id).await?;
    }
    cursor::init(&mut conn, chain_id, name, start_block).await
}

async fn apply(
    pool: &AnyPool,
    dialect: Dialect,
    statistics: &Statistics,
    mut prepared: PreparedBatch,
) -> StoreResult<ApplySummary> {
    let batch = &prepared.batch;
    let chain_id = batch.chain.chain_id;
    let mut tx = pool.begin().await.context("starting a batch transaction")?;
    if dialect == Dialect::Postgres {
        postgres::still_writer(&mut tx, chain_id).await?;
        if batch.settles {
            postgres::take_scores_turn(&mut tx).await?;
        }
    }
    let indexed = cursor::indexed_block(&mut tx, chain_id).await?;
    if indexed + 1 != int("from_block", batch.from_block)? {
        return Err(StoreError::OutOfOrder {
            chain_id,
            expected: batch.from_block.saturating_sub(1),
            actual: sql_uint(indexed).unwrap_or(0),
        });
    }
    let started = std::time::Instant::now();
    let mut context = BatchContext {
        prepared: &mut prepared,
        dialect,
        statistics,
        summary: ApplySummary::default(),
    };
    // How long each stage took.
    let mut took = [std::time::Duration::ZERO; STAGES.len()];
    for (stage, took) in STAGES.into_iter().zip(&mut took) {
        let begun = std::time::Instant::now();
        stage.apply(&mut tx, &mut context).await?;
        *took = begun.elapsed();
    }
    let summary = context.summary;
    tx.commit().await.context("committing a batch")?;
    for ((source, kind), count) in &prepared.kinds {
        crate::metrics::metrics().events(chain_id, source, kind, *count);
    }
    let stages: Vec<_> = STAGES.into_iter().zip(took).collect();
    tracing::debug!(target: "agentindex::store", chain_id, ?stages, committed = ?started.elapsed(), "batch written");
    Ok(summary)
}

/// Saves fetched documents; says whether what agents declare may have changed.
async fn save_documents(
    pool: &AnyPool,
    results: &[DocumentResult],
    chains: &ChainContexts,
) -> StoreResult<bool> {
    let mut tx = pool.begin().await.context("starting to save documents")?;
    scores_turn(&mut tx).await?;
    let documents::Saved { rated, changed } = documents::save(&mut tx, results).await?;
    // A feedback file can carry a proof of payment: the agents it rates are rescored with the
    // documents, in the same transaction. A chain not being indexed here keeps its rows until
    // its own indexer rescores them.
    for (chain_id, keys) in rated {
        if let Some(chain) = chains.get(&chain_id) {
            reputation::refresh(&mut tx, chain_id, &keys, &chain.rules).await?;
        }
    }
    tx.commit().await.context("committing documents")?;
    Ok(changed)
}

async fn sync_documents(pool: &AnyPool) -> StoreResult<documents::Synced> {
    let mut tx = pool.begin().await.context("starting a documents sync")?;
    scores_turn(&mut tx).await?;
    let synced = documents::sync(&mut tx).await?;
    tx.commit().await.context("committing a documents sync")?;
    Ok(synced)
}

async fn sync_probes(
    pool: &AnyPool,
    now: i64,
    declarations_changed: bool,
) -> StoreResult<super::liveness::Synced> {
    let mut tx = pool.begin().await.context("starting an endpoints sync")?;
    let synced = super::liveness::sync(&mut tx, now, declarations_changed).await?;
    tx.commit().await.context("committing an endpoints sync")?;
    Ok(synced)
}

async fn rewind_chain(pool: &AnyPool, chain: &ChainContext, ancestor: u64) -> StoreResult<u64> {
    let mut tx = pool
        .begin()
        .await
        .context("starting a rewind transaction")?;
    scores_turn(&mut tx).await?;
    let removed = rewind::rewind(&mut tx, chain, ancestor).await?;
    tx.commit().await.context("committing a rewind")?;
    Ok(removed)
}

async fn heads(pool: &AnyPool, chain_id: u64, head: u64, finalized: u64) -> StoreResult<()> {
    let dialect = Dialect::of_pool(pool);
    sqlx::query(&format!(
        "UPDATE {chain_cursor_table} SET head_block = {head}, finalized_block = {finalized} WHERE chain_id = $3",
        chain_cursor_table = chain_cursor::NAME,
        head = dialect.greatest("head_block", "$1"),
        finalized = dialect.greatest("finalized_block", "$2"),
    ))
    .bind(int("head", head)?)
    .bind(int("finalized", finalized)?)
    .bind(int("chain_id", chain_id)?)
    .execute(pool)
    .await
    .context("recording chain heads")?;
    Ok(())
}

async fn adopt_rules(pool: &AnyPool, chain: &ChainContext) -> StoreResult<u64> {
    let mut tx = pool
        .begin()
        .await
        .context("starting to adopt reputation rules")?;
    scores_turn(&mut tx).await?;
    let rescored = reputation::adopt_rules(&mut tx, chain.chain_id, &chain.rules).await?;
    // Every agent was rescored, so reputation is settled wherever the cursor is.
    cursor::settled(&mut tx, chain.chain_id, None).await?;
    tx.commit().await.context("committing a rescore")?;
    Ok(rescored)
}

async fn rescore(pool: &AnyPool, chain: &ChainContext, keys: Vec<String>) -> StoreResult<()> {
    let keys = keys.into_iter().collect();
    let mut tx = pool.begin().await.context("starting a rescore")?;
    scores_turn(&mut tx).await?;
    reputation::refresh(&mut tx, chain.chain_id, &keys, &chain.rules).await?;
    tx.commit().await.context("committing a rescore")
}

/// On PostgreSQL, waits for this transaction's turn to write agents' scores or profiles
/// (`postgres::take_scores_turn`); SQLite's one writer at a time already keeps them apart.
async fn scores_turn(conn: &mut AnyConnection) -> StoreResult<()> {
    if Dialect::of(conn) == Dialect::Postgres {
        postgres::take_scores_turn(conn).await?;
    }
    Ok(())
}
