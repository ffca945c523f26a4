//! The cursor stage: where the chain's index stands (`chain_cursor`) and the reorg window of
//! recent block hashes (`block_window`), written last so that a batch's cursor moves only with
//! everything derived from it (`store/cursor.rs`).

use super::{BatchContext, RewindContext};
use crate::schema::{block_window, chain_cursor};
use crate::store::{StoreResult, cursor};
use sqlx::AnyConnection;

/// The tables the stage owns.
pub(super) const TABLES: &[&str] = &[chain_cursor::NAME, block_window::NAME];

/// Records where reputation is settled when the batch settled it, remembers the batch's block
/// hashes, and moves the cursor to the batch's last block.
pub(super) async fn apply(
    conn: &mut AnyConnection,
    batch: &mut BatchContext<'_>,
) -> StoreResult<()> {
    let batch = &batch.prepared.batch;
    let chain_id = batch.chain.chain_id;
    if batch.settles {
        cursor::settled(conn, chain_id, Some(batch.to_block)).await?;
    }
    if !batch.window.is_empty() {
        cursor::remember_blocks(conn, chain_id, &batch.window, batch.window_from).await?;
    }
    cursor::advance(
        conn,
        chain_id,
        batch.to_block,
        batch.to_hash.as_ref(),
        batch.finalized,
        batch.head,
    )
    .await
}

/// Moves the cursor back to the ancestor, its reputation settled there, and trims the window.
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    cursor::rewind(conn, rewind.chain.chain_id, rewind.ancestor).await
}
