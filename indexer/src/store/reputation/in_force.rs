//! The trust ranks kept at a chain's settled block: [`roll`] stores those kept at a new block
//! (in force for some group, or about to be) and drops the rest, and says which rollout groups of agents are now under another rank
//! than the one they were scored under (`crate::reputation::rollout` decides who is under which).
//! The block the stored rows were last brought to is kept (`trust_rollout`), so the next settle,
//! after a batch or a rewind, knows which groups to rescore.

use super::ahead::RanksAhead;
use super::trust;
use crate::reputation::{ROLLOUT_GROUPS, ReputationRules};
use crate::schema::trust_rollout;
use crate::store::decode::{self, int};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The block the chain's stored reputation rows were last brought to, if they ever were.
pub(super) async fn applied_block(
    conn: &mut AnyConnection,
    chain_id: u64,
) -> StoreResult<Option<u64>> {
    let block: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT applied_block FROM {trust_rollout_table} WHERE chain_id = $1",
        trust_rollout_table = trust_rollout::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the block trust was applied at")?;
    block
        .map(|b| decode::uint(trust_rollout::NAME, "applied_block", b))
        .transpose()
}

/// Brings the chain's stored ranks to those kept at `head` under `rules` (in force, or about to
/// be) and records `head`: ranks no longer kept are dropped (a rewind drops those above it),
/// missing ones stored (taken from `ahead` when it computed them, else computed here); `force`
/// computes all of them again (new rules). Returns the rollout groups whose agents must be rescored: those under
/// another rank at `head` than at the block the rows were brought to before, or under a rank
/// stored just now; every group the first time or when forced.
pub(super) async fn roll(
    conn: &mut AnyConnection,
    chain_id: u64,
    head: u64,
    rules: &Arc<ReputationRules>,
    force: bool,
    ahead: Option<&RanksAhead>,
) -> StoreResult<BTreeSet<u64>> {
    let params = &rules.trust;
    if let Some(ahead) = ahead {
        ahead.forget_above(head);
    }
    let previous = applied_block(conn, chain_id).await?;
    let wanted = params.epochs_kept(head);
    let stored = trust::stored_epochs(conn, chain_id).await?;
    for epoch in stored.keys() {
        if force || !wanted.contains(epoch) {
            trust::forget(conn, chain_id, *epoch).await?;
        }
    }
    let mut added = BTreeSet::new();
    for epoch in &wanted {
        if !force && stored.contains_key(epoch) {
            continue;
        }
        let started = std::time::Instant::now();
        let ready = match ahead {
            Some(ahead) if !force => ahead.take(*epoch).await,
            _ => None,
        };
        let from_ahead = ready.is_some();
        let (rank, timestamp) = match ready {
            Some(ready) => ready,
            None => trust::compute(conn, chain_id, *epoch, rules).await?,
        };
        trust::store(conn, chain_id, *epoch, timestamp, &rank).await?;
        tracing::info!(
            target: "agentindex::reputation",
            chain_id,
            epoch,
            agents = rank.agents.len(),
            payers = rank.standing.len(),
            iterations = rank.iterations,
            from_ahead,
            elapsed = ?started.elapsed(),
            "trust rank stored"
        );
        added.insert(*epoch);
    }
    record(conn, chain_id, head).await?;
    // The newest epoch reached, not yet kept: computed ahead once this commits.
    let newest = params.epoch_of(head);
    if let Some(ahead) = ahead
        && !wanted.contains(&newest)
    {
        ahead.want(chain_id, newest, rules);
    }
    Ok((0..ROLLOUT_GROUPS)
        .filter(|group| {
            let now = params.epoch_in_force(*group, head);
            force
                || added.contains(&now)
                || previous.is_none_or(|before| params.epoch_in_force(*group, before) != now)
        })
        .collect())
}

/// Records `head` as the block the chain's stored rows are brought to.
async fn record(conn: &mut AnyConnection, chain_id: u64, head: u64) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO {trust_rollout_table} (chain_id, applied_block) VALUES ($1, $2)
         ON CONFLICT (chain_id) DO UPDATE SET applied_block = excluded.applied_block",
        trust_rollout_table = trust_rollout::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(int("head", head)?)
    .execute(&mut *conn)
    .await
    .context("recording the block trust is applied at")?;
    Ok(())
}
