//! Reading an agent's ERC-8004 feedback back from the fact tables, with revocations applied, for
//! reputation aggregates and `getSummary`.

use super::{QueryContext, StoreResult};
use crate::reputation::FeedbackEntry;
use crate::sources::hex_address;
use alloy::primitives::{Address, U256};
use sqlx::SqlitePool;

/// Every feedback of token `token_id` of Identity Registry `registry`, in chain order.
pub(super) async fn of_agent(
    pool: &SqlitePool,
    chain_id: u64,
    registry: &Address,
    token_id: &U256,
) -> StoreResult<Vec<FeedbackEntry>> {
    let rows: Vec<(String, String, i64, String, String, bool)> = sqlx::query_as(
        "SELECT f.client, f.value, f.value_decimals, f.tag1, f.tag2,
                EXISTS (SELECT 1 FROM feedback_revocations r
                        WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id
                          AND r.client = f.client AND r.feedback_index = f.feedback_index) AS revoked
         FROM feedback f WHERE f.chain_id = ? AND f.registry = ? AND f.token_id = ?
         ORDER BY f.block_number, f.log_index",
    )
    .bind(chain_id as i64)
    .bind(hex_address(registry))
    .bind(token_id.to_string())
    .fetch_all(pool)
    .await
    .context("reading an agent's feedback")?;
    Ok(rows
        .into_iter()
        .filter_map(|(client, value, decimals, tag1, tag2, revoked)| {
            Some(FeedbackEntry {
                client: client.parse().ok()?,
                value: value.parse().ok()?,
                decimals: u8::try_from(decimals).ok()?,
                tag1,
                tag2,
                revoked,
            })
        })
        .collect())
}
