//! Reading an agent's ERC-8004 feedback back from the fact tables, with revocations applied, for
//! reputation aggregates and `getSummary`.

use super::{QueryContext, StoreResult};
use crate::reputation::FeedbackEntry;
use crate::schema::{feedback, feedback_revocations};
use crate::sources::hex_address;
use crate::store::decode::{self, int};
use alloy::primitives::{Address, U256};
use sqlx::AnyPool;

/// A `feedback` row with whether it was revoked.
#[derive(sqlx::FromRow)]
struct FeedbackRow {
    client: String,
    value: String,
    value_decimals: i64,
    tag1: String,
    tag2: String,
    #[sqlx(try_from = "crate::store::Flag")]
    revoked: bool,
    block_number: i64,
    log_index: i64,
    timestamp: i64,
}

/// Every feedback of token `token_id` of Identity Registry `registry`, in chain order.
pub(super) async fn of_agent(
    pool: &AnyPool,
    chain_id: u64,
    registry: &Address,
    token_id: &U256,
) -> StoreResult<Vec<FeedbackEntry>> {
    let rows: Vec<FeedbackRow> = sqlx::query_as(&format!(
        "SELECT f.client, f.value, f.value_decimals, f.tag1, f.tag2, f.block_number, f.log_index,
                f.timestamp,
                EXISTS (SELECT 1 FROM {feedback_revocations_table} r
                        WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id
                          AND r.client = f.client AND r.feedback_index = f.feedback_index) AS revoked
         FROM {feedback_table} f WHERE f.chain_id = $1 AND f.registry = $2 AND f.token_id = $3
         ORDER BY f.block_number, f.log_index",
        feedback_revocations_table = feedback_revocations::NAME,
        feedback_table = feedback::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(hex_address(registry))
    .bind(token_id.to_string())
    .fetch_all(pool)
    .await
    .context("reading an agent's feedback")?;
    rows.into_iter()
        .map(|row| {
            Ok(FeedbackEntry {
                client: decode::parse(feedback::NAME, "client", &row.client)?,
                value: decode::parse(feedback::NAME, "value", &row.value)?,
                decimals: decode::parse(
                    feedback::NAME,
                    "value_decimals",
                    &row.value_decimals.to_string(),
                )?,
                tag1: row.tag1,
                tag2: row.tag2,
                revoked: row.revoked,
                position: (
                    decode::uint(feedback::NAME, "block_number", row.block_number)?,
                    decode::uint(feedback::NAME, "log_index", row.log_index)?,
                ),
                timestamp: decode::uint(feedback::NAME, "timestamp", row.timestamp)?,
                // getSummary reads no feedback file.
                proof: None,
            })
        })
        .collect()
}
