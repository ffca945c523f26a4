//! The agents stage: each agent's current state (the `agents` row), recomputed from its facts
//! for the agents a batch touched, or the undone facts of a rewind named (`store/agents/`, the
//! folds being the pure functions of `crate::agents`).

use super::{BatchContext, RewindContext};
use crate::schema::agents;
use crate::store::StoreResult;
use crate::store::agents::{refresh, touched_above};
use sqlx::AnyConnection;

/// The tables the stage owns.
pub(super) const TABLES: &[&str] = &[agents::NAME];

/// Recomputes the agents the batch's events touched.
pub(super) async fn apply(
    conn: &mut AnyConnection,
    batch: &mut BatchContext<'_>,
) -> StoreResult<()> {
    let touched = std::mem::take(&mut batch.prepared.touched);
    batch.summary.agents_refreshed = (touched.erc8004.len() + touched.contracts.len()) as u64;
    refresh(conn, batch.prepared.batch.chain.chain_id, touched).await
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
