//! Which agents need rescoring: every agent with facts in a run of blocks is marked dirty (in
//! `reputation_dirty`, in the transaction that wrote or is about to remove those facts), and
//! [`settle`](super::settle) rescores the marked ones. Marks survive a crash with the facts they
//! belong to.

use crate::primitives::sql_bound;
use crate::schema::{
    agent_contract_events, agent_snapshots, feedback, feedback_responses, feedback_revocations,
    identity_approvals, identity_metadata, identity_registrations, identity_transfers,
    identity_uri_updates, masumi_escrow_actions, masumi_registry_actions, outflows,
    payment_bindings, payments, ratings, registry_events, reputation_dirty, validation_requests,
    validation_responses, watched_agents, withdrawals,
};
use crate::store::decode::int;
use crate::store::sql::{contract_key_sql, erc8004_key_sql};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;

/// Tables whose rows name an ERC-8004 agent by (identity registry, token id).
const BY_TOKEN: [&str; 9] = [
    identity_registrations::NAME,
    identity_transfers::NAME,
    identity_uri_updates::NAME,
    identity_metadata::NAME,
    feedback::NAME,
    feedback_revocations::NAME,
    feedback_responses::NAME,
    validation_requests::NAME,
    validation_responses::NAME,
];

/// Tables whose rows name an agent contract, and the column that does.
const BY_CONTRACT: [(&str, &str); 6] = [
    (agent_contract_events::NAME, "agent"),
    (agent_snapshots::NAME, "agent"),
    (registry_events::NAME, "agent"),
    (ratings::NAME, "agent"),
    (withdrawals::NAME, "agent"),
    (watched_agents::NAME, "address"),
];

/// Marks the agents with facts on `chain_id` in blocks `from..=to`. Operator approvals for all of
/// an owner's agents are left out: they only matter to payments after them, which mark the agent
/// themselves.
pub(in crate::store) async fn mark_dirty(
    conn: &mut AnyConnection,
    chain_id: u64,
    from: u64,
    to: u64,
) -> StoreResult<()> {
    let mut selects: Vec<String> = vec![
        format!(
            "SELECT agent_key AS k FROM {} WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3",
            payments::NAME
        ),
        // An outflow is stored once for every agent its sender is bound to: every agent ever
        // bound there is marked (one bound there at another time is rescored to the same row).
        format!(
            "SELECT agent_key AS k FROM {bindings} WHERE chain_id = $1 AND address IN
             (SELECT from_address FROM {outflows}
               WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3)",
            bindings = payment_bindings::NAME,
            outflows = outflows::NAME
        ),
    ];
    selects.extend(BY_TOKEN.iter().map(|table| {
        format!(
            "SELECT {} AS k FROM {table}
             WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3",
            erc8004_key_sql("$1", "registry", "token_id")
        )
    }));
    // Masumi agents: their registry entries, and the escrows naming them.
    selects.extend(
        [masumi_registry_actions::NAME, masumi_escrow_actions::NAME].map(|table| {
            format!(
                "SELECT agent_key AS k FROM {table}
                 WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3 AND agent_key IS NOT NULL"
            )
        }),
    );
    selects.push(format!(
        "SELECT {} AS k FROM {identity_approvals_table}
         WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3 AND token_id IS NOT NULL",
        erc8004_key_sql("$1", "registry", "token_id"),
        identity_approvals_table = identity_approvals::NAME
    ));
    selects.extend(BY_CONTRACT.iter().map(|(table, column)| {
        format!(
            "SELECT {} AS k FROM {table}
             WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3",
            contract_key_sql("$1", column)
        )
    }));
    // One statement for every table: a batch marks its agents in one round trip.
    sqlx::query(&format!(
        "INSERT INTO {reputation_dirty_table} (chain_id, agent_key) SELECT DISTINCT $1, k FROM ({}) AS t WHERE true
         ON CONFLICT DO NOTHING",
        selects.join(" UNION ALL "), reputation_dirty_table = reputation_dirty::NAME))
    .bind(int("chain_id", chain_id)?)
    .bind(sql_bound(from))
    .bind(sql_bound(to))
    .execute(&mut *conn)
    .await
    .context("marking agents to rescore")?;
    Ok(())
}
