//! Per-chain progress, the reorg window, and the sets the follower watches, as the store holds
//! them.

use super::{Dialect, QueryContext, StoreResult, decode};
use crate::primitives::BlockRef;
use crate::primitives::sql_bound;
use crate::schema::{block_window, chain_cursor, payment_bindings, watched_agents};
use crate::sources::hex_b256;
use crate::store::decode::int;
use alloy::primitives::{Address, B256};
use sqlx::{AnyConnection, AnyPool};
use std::collections::BTreeMap;

/// Where a chain's index stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainProgress {
    /// The next block to index (the cursor plus one).
    pub next_block: u64,
    /// Hash of the last indexed block, when known.
    pub indexed_hash: Option<B256>,
    /// The finalized block last seen.
    pub finalized_block: u64,
    /// The head last seen.
    pub head_block: u64,
}

/// A chain's status as `/status` and `indexerStatus` show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChainStatus {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// Configured name.
    pub name: String,
    /// Latest head seen.
    pub head_block: u64,
    /// Latest finalized block seen.
    pub finalized_block: u64,
    /// Last block fully indexed (`None` before the first).
    pub indexed_block: Option<u64>,
    /// Last block up to which reputation is settled: every agent with facts at or below it is
    /// rescored (`None` before the first settle). It trails `indexed_block` during a backfill.
    pub reputation_settled_block: Option<u64>,
    /// Blocks between the head and the index.
    pub lag: u64,
}

/// Addresses the follower fetches logs for beyond the configured contracts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchedSets {
    /// Agent contracts and the first block to take their logs from.
    pub agents: BTreeMap<Address, u64>,
    /// Payment addresses and the first block any agent was bound to them.
    pub payment_addresses: BTreeMap<Address, u64>,
}

