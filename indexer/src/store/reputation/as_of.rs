//! Reputation as of a past block, for the reputation feed: every agent's, recomputed from its
//! facts up to the block under the trust rank in force there ([`as_of_block`]), and that rank
//! itself ([`trust_rank_at`]).

use super::load::{self, Subject};
use super::trust_inputs::{Rank, inputs_at};
use super::{AGENTS_PER_ROUND, AgentReputation, trust};
use crate::primitives::sql_bound;
use crate::reputation::ReputationRules;
use crate::schema::events;
use crate::store::decode::{self, int};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// The trust rank of `chain_id` as of the epoch of `block`: the one in force for every agent
/// once its rollout is over.
pub(in crate::store) async fn trust_rank_at(
    conn: &mut AnyConnection,
    chain_id: u64,
    block: u64,
    rules: &ReputationRules,
) -> StoreResult<(crate::reputation::TrustRank, u64)> {
    trust::compute(conn, chain_id, rules.trust.epoch_of(block), rules).await
}

/// Every agent of `chain_id` registered by `block`, with its reputation as of `block`, in key
/// order, handed to `page` a round (1,000) at a time. All pages come from one read transaction,
/// so a batch committed meanwhile cannot make the pages disagree.
pub(in crate::store) async fn as_of_block(
    conn: &mut AnyConnection,
    chain_id: u64,
    block: u64,
    rules: &ReputationRules,
    mut page: impl FnMut(Vec<AgentReputation>),
) -> StoreResult<()> {
    let timestamp: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT block_timestamp FROM {events_table} WHERE chain_id = $1 AND block_number <= $2
         ORDER BY block_number DESC LIMIT 1",
        events_table = events::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(sql_bound(block))
    .fetch_optional(&mut *conn)
    .await
    .context("reading the time of a feed's block")?;
    let timestamp = decode::uint(events::NAME, "block_timestamp", timestamp.unwrap_or(0))?;
    // The ranks in force at the block (one, or two during a rollout): stored ones where the
    // chain holds them, else computed for the feed.
    let stored = trust::stored_epochs(conn, chain_id).await?;
    let mut ranks = BTreeMap::new();
    for epoch in rules.trust.epochs_in_force(block) {
        let rank = match stored.get(&epoch) {
            Some(seeded) => Rank::Stored { seeded: *seeded },
            None => Rank::Computed(trust::compute(conn, chain_id, epoch, rules).await?.0),
        };
        ranks.insert(epoch, rank);
    }
    let mut after = String::new();
    loop {
        crate::priority::offer_core();
        let subjects: Vec<Subject> =
            load::subjects_at(conn, chain_id, block, &after, AGENTS_PER_ROUND).await?;
        let Some(last) = subjects.last() else {
            return Ok(());
        };
        after = last.key.clone();
        let mut loaded = load::facts(conn, chain_id, &subjects, block).await?;
        inputs_at(conn, chain_id, block, &ranks, &mut loaded, &rules.trust).await?;
        // Today's availability: probes are not kept by block.
        if rules.weights.availability > 0.0 {
            load::availability(conn, &mut loaded).await?;
        }
        page(
            subjects
                .iter()
                .map(|subject| {
                    let facts = loaded.remove(&subject.key).unwrap_or_default().facts;
                    AgentReputation::of(subject, &facts, chain_id, block, timestamp, rules)
                })
                .collect(),
        );
    }
}
