//! Stored reputation: one `agent_reputation` row per agent, recomputed for the agents a batch or
//! a reorg touched, and the reputation of every agent as of any indexed block for the feed.
//!
//! A batch marks the agents it touched ([`mark_dirty`]); a batch that reaches the chain's head
//! (or the block indexing stops at) and every rewind rescore the marked ones ([`settle`]) in
//! their own transaction. During a backfill an agent is so rescored once, not once per batch,
//! which keeps the backfill linear in the agent's history; at the tip every batch settles.
//!
//! A stored row is the agent's reputation as of the newest block among its own facts, so it is a
//! pure function of those facts: the same whatever batches they arrived in, and after a reorg the
//! recomputation from what remains gives what a fresh index of the new chain would.

mod ahead;
mod as_of;
mod clusters;
mod in_force;
mod load;
mod rescore;
mod stored;
mod touched;
mod trust;
mod trust_inputs;

use super::{PageWindow, QueryContext, StoreResult};
use crate::reputation::{
    AgentFacts, Evaluation, Exclusion, Payment, ReputationRules, evaluate,
    payments_with_exclusions, rollout_group,
};
use crate::schema::{agents, chain_cursor, reputation_dirty, reputation_rules};
use crate::store::decode::int;
use load::Subject;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use ahead::RanksAhead;
pub(super) use as_of::{as_of_block, trust_rank_at};
use rescore::{Counted, rescore};
pub use stored::StoredReputation;
pub(super) use stored::{stored, stored_in_key_order};
pub(super) use touched::mark_dirty;

/// Agents per round of queries. A rescore holds two rounds at a time (one read while the one
/// before is scored); at 2,000 an agent the two rounds' facts, evaluations and their canonical
/// text were about 25 MiB of the M backfill's peak heap, in its final rescore.
const AGENTS_PER_ROUND: usize = 1000;

/// One agent's reputation as of a block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentReputation {
    /// The agent's key.
    pub agent: String,
    /// Its chain.
    pub chain_id: u64,
    /// The block it is computed as of.
    pub as_of_block: u64,
    /// That block's timestamp (for a feed: the newest indexed block at or before it).
    pub as_of_timestamp: u64,
    /// The composite score, 0 when nothing is known.
    pub score: f64,
    /// Everything that went into it.
    pub evaluation: Evaluation,
}

impl AgentReputation {
    /// `subject`'s reputation from `facts` as of `block` (at `timestamp`) under `rules`.
    fn of(
        subject: &Subject,
        facts: &AgentFacts,
        chain_id: u64,
        block: u64,
        timestamp: u64,
        rules: &ReputationRules,
    ) -> Self {
        let evaluation = evaluate(facts, timestamp, rules);
        Self {
            agent: subject.key.clone(),
            chain_id,
            as_of_block: block,
            as_of_timestamp: timestamp,
            score: evaluation.score(),
            evaluation,
        }
    }
}

/// Recomputes the stored reputation of `keys` on `chain_id`, and the counted payments the trust
/// rank reads; agents that no longer exist lose their row.
pub(super) async fn refresh(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &BTreeSet<String>,
    rules: &ReputationRules,
) -> StoreResult<()> {
    rescore(conn, chain_id, keys, rules, Counted::Record).await
}

