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

mod as_of;
mod load;
mod stored;
mod touched;
mod trust;

use super::sql::push_in;
use super::{PageWindow, QueryContext, StoreResult};
use crate::primitives::sql_bound;
use crate::reputation::{
    AgentFacts, Evaluation, Exclusion, Payment, ReputationRules, evaluate, payments_that_count,
    payments_with_exclusions,
};
use crate::schema::{
    agent_reputation, agents, chain_cursor, events, reputation_dirty, reputation_rules,
};
use crate::store::Dialect;
use crate::store::decode::{self, int};
use load::Subject;
use serde::{Deserialize, Serialize};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

pub(super) use as_of::{as_of_block, trust_rank_at};
pub use stored::StoredReputation;
pub(super) use stored::{stored, stored_in_key_order};
pub(super) use touched::mark_dirty;

/// Agents per round of queries.
const AGENTS_PER_ROUND: usize = 2000;

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

/// Whether a rescore records the agents' counted payments again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counted {
    /// Their facts or the rules may have changed: record them.
    Record,
    /// Only the trust rank moved, and every agent's counted payments were recorded when its
    /// facts last changed (which payments count does not depend on the rank): keep them.
    Unchanged,
}

async fn rescore(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &BTreeSet<String>,
    rules: &ReputationRules,
    counted_payments: Counted,
) -> StoreResult<()> {
    let keys: Vec<String> = keys.iter().cloned().collect();
    crate::metrics::metrics().reputation(chain_id, keys.len() as u64);
    for chunk in keys.chunks(AGENTS_PER_ROUND) {
        let subjects = load::subjects(conn, chunk).await?;
        let present: BTreeSet<&str> = subjects.iter().map(|s| s.key.as_str()).collect();
        let gone: Vec<&str> = chunk
            .iter()
            .map(String::as_str)
            .filter(|k| !present.contains(k))
            .collect();
        if !gone.is_empty() {
            let mut delete = QueryBuilder::<Any>::new(format!(
                "DELETE FROM {agent_reputation_table} WHERE agent_key",
                agent_reputation_table = agent_reputation::NAME,
            ));
            push_in(&mut delete, gone);
            Dialect::of(conn)
                .portable(delete)
                .build()
                .execute(&mut *conn)
                .await
                .context("removing the reputation of agents that are gone")?;
        }
        if subjects.is_empty() {
            continue;
        }
        let mut loaded = load::facts(conn, chain_id, &subjects, u64::MAX).await?;
        trust::stored_inputs(conn, chain_id, &mut loaded, rules.trust.unproven_cap).await?;
        if counted_payments == Counted::Record {
            let counted: BTreeMap<String, Vec<Payment>> = loaded
                .iter()
                .map(|(key, entry)| (key.clone(), payments_that_count(&entry.facts, rules)))
                .collect();
            trust::write_counted(conn, chain_id, chunk, &counted).await?;
        }
        let as_of: BTreeMap<&str, u64> = subjects
            .iter()
            .map(|s| {
                let last = loaded.get(&s.key).map_or(0, |l| l.last_block);
                (s.key.as_str(), last.max(s.last_event_block))
            })
            .collect();
        let times = block_times(conn, chain_id, as_of.values().copied().collect()).await?;
        let mut computed = Vec::with_capacity(subjects.len());
        for subject in &subjects {
            let facts = loaded.remove(&subject.key).unwrap_or_default().facts;
            let block = as_of[subject.key.as_str()];
            let timestamp = times.get(&block).copied().unwrap_or(0);
            computed.push(AgentReputation::of(
                subject, &facts, chain_id, block, timestamp, rules,
            ));
        }
        write(conn, &computed).await?;
    }
    Ok(())
}