pub(super) async fn init(
    conn: &mut AnyConnection,
    chain_id: u64,
    name: &str,
    start_block: u64,
) -> StoreResult<()> {
    let before_start = int("start_block", start_block)? - 1;
    sqlx::query(&format!(
        "INSERT INTO {} (chain_id, name, indexed_block, settled_block) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain_id) DO UPDATE SET name = excluded.name",
        chain_cursor::NAME
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(name)
    .bind(before_start)
    .bind(before_start)
    .execute(&mut *conn)
    .await
    .context("initialising a chain cursor")?;
    Ok(())
}

/// Records that `chain_id`'s reputation is settled up to `block` (no agent is marked), or up to
/// the cursor when `block` is `None`.
pub(super) async fn settled(
    conn: &mut AnyConnection,
    chain_id: u64,
    block: Option<u64>,
) -> StoreResult<()> {
    sqlx::query(&format!(
        "UPDATE {} SET settled_block = coalesce($1, indexed_block) WHERE chain_id = $2",
        chain_cursor::NAME
    ))
    .bind(block.map(sql_bound))
    .bind(int("chain_id", chain_id)?)
    .execute(&mut *conn)
    .await
    .context("recording where reputation is settled")?;
    Ok(())
}

pub(super) async fn indexed_block(conn: &mut AnyConnection, chain_id: u64) -> StoreResult<i64> {
    sqlx::query_scalar(&format!(
        "SELECT indexed_block FROM {} WHERE chain_id = $1",
        chain_cursor::NAME
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *conn)
    .await
    .context("reading a chain cursor")
    .map(|v| v.unwrap_or(-1))
}

pub(super) async fn advance(
    conn: &mut AnyConnection,
    chain_id: u64,
    to_block: u64,
    to_hash: Option<&B256>,
    finalized: u64,
    head: u64,
) -> StoreResult<()> {
    let dialect = Dialect::of(conn);
    sqlx::query(&format!(
        "UPDATE {chain_cursor_table} SET indexed_block = $1, indexed_hash = $2, finalized_block = {finalized},
            head_block = {head} WHERE chain_id = $5",
        chain_cursor_table = chain_cursor::NAME,
        finalized = dialect.greatest("finalized_block", "$3"),
        head = dialect.greatest("head_block", "$4"),
    ))
    .bind(int("to_block", to_block)?)
    .bind(to_hash.map(hex_b256))
    .bind(int("finalized", finalized)?)
    .bind(int("head", head)?)
    .bind(int("chain_id", chain_id)?)
    .execute(&mut *conn)
    .await
    .context("advancing a chain cursor")?;
    Ok(())
}

pub(super) async fn remember_blocks(
    conn: &mut AnyConnection,
    chain_id: u64,
    blocks: &[BlockRef],
    keep_from: u64,
) -> StoreResult<()> {
    for block in blocks {
        sqlx::query(&format!(
            "INSERT INTO {} ({}) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (chain_id, number) DO UPDATE
               SET hash = excluded.hash, parent_hash = excluded.parent_hash, timestamp = excluded.timestamp",
            block_window::NAME,
            block_window::TABLE.column_list()
        ))
        .bind(int("chain_id", chain_id)?)
        .bind(int("number", block.number)?)
        .bind(hex_b256(&block.hash))
        .bind(hex_b256(&block.parent_hash))
        .bind(int("timestamp", block.timestamp)?)
        .execute(&mut *conn)
        .await
        .context("remembering a block hash")?;
    }
    sqlx::query(&format!(
        "DELETE FROM {} WHERE chain_id = $1 AND number < $2",
        block_window::NAME
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(int("keep_from", keep_from)?)
    .execute(&mut *conn)
    .await
    .context("pruning the reorg window")?;
    Ok(())
}

/// Moves `chain_id`'s cursor back to `ancestor` after a reorg (never forward): the reorg window
/// loses the blocks above it, the cursor takes the ancestor's hash as the window remembers it,
/// and reputation is settled there (a rewind rescores every agent it marked).
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    chain_id: u64,
    ancestor: u64,
) -> StoreResult<()> {
    let (chain_key, above) = (int("chain_id", chain_id)?, int("ancestor", ancestor)?);
    sqlx::query(&format!(
        "DELETE FROM {block_window_table} WHERE chain_id = $1 AND number > $2",
        block_window_table = block_window::NAME,
    ))
    .bind(chain_key)
    .bind(above)
    .execute(&mut *conn)
    .await
    .context("trimming the reorg window")?;
    let hash: Option<String> = sqlx::query_scalar(&format!(
        "SELECT hash FROM {block_window_table} WHERE chain_id = $1 AND number = $2",
        block_window_table = block_window::NAME,
    ))
    .bind(chain_key)
    .bind(above)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the ancestor's hash")?;
    let back = Dialect::of(conn).least("indexed_block", "$1");
    sqlx::query(&format!(
        "UPDATE {chain_cursor_table} SET indexed_block = {back}, indexed_hash = $2, settled_block = {back}
         WHERE chain_id = $3",
        chain_cursor_table = chain_cursor::NAME,
    ))
    .bind(above)
    .bind(hash)
    .bind(chain_key)
    .execute(&mut *conn)
    .await
    .context("moving a chain cursor back")?;
    Ok(())
}

/// A `chain_cursor` row as progress and status read it.
#[derive(sqlx::FromRow)]
struct CursorRow {
    chain_id: i64,
    name: String,
    indexed_block: i64,
    indexed_hash: Option<String>,
    finalized_block: i64,
    head_block: i64,
    settled_block: i64,
}

/// A block number that is -1 before the first block, as `None` then.
fn block_or_none(column: &str, value: i64) -> StoreResult<Option<u64>> {
    match value {
        -1 => Ok(None),
        value => decode::uint(chain_cursor::NAME, column, value).map(Some),
    }
}

/// The chain's progress, if it was ever initialised.
pub(super) async fn progress(pool: &AnyPool, chain_id: u64) -> StoreResult<Option<ChainProgress>> {
    let row: Option<CursorRow> = sqlx::query_as(&format!(
        "SELECT {} FROM {} WHERE chain_id = $1",
        chain_cursor::TABLE.column_list(),
        chain_cursor::NAME
    ))
    .bind(decode::int("chain_id", chain_id)?)
    .fetch_optional(pool)
    .await
    .context("reading chain progress")?;
    let Some(row) = row else {
        return Ok(None);
    };
    let indexed = block_or_none("indexed_block", row.indexed_block)?;
    Ok(Some(ChainProgress {
        next_block: indexed.map_or(0, |block| block + 1),
        indexed_hash: decode::parse_opt(
            chain_cursor::NAME,
            "indexed_hash",
            row.indexed_hash.as_deref(),
        )?,
        finalized_block: decode::uint(chain_cursor::NAME, "finalized_block", row.finalized_block)?,
        head_block: decode::uint(chain_cursor::NAME, "head_block", row.head_block)?,
    }))
}

/// A `block_window` row.
#[derive(sqlx::FromRow)]
struct WindowRow {
    number: i64,
    hash: String,
    parent_hash: String,
    timestamp: i64,
}

/// The remembered unfinalized blocks, oldest first.
pub(super) async fn window(pool: &AnyPool, chain_id: u64) -> StoreResult<Vec<BlockRef>> {
    let rows: Vec<WindowRow> = sqlx::query_as(&format!(
        "SELECT number, hash, parent_hash, timestamp FROM {} WHERE chain_id = $1 ORDER BY number",
        block_window::NAME
    ))
    .bind(decode::int("chain_id", chain_id)?)
    .fetch_all(pool)
    .await
    .context("reading the reorg window")?;
    let table = block_window::NAME;
    rows.into_iter()
        .map(|row| {
            Ok(BlockRef {
                number: decode::uint(table, "number", row.number)?,
                hash: decode::parse(table, "hash", &row.hash)?,
                parent_hash: decode::parse(table, "parent_hash", &row.parent_hash)?,
                timestamp: decode::uint(table, "timestamp", row.timestamp)?,
            })
        })
        .collect()
}

/// An address and the first block it matters from.
#[derive(sqlx::FromRow)]
struct WatchedRow {
    address: String,
    from_block: i64,
}

/// Agent contracts and payment addresses discovered so far on the chain.
pub(super) async fn watched(pool: &AnyPool, chain_id: u64) -> StoreResult<WatchedSets> {
    let chain = decode::int("chain_id", chain_id)?;
    let agents: Vec<WatchedRow> = sqlx::query_as(&format!(
        "SELECT address, min(from_block) AS from_block FROM {} WHERE chain_id = $1 GROUP BY address",
        watched_agents::NAME
    ))
    .bind(chain)
    .fetch_all(pool)
    .await
    .context("reading watched agents")?;
    let bindings: Vec<WatchedRow> = sqlx::query_as(&format!(
        "SELECT address, min(block_number) AS from_block FROM {}
         WHERE chain_id = $1 AND address != '' GROUP BY address",
        payment_bindings::NAME
    ))
    .bind(chain)
    .fetch_all(pool)
    .await
    .context("reading payment addresses")?;
    let read = |table: &str, rows: Vec<WatchedRow>| {
        rows.into_iter()
            .map(|row| {
                Ok((
                    decode::parse::<Address>(table, "address", &row.address)?,
                    decode::uint(table, "from_block", row.from_block)?,
                ))
            })
            .collect::<StoreResult<BTreeMap<_, _>>>()
    };
    Ok(WatchedSets {
        agents: read(watched_agents::NAME, agents)?,
        payment_addresses: read(payment_bindings::NAME, bindings)?,
    })
}

/// Status of every chain ever indexed, by chain id.
pub(super) async fn statuses(pool: &AnyPool) -> StoreResult<Vec<ChainStatus>> {
    let rows: Vec<CursorRow> = sqlx::query_as(&format!(
        "SELECT {} FROM {} ORDER BY chain_id",
        chain_cursor::TABLE.column_list(),
        chain_cursor::NAME
    ))
    .fetch_all(pool)
    .await
    .context("reading chain statuses")?;
    rows.into_iter()
        .map(|row| {
            let head = decode::uint(chain_cursor::NAME, "head_block", row.head_block)?;
            let indexed = block_or_none("indexed_block", row.indexed_block)?;
            Ok(ChainStatus {
                chain_id: decode::uint(chain_cursor::NAME, "chain_id", row.chain_id)?,
                name: row.name,
                head_block: head,
                finalized_block: decode::uint(
                    chain_cursor::NAME,
                    "finalized_block",
                    row.finalized_block,
                )?,
                indexed_block: indexed,
                reputation_settled_block: block_or_none("settled_block", row.settled_block)?,
                lag: head.saturating_sub(indexed.unwrap_or(0)),
            })
        })
        .collect()
}
