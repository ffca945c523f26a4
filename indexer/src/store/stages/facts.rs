//! The facts stage: every event's raw row and the facts decoded from it, written as the batch
//! gives them (`store/facts/`). Every other stage derives from these tables; a rewind deletes
//! their rows above the ancestor, first, and the derived stages rebuild from what remains.

use super::{BatchContext, RewindContext, delete_above_by};
use crate::schema::{
    agent_contract_events, agent_snapshots, cardano_script_runs, events, feedback,
    feedback_responses, feedback_revocations, funding_edges, identity_approvals, identity_metadata,
    identity_registrations, identity_transfers, identity_uri_updates, masumi_escrow_actions,
    masumi_registry_actions, outflows, payment_bindings, payments, ratings, registry_events,
    validation_requests, validation_responses, watched_agents, withdrawals, x402_channels,
};
use crate::store::facts;
use crate::store::{Dialect, StoreResult};
use sqlx::AnyConnection;

/// The tables the stage owns: every table whose rows are facts keyed by (chain_id,
/// block_number, …).
pub(super) const TABLES: &[&str] = &[
    events::NAME,
    watched_agents::NAME,
    payment_bindings::NAME,
    identity_registrations::NAME,
    identity_transfers::NAME,
    identity_uri_updates::NAME,
    identity_metadata::NAME,
    identity_approvals::NAME,
    feedback::NAME,
    feedback_revocations::NAME,
    feedback_responses::NAME,
    validation_requests::NAME,
    validation_responses::NAME,
    agent_contract_events::NAME,
    agent_snapshots::NAME,
    registry_events::NAME,
    ratings::NAME,
    withdrawals::NAME,
    payments::NAME,
    outflows::NAME,
    x402_channels::NAME,
    funding_edges::NAME,
    cardano_script_runs::NAME,
    masumi_registry_actions::NAME,
    masumi_escrow_actions::NAME,
];

/// Writes the batch's raw events and facts (counting the events stored), then on PostgreSQL
/// analyzes the tables they have grown enough.
pub(super) async fn apply(
    conn: &mut AnyConnection,
    batch: &mut BatchContext<'_>,
) -> StoreResult<()> {
    batch.summary.events = facts::write(conn, batch.prepared).await?;
    if batch.dialect == Dialect::Postgres {
        batch
            .statistics
            .after_writing(conn, batch.prepared.rows_by_table())
            .await?;
    }
    Ok(())
}

/// Deletes every fact above the ancestor, counting the rows.
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    for table in TABLES {
        // A funding transfer lies below the payment it is kept for: it goes with that payment.
        let column = if *table == funding_edges::NAME {
            "paid_block"
        } else {
            "block_number"
        };
        rewind.removed +=
            delete_above_by(conn, table, column, rewind, "deleting facts above a reorg").await?;
    }
    Ok(())
}
