//! Which agents' reputation facts lie in a run of blocks: the agents a batch touched, or those a
//! reorg is about to undo facts of.

use crate::store::{QueryContext, StoreResult};
use sqlx::SqliteConnection;
use std::collections::BTreeSet;

/// Tables whose rows name an ERC-8004 agent by (identity registry, token id).
const BY_TOKEN: [&str; 9] = [
    "identity_registrations",
    "identity_transfers",
    "identity_uri_updates",
    "identity_metadata",
    "feedback",
    "feedback_revocations",
    "feedback_responses",
    "validation_requests",
    "validation_responses",
];

/// Tables whose rows name an agent contract, and the column that does.
const BY_CONTRACT: [(&str, &str); 6] = [
    ("agent_contract_events", "agent"),
    ("agent_snapshots", "agent"),
    ("registry_events", "agent"),
    ("ratings", "agent"),
    ("withdrawals", "agent"),
    ("watched_agents", "address"),
];

/// Keys of the agents with facts on `chain_id` in blocks `from..=to`. Operator approvals for all
/// of an owner's agents are left out: they only matter to payments after them, which touch the
/// agent themselves.
pub(in crate::store) async fn touched_in(
    conn: &mut SqliteConnection,
    chain_id: u64,
    from: u64,
    to: u64,
) -> StoreResult<BTreeSet<String>> {
    let (chain, from, to) = (chain_id as i64, clamp(from), clamp(to));
    let mut keys: BTreeSet<String> = sqlx::query_scalar(
        "SELECT DISTINCT agent_key FROM payments WHERE chain_id = ? AND block_number BETWEEN ? AND ?",
    )
    .bind(chain)
    .bind(from)
    .bind(to)
    .fetch_all(&mut *conn)
    .await
    .context("finding agents paid in a run of blocks")?
    .into_iter()
    .collect();
    for table in BY_TOKEN
        .iter()
        .map(|t| (*t, ""))
        .chain([("identity_approvals", "AND token_id IS NOT NULL")])
    {
        let (table, extra) = table;
        let rows: Vec<(String, String)> = sqlx::query_as(&format!(
            "SELECT DISTINCT registry, token_id FROM {table}
             WHERE chain_id = ? AND block_number BETWEEN ? AND ? {extra}"
        ))
        .bind(chain)
        .bind(from)
        .bind(to)
        .fetch_all(&mut *conn)
        .await
        .context("finding ERC-8004 agents with facts in a run of blocks")?;
        keys.extend(
            rows.into_iter()
                .map(|(registry, token)| format!("{chain_id}:{registry}:{token}")),
        );
    }
    for (table, column) in BY_CONTRACT {
        let agents: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT DISTINCT {column} FROM {table} WHERE chain_id = ? AND block_number BETWEEN ? AND ?"
        ))
        .bind(chain)
        .bind(from)
        .bind(to)
        .fetch_all(&mut *conn)
        .await
        .context("finding agent contracts with facts in a run of blocks")?;
        keys.extend(
            agents
                .into_iter()
                .map(|agent| format!("{chain_id}:{agent}")),
        );
    }
    Ok(keys)
}

fn clamp(block: u64) -> i64 {
    block.min(i64::MAX as u64) as i64
}
