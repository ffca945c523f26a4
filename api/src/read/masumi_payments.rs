//! An agent's Masumi escrows (`masumi_payments`), newest first, and how many ended each way.

use agentindex_indexer::schema::masumi_payments;
use sqlx::AnyPool;

/// One escrow as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct EscrowRow {
    pub(crate) escrow_key: String,
    pub(crate) contract_version: i64,
    pub(crate) buyer: String,
    pub(crate) seller: String,
    pub(crate) unit: String,
    pub(crate) amount: String,
    pub(crate) state: Option<String>,
    pub(crate) outcome: Option<String>,
    pub(crate) locked_block: i64,
    pub(crate) locked_at: i64,
    pub(crate) lock_tx: String,
    pub(crate) settled_block: Option<i64>,
    pub(crate) settled_at: Option<i64>,
}

/// The newest `limit` escrows paying `agent_key`.
pub(crate) async fn newest(
    pool: &AnyPool,
    agent_key: &str,
    limit: i64,
) -> sqlx::Result<Vec<EscrowRow>> {
    sqlx::query_as(&format!(
        "SELECT escrow_key, contract_version, buyer, seller, unit, amount, state, outcome,
                locked_block, locked_at, lock_tx, settled_block, settled_at
         FROM {table} WHERE agent_key = $1
         ORDER BY locked_block DESC, escrow_key DESC LIMIT $2",
        table = masumi_payments::NAME,
    ))
    .bind(agent_key)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// How many escrows paying `agent_key` ended each way (`None`: still open).
pub(crate) async fn outcomes(
    pool: &AnyPool,
    agent_key: &str,
) -> sqlx::Result<Vec<(Option<String>, i64)>> {
    sqlx::query_as(&format!(
        "SELECT outcome, count(*) FROM {table} WHERE agent_key = $1 GROUP BY outcome",
        table = masumi_payments::NAME,
    ))
    .bind(agent_key)
    .fetch_all(pool)
    .await
}
