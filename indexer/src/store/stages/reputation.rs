//! The reputation stage: the agents' stored reputation, the marks of those to rescore, the
//! counted payments and the trust rank (`store/reputation/`, the method being the pure
//! `crate::reputation`). A batch marks the agents with facts in its blocks and, when it settles,
//! rescores the marked ones; a rewind marks the agents with facts above the ancestor before
//! they go and rescores them from what remains. The feeds stored from these rows
//! (`store/stored_feeds.rs`, written by the feed keeper's own command) go with them on a rewind.

use super::{BatchContext, RewindContext, delete_above};
use crate::schema::{
    agent_reputation, counted_payments, reputation_dirty, reputation_feed_pages, reputation_feeds,
    reputation_rules, trust_agents, trust_clusters, trust_epochs, trust_payers, trust_rollout,
};
use crate::store::{StoreResult, reputation, stored_feeds};
use sqlx::AnyConnection;

/// The tables the stage owns.
pub(super) const TABLES: &[&str] = &[
    agent_reputation::NAME,
    reputation_dirty::NAME,
    counted_payments::NAME,
    trust_epochs::NAME,
    trust_agents::NAME,
    trust_payers::NAME,
    trust_clusters::NAME,
    trust_rollout::NAME,
    reputation_rules::NAME,
    reputation_feeds::NAME,
    reputation_feed_pages::NAME,
];

/// Marks the agents with facts in the batch's blocks; rescores every marked agent when the
/// batch settles (it reaches the chain's head or where indexing stops).
pub(super) async fn apply(
    conn: &mut AnyConnection,
    batch: &mut BatchContext<'_>,
) -> StoreResult<()> {
    let batch = &batch.prepared.batch;
    let chain_id = batch.chain.chain_id;
    reputation::mark_dirty(conn, chain_id, batch.from_block, batch.to_block).await?;
    if batch.settles {
        let chain = &batch.chain;
        let ahead = Some(&*chain.ranks_ahead);
        reputation::settle(conn, chain_id, &chain.rules, batch.to_block, ahead).await?;
    }
    Ok(())
}

/// Marks the agents with facts above the ancestor, while those facts are there.
pub(super) async fn before_rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    let chain_id = rewind.chain.chain_id;
    reputation::mark_dirty(conn, chain_id, rewind.ancestor + 1, u64::MAX).await
}

/// Deletes the counted payments and stored feeds above the ancestor, then rescores the marked
/// agents (which rewrites their counted payments).
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    let chain = rewind.chain;
    delete_above(
        conn,
        counted_payments::NAME,
        rewind,
        "deleting counted payments above a reorg",
    )
    .await?;
    stored_feeds::rewind(conn, chain.chain_id, rewind.ancestor).await?;
    let ahead = Some(&*chain.ranks_ahead);
    reputation::settle(conn, chain.chain_id, &chain.rules, rewind.ancestor, ahead).await
}
