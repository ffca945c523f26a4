//! Reading an agent's credited payments back from the store, for reputation.

use super::reputation::PaymentFields;
use super::{QueryContext, StoreResult};
use crate::primitives::sql_bound;
use crate::reputation::Payment;
use sqlx::AnyPool;

/// The payments credited to `agent_key` up to and including `up_to_block`, in chain order.
pub(super) async fn of_agent(
    pool: &AnyPool,
    agent_key: &str,
    up_to_block: u64,
) -> StoreResult<Vec<Payment>> {
    let rows: Vec<PaymentRow> = sqlx::query_as(
        "SELECT payer, payee, token, amount, block_number, log_index, timestamp, scheme IS NOT NULL AS x402, tx_hash FROM payments
         WHERE agent_key = $1 AND block_number <= $2 ORDER BY block_number, log_index",
    )
    .bind(agent_key)
    .bind(sql_bound(up_to_block))
    .fetch_all(pool)
    .await
    .context("reading an agent's payments")?;
    rows.iter()
        .map(|row| {
            PaymentFields {
                payer: &row.payer,
                payee: &row.payee,
                token: &row.token,
                amount: &row.amount,
                block: row.block_number,
                log_index: row.log_index,
                timestamp: row.timestamp,
                x402: row.x402,
                tx_hash: &row.tx_hash,
            }
            .parse()
        })
        .collect()
}

/// A `payments` row as [`of_agent`] reads it.
#[derive(sqlx::FromRow)]
struct PaymentRow {
    payer: String,
    payee: String,
    token: String,
    amount: String,
    block_number: i64,
    log_index: i64,
    timestamp: i64,
    #[sqlx(try_from = "crate::store::Flag")]
    x402: bool,
    tx_hash: String,
}
