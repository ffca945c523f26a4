//! Per-chain progress, the reorg window, and the sets the follower watches, as the store holds
//! them.

use super::{QueryContext, StoreResult};
use crate::primitives::BlockRef;
use crate::sources::hex_b256;
use alloy::primitives::{Address, B256};
use sqlx::{Row, SqliteConnection, SqlitePool};
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
    conn: &mut SqliteConnection,
    chain_id: u64,
    name: &str,
    start_block: u64,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO chain_cursor (chain_id, name, indexed_block, settled_block) VALUES (?, ?, ?, ?)
         ON CONFLICT (chain_id) DO UPDATE SET name = excluded.name",
    )
    .bind(chain_id as i64)
    .bind(name)
    .bind(start_block as i64 - 1)
    .bind(start_block as i64 - 1)
    .execute(&mut *conn)
    .await
    .context("initialising a chain cursor")?;
    Ok(())
}

/// Records that `chain_id`'s reputation is settled up to `block` (no agent is marked), or up to
/// the cursor when `block` is `None`.
pub(super) async fn settled(
    conn: &mut SqliteConnection,
    chain_id: u64,
    block: Option<u64>,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE chain_cursor SET settled_block = coalesce(?, indexed_block) WHERE chain_id = ?",
    )
    .bind(block.map(|b| b.min(i64::MAX as u64) as i64))
    .bind(chain_id as i64)
    .execute(&mut *conn)
    .await
    .context("recording where reputation is settled")?;
    Ok(())
}

pub(super) async fn indexed_block(conn: &mut SqliteConnection, chain_id: u64) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT indexed_block FROM chain_cursor WHERE chain_id = ?")
        .bind(chain_id as i64)
        .fetch_optional(&mut *conn)
        .await
        .context("reading a chain cursor")
        .map(|v| v.unwrap_or(-1))
}

pub(super) async fn advance(
    conn: &mut SqliteConnection,
    chain_id: u64,
    to_block: u64,
    to_hash: Option<&B256>,
    finalized: u64,
    head: u64,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE chain_cursor SET indexed_block = ?, indexed_hash = ?,
            finalized_block = max(finalized_block, ?), head_block = max(head_block, ?)
         WHERE chain_id = ?",
    )
    .bind(to_block as i64)
    .bind(to_hash.map(hex_b256))
    .bind(finalized as i64)
    .bind(head as i64)
    .bind(chain_id as i64)
    .execute(&mut *conn)
    .await
    .context("advancing a chain cursor")?;
    Ok(())
}

pub(super) async fn remember_blocks(
    conn: &mut SqliteConnection,
    chain_id: u64,
    blocks: &[BlockRef],
    keep_from: u64,
) -> StoreResult<()> {
    for block in blocks {
        sqlx::query(
            "INSERT OR REPLACE INTO block_window (chain_id, number, hash, parent_hash, timestamp) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(chain_id as i64)
        .bind(block.number as i64)
        .bind(hex_b256(&block.hash))
        .bind(hex_b256(&block.parent_hash))
        .bind(block.timestamp as i64)
        .execute(&mut *conn)
        .await
        .context("remembering a block hash")?;
    }
    sqlx::query("DELETE FROM block_window WHERE chain_id = ? AND number < ?")
        .bind(chain_id as i64)
        .bind(keep_from as i64)
        .execute(&mut *conn)
        .await
        .context("pruning the reorg window")?;
    Ok(())
}

/// The chain's progress, if it was ever initialised.
pub(super) async fn progress(
    pool: &SqlitePool,
    chain_id: u64,
) -> StoreResult<Option<ChainProgress>> {
    let row = sqlx::query(
        "SELECT indexed_block, indexed_hash, finalized_block, head_block FROM chain_cursor WHERE chain_id = ?",
    )
    .bind(chain_id as i64)
    .fetch_optional(pool)
    .await
    .context("reading chain progress")?;
    Ok(row.map(|row| ChainProgress {
        next_block: (row.get::<i64, _>("indexed_block") + 1) as u64,
        indexed_hash: row
            .get::<Option<String>, _>("indexed_hash")
            .and_then(|h| h.parse().ok()),
        finalized_block: row.get::<i64, _>("finalized_block") as u64,
        head_block: row.get::<i64, _>("head_block") as u64,
    }))
}

/// The remembered unfinalized blocks, oldest first.
pub(super) async fn window(pool: &SqlitePool, chain_id: u64) -> StoreResult<Vec<BlockRef>> {
    let rows = sqlx::query(
        "SELECT number, hash, parent_hash, timestamp FROM block_window WHERE chain_id = ? ORDER BY number",
    )
    .bind(chain_id as i64)
    .fetch_all(pool)
    .await
    .context("reading the reorg window")?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(BlockRef {
                number: row.get::<i64, _>("number") as u64,
                hash: row.get::<String, _>("hash").parse().ok()?,
                parent_hash: row.get::<String, _>("parent_hash").parse().ok()?,
                timestamp: row.get::<i64, _>("timestamp") as u64,
            })
        })
        .collect())
}

/// Agent contracts and payment addresses discovered so far on the chain.
pub(super) async fn watched(pool: &SqlitePool, chain_id: u64) -> StoreResult<WatchedSets> {
    let mut sets = WatchedSets::default();
    let agents = sqlx::query(
        "SELECT address, min(from_block) AS from_block FROM watched_agents WHERE chain_id = ? GROUP BY address",
    )
    .bind(chain_id as i64)
    .fetch_all(pool)
    .await
    .context("reading watched agents")?;
    for row in agents {
        if let Ok(address) = row.get::<String, _>("address").parse() {
            sets.agents
                .insert(address, row.get::<i64, _>("from_block") as u64);
        }
    }
    let bindings = sqlx::query(
        "SELECT address, min(block_number) AS from_block FROM payment_bindings
         WHERE chain_id = ? AND address != '' GROUP BY address",
    )
    .bind(chain_id as i64)
    .fetch_all(pool)
    .await
    .context("reading payment addresses")?;
    for row in bindings {
        if let Ok(address) = row.get::<String, _>("address").parse() {
            sets.payment_addresses
                .insert(address, row.get::<i64, _>("from_block") as u64);
        }
    }
    Ok(sets)
}

/// Status of every chain ever indexed, by chain id.
pub(super) async fn statuses(pool: &SqlitePool) -> StoreResult<Vec<ChainStatus>> {
    let rows = sqlx::query(
        "SELECT chain_id, name, indexed_block, finalized_block, head_block, settled_block
         FROM chain_cursor ORDER BY chain_id",
    )
    .fetch_all(pool)
    .await
    .context("reading chain statuses")?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let indexed: i64 = row.get("indexed_block");
            let head = row.get::<i64, _>("head_block") as u64;
            let indexed = (indexed >= 0).then_some(indexed as u64);
            let settled: i64 = row.get("settled_block");
            ChainStatus {
                chain_id: row.get::<i64, _>("chain_id") as u64,
                name: row.get("name"),
                head_block: head,
                finalized_block: row.get::<i64, _>("finalized_block") as u64,
                indexed_block: indexed,
                reputation_settled_block: (settled >= 0).then_some(settled as u64),
                lag: head.saturating_sub(indexed.unwrap_or(0)),
            }
        })
        .collect())
}