/// Rescores every agent of `chain_id` marked dirty, and clears the marks; then brings the trust
/// rank to the epoch of `head`, the chain's indexed block, rescoring every paid agent when it
/// moves.
pub(super) async fn settle(
    conn: &mut AnyConnection,
    chain_id: u64,
    rules: &ReputationRules,
    head: u64,
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
    if trust::advance(conn, chain_id, head, rules, false).await? {
        rescore_under_new_rank(conn, chain_id, rules).await?;
    }
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

/// Rescores every paid agent of `chain_id` after its trust rank moved to a new epoch. Called
/// once every agent whose facts changed was rescored, so the counted payments are current.
pub(super) async fn rescore_under_new_rank(
    conn: &mut AnyConnection,
    chain_id: u64,
    rules: &ReputationRules,
) -> StoreResult<()> {
    let paid = trust::paid_agents(conn, chain_id).await?;
    rescore(conn, chain_id, &paid, rules, Counted::Unchanged).await
}

/// Rescores every agent of `chain_id` unless its rows were computed under `rules` and written
/// in [`ROWS_FORMAT`], then records both as the chain's; returns the agents rescored.
pub(super) async fn adopt_rules(
    conn: &mut AnyConnection,
    chain_id: u64,
    rules: &ReputationRules,
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
    // The rank under the new rules, as of the epoch of the indexed block, then the paid agents
    // again under it.
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
        trust::advance(conn, chain_id, head, rules, true).await?;
        rescore_under_new_rank(conn, chain_id, rules).await?;
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

/// The timestamps of `blocks`, from the events stored in them: the first event of each block
/// (every event of a block carries the block's timestamp), found through the primary key
/// without reading the block's other events.
async fn block_times(
    conn: &mut AnyConnection,
    chain_id: u64,
    blocks: BTreeSet<u64>,
) -> StoreResult<BTreeMap<u64, u64>> {
    if blocks.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut query = QueryBuilder::<Any>::new("WITH wanted(n) AS (");
    query.push_values(&blocks, |mut row, block| {
        row.push_bind(sql_bound(*block));
    });
    query.push(format!(
        ") SELECT n, (SELECT block_timestamp FROM {events_table} WHERE chain_id = ",
        events_table = events::NAME,
    ));
    query.push_bind(int("chain_id", chain_id)?);
    query.push(" AND block_number = n ORDER BY log_index LIMIT 1) AS t FROM wanted");
    // A block without stored events has no time here; its facts are then none of reputation's.
    let rows: Vec<(i64, Option<i64>)> = Dialect::of(conn)
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context("reading block timestamps for reputation")?;
    let mut times = BTreeMap::new();
    for (block, timestamp) in rows {
        if let Some(timestamp) = timestamp {
            times.insert(
                decode::uint(events::NAME, "block_number", block)?,
                decode::uint(events::NAME, "block_timestamp", timestamp)?,
            );
        }
    }
    Ok(times)
}

/// The form stored rows are written in, recorded with the rules (see [`adopt_rules`]): rows
/// of an older form are rescored at the next start like rows of other rules. Since 2: each
/// evaluation in RFC 8785 canonical form, so the latest feed copies it into its lines as it is.
const ROWS_FORMAT: &str = "rows 2; ";

/// `evaluation` in RFC 8785 canonical form (the feed's); a non-finite number, which has none,
/// is written as null (as serde_json writes it).
fn canonical_evaluation(evaluation: &Evaluation) -> String {
    crate::canonical_json::to_string(evaluation).unwrap_or_else(|_| {
        let value = serde_json::to_value(evaluation).expect("an evaluation serialises");
        crate::canonical_json::to_string(&value).expect("a JSON value has a canonical form")
    })
}

async fn write(conn: &mut AnyConnection, computed: &[AgentReputation]) -> StoreResult<()> {
    let columns = agent_reputation::TABLE.column_list();
    let mut insert = QueryBuilder::<Any>::new(format!(
        "INSERT INTO {} ({columns}) ",
        agent_reputation::NAME
    ));
    // Every integer is checked before the statement is built (its closure cannot fail).
    let integers = computed
        .iter()
        .map(|r| {
            let e = &r.evaluation;
            Ok([
                int("chain_id", r.chain_id)?,
                int("as_of_block", r.as_of_block)?,
                int("as_of_timestamp", r.as_of_timestamp)?,
                int("payment_count", e.payments.payment_count)?,
                int("unique_payers", e.payments.unique_payers)?,
                int("excluded_payments", e.excluded.values().sum::<u64>())?,
                int("feedback_count", e.feedback.overall.count)?,
            ])
        })
        .collect::<StoreResult<Vec<_>>>()?;
    insert.push_values(computed.iter().zip(integers), |mut row, (r, n)| {
        let e = &r.evaluation;
        let [
            chain,
            block,
            timestamp,
            payments,
            payers,
            excluded,
            feedback,
        ] = n;
        row.push_bind(&r.agent)
            .push_bind(chain)
            .push_bind(block)
            .push_bind(timestamp)
            .push_bind(r.score)
            .push_bind(e.payment_score.score)
            .push_bind(payments)
            .push_bind(payers)
            .push_bind(excluded)
            .push_bind(feedback)
            .push_bind(e.feedback.overall.average)
            .push_bind(e.validations.average)
            .push_bind(e.ratings.average)
            .push_bind(canonical_evaluation(e));
    });
    insert.push(crate::store::sql::or_replace("agent_key", &columns));
    Dialect::of(conn)
        .portable(insert)
        .build()
        .execute(&mut *conn)
        .await
        .context("writing agents' reputation")?;
    Ok(())
}

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