/// Rescores every agent of `chain_id` marked dirty, and clears the marks; then brings the trust
/// ranks to those in force at `head`, the chain's indexed block, rescoring the paid agents of
/// each rollout group that went over to another rank (`ahead` holds a rank computed ahead, and
/// is asked for the next one).
pub(super) async fn settle(
    conn: &mut AnyConnection,
    chain_id: u64,
    rules: &Arc<ReputationRules>,
    head: u64,
    ahead: Option<&RanksAhead>,
) -> StoreResult<()> {
    let keys = agent_keys(
        conn,
        reputation_dirty::NAME,
        chain_id,
        "reading the agents to rescore",
    )
    .await?;
    if !keys.is_empty() {
        refresh(conn, chain_id, &keys, rules).await?;
    }
    let groups = in_force::roll(conn, chain_id, head, rules, false, ahead).await?;
    rescore_groups(conn, chain_id, rules, &groups).await?;
    if keys.is_empty() {
        return Ok(());
    }
    sqlx::query(&format!(
        "DELETE FROM {reputation_dirty_table} WHERE chain_id = $1",
        reputation_dirty_table = reputation_dirty::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .execute(&mut *conn)
    .await
    .context("clearing the agents rescored")?;
    Ok(())
}

/// The agent keys `table` holds for `chain_id`; `context` names the read in errors.
async fn agent_keys(
    conn: &mut AnyConnection,
    table: &str,
    chain_id: u64,
    context: &'static str,
) -> StoreResult<BTreeSet<String>> {
    let keys: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT agent_key FROM {table} WHERE chain_id = $1"
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_all(&mut *conn)
    .await
    .context(context)?;
    Ok(keys.into_iter().collect())
}

/// Rescores the paid agents of `chain_id` in the rollout `groups`, which went over to another
/// trust rank. Called once every agent whose facts changed was rescored, so the counted
/// payments are current.
async fn rescore_groups(
    conn: &mut AnyConnection,
    chain_id: u64,
    rules: &ReputationRules,
    groups: &BTreeSet<u64>,
) -> StoreResult<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let paid: BTreeSet<String> = trust::paid_agents(conn, chain_id)
        .await?
        .into_iter()
        .filter(|key| groups.contains(&rollout_group(key)))
        .collect();
    rescore(conn, chain_id, &paid, rules, Counted::Unchanged).await
}

/// Rescores every agent of `chain_id` unless its rows were computed under `rules` and written
/// in [`ROWS_FORMAT`], then records both as the chain's; returns the agents rescored.
pub(super) async fn adopt_rules(
    conn: &mut AnyConnection,
    chain_id: u64,
    rules: &Arc<ReputationRules>,
) -> StoreResult<u64> {
    let wanted = format!("{ROWS_FORMAT}{rules:?}");
    let stored: Option<String> = sqlx::query_scalar(&format!(
        "SELECT rules FROM {reputation_rules_table} WHERE chain_id = $1",
        reputation_rules_table = reputation_rules::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the reputation rules in force")?;
    if stored.as_deref() == Some(wanted.as_str()) {
        return Ok(0);
    }
    // Feeds stored under the old rules (or the old form) would disagree with every other
    // instance's at the same block.
    super::stored_feeds::forget(conn, chain_id).await?;
    let keys = agent_keys(
        conn,
        agents::NAME,
        chain_id,
        "listing the agents to rescore",
    )
    .await?;
    refresh(conn, chain_id, &keys, rules).await?;
    // The ranks under the new rules in force at the indexed block, then the paid agents again
    // under them.
    let head: i64 = sqlx::query_scalar(&format!(
        "SELECT indexed_block FROM {chain_cursor_table} WHERE chain_id = $1",
        chain_cursor_table = chain_cursor::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the indexed block")?
    .unwrap_or(-1);
    if let Ok(head) = u64::try_from(head) {
        let groups = in_force::roll(conn, chain_id, head, rules, true, None).await?;
        rescore_groups(conn, chain_id, rules, &groups).await?;
    }
    sqlx::query(&format!(
        "DELETE FROM {reputation_dirty_table} WHERE chain_id = $1",
        reputation_dirty_table = reputation_dirty::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .execute(&mut *conn)
    .await
    .context("clearing the agents rescored")?;
    sqlx::query(&format!(
        "INSERT INTO {reputation_rules_table} (chain_id, rules) VALUES ($1, $2)
         ON CONFLICT (chain_id) DO UPDATE SET rules = excluded.rules",
        reputation_rules_table = reputation_rules::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(wanted)
    .execute(&mut *conn)
    .await
    .context("recording the reputation rules in force")?;
    Ok(keys.len() as u64)
}

/// The form stored rows are written in, recorded with the rules (see [`adopt_rules`]): rows
/// of an older form are rescored at the next start like rows of other rules. Since 2: each
/// evaluation in RFC 8785 canonical form, so the latest feed copies it into its lines as it is.
/// Since 3: trust ranks stored by epoch and put into force group by group (migration 0028
/// starts their tables empty).
const ROWS_FORMAT: &str = "rows 3; ";

/// The window `page` of the payments credited to each of `keys` (agents of `chain_id`), newest
/// first, with why each does not count (`None`: it counts). Only the page and the agents' own
/// side (what decides whether a payment counts) are read.
pub(super) async fn classified_payments(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &[String],
    page: PageWindow,
    rules: &ReputationRules,
) -> StoreResult<BTreeMap<String, Vec<(Payment, Option<Exclusion>)>>> {
    let mut out = BTreeMap::new();
    for chunk in keys.chunks(AGENTS_PER_ROUND) {
        let subjects = load::subjects(conn, chunk).await?;
        let mut pages = super::payments::pages(conn, chunk, page).await?;
        let loaded = load::side_facts(conn, chain_id, &subjects).await?;
        for (key, mut entry) in loaded {
            entry.facts.payments = pages.remove(&key).unwrap_or_default();
            let mut classified = payments_with_exclusions(entry.facts, rules);
            classified.reverse();
            out.insert(key, classified);
        }
    }
    Ok(out)
}
