//! The agents stage: each agent's current state (the `agents` row), recomputed from its facts
//! for the agents a batch touched, or the undone facts of a rewind named (`store/agents/`, the
//! folds being the pure functions of `crate::agents`).

use super::{BatchContext, RewindContext};
use crate::schema::{agents, masumi_agents, masumi_payments};
use crate::store::agents::{refresh, touched_above};
use crate::store::{Dialect, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// The tables the stage owns.
pub(super) const TABLES: &[&str] = &[agents::NAME, masumi_agents::NAME, masumi_payments::NAME];

/// Recomputes the agents the batch's events touched, then on PostgreSQL analyzes `agents` when
/// it has grown enough.
pub(super) async fn apply(
    conn: &mut AnyConnection,
    batch: &mut BatchContext<'_>,
) -> StoreResult<()> {
    let touched = std::mem::take(&mut batch.prepared.touched);
    let refreshed = (touched.erc8004.len() + touched.contracts.len() + touched.masumi.len()) as u64;
    batch.summary.agents_refreshed = refreshed;
    refresh(conn, batch.prepared.batch.chain.chain_id, touched).await?;
    if batch.dialect == Dialect::Postgres {
        // Every later stage reads agents by token or key: planned on the statistics of the
        // nearly empty table a backfill starts from, those reads walk the chain's agents.
        // (The agents refreshed, new or not, stand for the rows written.)
        let written = BTreeMap::from([(agents::NAME, refreshed)]);
        batch.statistics.after_writing(conn, &written).await?;
    }
    Ok(())
}

/// Notes the agents the facts above the ancestor name.
pub(super) async fn before_rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    rewind.touched = touched_above(conn, rewind.chain.chain_id, rewind.ancestor).await?;
    Ok(())
}

/// Recomputes those agents from the facts that remain (removing the ones left with none).
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    let touched = std::mem::take(&mut rewind.touched);
    refresh(conn, rewind.chain.chain_id, touched).await
}
