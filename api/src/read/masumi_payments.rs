//! Masumi agents' escrows (`masumi_payments`), newest first, and how many ended each way, for
//! many agents at once (the GraphQL loaders ask for every agent of a page together).

use super::in_list;
use super::pages::{PARENTS_PER_STATEMENT, union_of_pages};
use agentindex_indexer::schema::masumi_payments;
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// One escrow as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct EscrowRow {
    pub(crate) agent_key: String,
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

/// The newest `limit` escrows paying each of `agents`, newest first (one `UNION ALL` branch per
/// agent, each along the `(agent_key, locked_block, escrow_key)` index).
pub(crate) async fn newest(
    pool: &AnyPool,
    agents: &[String],
    limit: i64,
) -> sqlx::Result<HashMap<String, Vec<EscrowRow>>> {
    let mut out: HashMap<String, Vec<EscrowRow>> = HashMap::new();
    for chunk in agents.chunks(PARENTS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Any>::new("");
        union_of_pages(&mut query, chunk, |query, _, agent| {
            query.push(format!(
                "SELECT agent_key, escrow_key, contract_version, buyer, seller, unit, amount,
                        state, outcome, locked_block, locked_at, lock_tx, settled_block, settled_at
                 FROM {table} WHERE agent_key = ",
                table = masumi_payments::NAME,
            ));
            query.push_bind(agent.clone());
            query.push(" ORDER BY locked_block DESC, escrow_key DESC LIMIT ");
            query.push_bind(limit);
        });
        let rows: Vec<EscrowRow> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for row in rows {
            out.entry(row.agent_key.clone()).or_default().push(row);
        }
    }
    for rows in out.values_mut() {
        rows.sort_by(|a, b| (b.locked_block, &b.escrow_key).cmp(&(a.locked_block, &a.escrow_key)));
    }
    Ok(out)
}

/// How many escrows paying each of `agents` ended each way (`None`: still open).
pub(crate) async fn outcomes(
    pool: &AnyPool,
    agents: &[String],
) -> sqlx::Result<HashMap<String, Vec<(Option<String>, i64)>>> {
    let mut out: HashMap<String, Vec<(Option<String>, i64)>> = HashMap::new();
    for chunk in agents.chunks(PARENTS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT agent_key, outcome, count(*) FROM {table} WHERE agent_key",
            table = masumi_payments::NAME,
        ));
        in_list(&mut query, chunk, " GROUP BY agent_key, outcome");
        let rows: Vec<(String, Option<String>, i64)> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for (agent, outcome, count) in rows {
            out.entry(agent).or_default().push((outcome, count));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "masumi_payments_tests.rs"]
mod tests;
