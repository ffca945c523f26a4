//! Reading an agent's credited payments back from the store, for reputation.

use super::{QueryContext, StoreResult};
use crate::reputation::Payment;
use sqlx::SqlitePool;

/// The payments credited to `agent_key` up to and including `up_to_block`, in chain order.
pub(super) async fn of_agent(
    pool: &SqlitePool,
    agent_key: &str,
    up_to_block: u64,
) -> StoreResult<Vec<Payment>> {
    let rows: Vec<(String, String, String, String, i64, i64, bool)> = sqlx::query_as(
        "SELECT payer, payee, token, amount, block_number, timestamp, eip3009 FROM payments
         WHERE agent_key = ? AND block_number <= ? ORDER BY block_number, log_index",
    )
    .bind(agent_key)
    .bind(up_to_block.min(i64::MAX as u64) as i64)
    .fetch_all(pool)
    .await
    .context("reading an agent's payments")?;
    Ok(rows
        .into_iter()
        .filter_map(|(payer, payee, token, amount, block, timestamp, eip3009)| {
            Some(Payment {
                payer: payer.parse().ok()?,
                payee: payee.parse().ok()?,
                token: token.parse().ok()?,
                amount: amount.parse().ok()?,
                block: block as u64,
                timestamp: timestamp as u64,
                eip3009,
            })
        })
        .collect())
}
