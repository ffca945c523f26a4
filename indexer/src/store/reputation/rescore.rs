//! Rescoring a set of agents: their facts read in rounds of [`AGENTS_PER_ROUND`], each round
//! scored on a blocking thread while the next round's facts are read (scoring and writing the
//! canonical evaluations is about as much work as reading the facts), then written.

use super::load::{self, Loaded, Subject};
use super::{AGENTS_PER_ROUND, AgentReputation, trust, trust_inputs};
use crate::primitives::sql_bound;
use crate::reputation::{Evaluation, Payment, ReputationRules, payments_that_count};
use crate::schema::{agent_reputation, events, masumi_escrow_actions, masumi_registry_actions};
use crate::store::decode::{self, int};
use crate::store::in_list::padded;
use crate::store::sql::delete_agent_rows;
use crate::store::sql::write_rows;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tokio::task::JoinHandle;

/// Whether a rescore records the agents' counted payments again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counted {
    /// Their facts or the rules may have changed: record them.
    Record,
    /// Only the trust rank moved, and every agent's counted payments were recorded when its
    /// facts last changed (which payments count does not depend on the rank): keep them.
    Unchanged,
}

/// An agent's computed reputation with its evaluation in the stored (canonical) form.
struct Scored {
    reputation: AgentReputation,
    canonical: String,
}

/// One round's agents with everything their scores are computed from.
struct Round {
    chain_id: u64,
    subjects: Vec<Subject>,
    loaded: BTreeMap<String, Loaded>,
    /// Each agent's block: the newest of its facts.
    as_of: BTreeMap<String, u64>,
    /// Those blocks' timestamps.
    times: BTreeMap<u64, u64>,
}

/// Recomputes and stores the reputation of `keys` on `chain_id`; agents that no longer exist
/// lose their row.
pub(super) async fn rescore(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &BTreeSet<String>,
    rules: &ReputationRules,
    counted_payments: Counted,
) -> StoreResult<()> {
    let keys: Vec<String> = keys.iter().cloned().collect();
    crate::metrics::metrics().reputation(chain_id, keys.len() as u64);
    let rules = Arc::new(rules.clone());
    let mut scoring: Option<JoinHandle<Vec<Scored>>> = None;
    for chunk in keys.chunks(AGENTS_PER_ROUND) {
        let round = read_round(conn, chain_id, chunk, &rules, counted_payments).await?;
        let previous = scoring.take();
        if let Some(round) = round {
            let rules = Arc::clone(&rules);
            scoring = Some(tokio::task::spawn_blocking(move || round.score(&rules)));
        }
        if let Some(previous) = previous {
            write(conn, scored(previous).await).await?;
        }
    }
    if let Some(last) = scoring {
        write(conn, scored(last).await).await?;
    }
    Ok(())
}

/// What a scoring thread computed; a panic in it goes on in the caller, as it would have had
/// the scores been computed there.
async fn scored(scoring: JoinHandle<Vec<Scored>>) -> Vec<Scored> {
    scoring
        .await
        .unwrap_or_else(|failed| std::panic::resume_unwind(failed.into_panic()))
}

/// Reads what `chunk`'s scores are computed from (removing the rows of agents that are gone,
/// and recording counted payments when asked); `None` when none of them exists.
async fn read_round(
    conn: &mut AnyConnection,
    chain_id: u64,
    chunk: &[String],
    rules: &ReputationRules,
    counted_payments: Counted,
) -> StoreResult<Option<Round>> {
    let subjects = load::subjects(conn, chunk).await?;
    let present: BTreeSet<&str> = subjects.iter().map(|s| s.key.as_str()).collect();
    let gone: Vec<&str> = chunk
        .iter()
        .map(String::as_str)
        .filter(|k| !present.contains(k))
        .collect();
    delete_agent_rows(
        conn,
        agent_reputation::NAME,
        &gone,
        "removing the reputation of agents that are gone",
    )
    .await?;
    if subjects.is_empty() {
        return Ok(None);
    }
    let mut loaded = load::facts(conn, chain_id, &subjects, u64::MAX).await?;
    trust_inputs::stored_inputs(conn, chain_id, &mut loaded, &rules.trust).await?;
    if rules.weights.availability > 0.0 {
        load::availability(conn, &mut loaded).await?;
    }
    if counted_payments == Counted::Record {
        let counted: BTreeMap<String, Vec<Payment>> = loaded
            .iter()
            .map(|(key, entry)| (key.clone(), payments_that_count(&entry.facts, rules)))
            .collect();
        trust::write_counted(conn, chain_id, chunk, &counted).await?;
    }
    let as_of: BTreeMap<String, u64> = subjects
        .iter()
        .map(|s| {
            let last = loaded.get(&s.key).map_or(0, |l| l.last_block);
            (s.key.clone(), last.max(s.last_event_block))
        })
        .collect();
    let times = block_times(conn, chain_id, as_of.values().copied().collect()).await?;
    Ok(Some(Round {
        chain_id,
        subjects,
        loaded,
        as_of,
        times,
    }))
}

