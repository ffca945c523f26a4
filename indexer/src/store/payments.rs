//! Reading an agent's credited payments back from the store, for reputation.

use super::reputation::payment;
use super::{QueryContext, StoreResult};
use crate::reputation::Payment;
use sqlx::SqlitePool;

/// The payments credited to `agent_key` up to and including `up_to_block`, in chain order.
pub(super) async fn of_agent(
    pool: &SqlitePool,
    agent_key: &str,
    up_to_block: u64,
) -> StoreResult<Vec<Payment>> {
    let rows = sqlx::query(
        "SELECT payer, payee, token, amount, block_number, log_index, timestamp, eip3009 FROM payments
         WHERE agent_key = ? AND block_number <= ? ORDER BY block_number, log_index",
    )
    .bind(agent_key)
    .bind(up_to_block.min(i64::MAX as u64) as i64)
    .fetch_all(pool)
    .await
    .context("reading an agent's payments")?;
    Ok(rows.iter().filter_map(payment).collect())
}