impl Round {
    /// Every agent's reputation under `rules`, in the stored form.
    fn score(mut self, rules: &ReputationRules) -> Vec<Scored> {
        self.subjects
            .iter()
            .map(|subject| {
                let facts = self.loaded.remove(&subject.key).unwrap_or_default().facts;
                let block = self.as_of[subject.key.as_str()];
                let timestamp = self.times.get(&block).copied().unwrap_or(0);
                let reputation =
                    AgentReputation::of(subject, &facts, self.chain_id, block, timestamp, rules);
                let canonical = canonical_evaluation(&reputation.evaluation);
                Scored {
                    reputation,
                    canonical,
                }
            })
            .collect()
    }
}

/// The timestamps of `blocks`, from the events stored in them: the first event of each block
/// (every event of a block carries the block's timestamp), found through the primary key
/// without reading the block's other events; on a Cardano network, from its Masumi facts.
async fn block_times(
    conn: &mut AnyConnection,
    chain_id: u64,
    blocks: BTreeSet<u64>,
) -> StoreResult<BTreeMap<u64, u64>> {
    if blocks.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut query = QueryBuilder::<Any>::new("WITH wanted(n) AS (");
    // Padded (`store::in_list`): a repeated block answers twice, into the same map entry.
    query.push_values(padded(&blocks), |mut row, block| {
        row.push_bind(sql_bound(*block));
    });
    // On a Cardano network the facts carry their block's time instead of events.
    let chain = int("chain_id", chain_id)?;
    query.push(format!(
        ") SELECT n, coalesce((SELECT block_timestamp FROM {events_table} WHERE chain_id = ",
        events_table = events::NAME,
    ));
    query.push_bind(chain);
    query.push(" AND block_number = n ORDER BY log_index LIMIT 1)");
    for table in [masumi_escrow_actions::NAME, masumi_registry_actions::NAME] {
        query.push(format!(
            ", (SELECT block_timestamp FROM {table} WHERE chain_id = "
        ));
        query.push_bind(chain);
        query.push(" AND block_number = n ORDER BY tx_index LIMIT 1)");
    }
    query.push(") AS t FROM wanted");
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

/// `evaluation` in RFC 8785 canonical form (the feed's); a non-finite number, which has none,
/// is written as null (as serde_json writes it).
/// Its capacity is cut to its length: a round's texts are held until written, and as they grew
/// they held up to twice their length (about 5 MiB of the M backfill's peak heap).
fn canonical_evaluation(evaluation: &Evaluation) -> String {
    let mut text = crate::canonical_json::to_string(evaluation).unwrap_or_else(|_| {
        let value = serde_json::to_value(evaluation).expect("an evaluation serialises");
        crate::canonical_json::to_string(&value).expect("a JSON value has a canonical form")
    });
    text.shrink_to_fit();
    text
}

/// Rows of `agent_reputation` written by one statement: 3,500 bound values (as the facts'
/// statements hold, `store::rows`), so the compiled statement the writer keeps stays small.
const ROWS_PER_WRITE: usize = 250;

/// Writes a round's computed reputations, [`ROWS_PER_WRITE`] to a statement, each row's values
/// moved into the statement rather than copied.
async fn write(conn: &mut AnyConnection, mut computed: Vec<Scored>) -> StoreResult<()> {
    while !computed.is_empty() {
        let rest = computed.split_off(computed.len().min(ROWS_PER_WRITE));
        write_statement(conn, computed).await?;
        computed = rest;
    }
    Ok(())
}

async fn write_statement(conn: &mut AnyConnection, computed: Vec<Scored>) -> StoreResult<()> {
    let columns = agent_reputation::TABLE.column_list();
    let mut insert = QueryBuilder::<Any>::new(format!(
        "INSERT INTO {} ({columns}) ",
        agent_reputation::NAME
    ));
    // Every integer is checked before the statement is built (its closure cannot fail).
    let integers = computed
        .iter()
        .map(|Scored { reputation: r, .. }| {
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
    let rows = computed.len();
    insert.push_values(
        computed.into_iter().zip(integers),
        |mut row, (scored, n)| {
            let Scored {
                reputation: r,
                canonical,
            } = scored;
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
            row.push_bind(r.agent)
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
                .push_bind(canonical);
        },
    );
    insert.push(crate::store::sql::or_replace("agent_key", &columns));
    write_rows(
        conn,
        insert,
        rows,
        ROWS_PER_WRITE,
        "writing agents' reputation",
    )
    .await?;
    Ok(())
}
