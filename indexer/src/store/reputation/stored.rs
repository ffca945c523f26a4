//! Stored reputation as its rows hold it: one agent's ([`stored`]) and a chain's in key order
//! ([`stored_in_key_order`], what the latest feed is put together from), the evaluation left in
//! its stored text when that is canonical.

use super::{AGENTS_PER_ROUND, AgentReputation, ROWS_FORMAT};
use crate::schema::{agent_reputation, reputation_rules};
use crate::store::decode::{self, int};
use crate::store::{QueryContext, StoreResult};
use sqlx::{AnyConnection, AnyPool};

/// An `agent_reputation` row as [`stored`] reads it.
#[derive(sqlx::FromRow)]
struct StoredRow {
    #[sqlx(default)]
    agent_key: String,
    chain_id: i64,
    as_of_block: i64,
    as_of_timestamp: i64,
    score: f64,
    evaluation: String,
}

/// The stored reputation of `agent_key`, if it has any.
pub(in crate::store) async fn stored(
    pool: &AnyPool,
    agent_key: &str,
) -> StoreResult<Option<AgentReputation>> {
    let row: Option<StoredRow> = sqlx::query_as(&format!(
        "SELECT chain_id, as_of_block, as_of_timestamp, score, evaluation FROM {agent_reputation_table}
         WHERE agent_key = $1",
        agent_reputation_table = agent_reputation::NAME,
    ))
    .bind(agent_key)
    .fetch_optional(pool)
    .await
    .context("reading an agent's reputation")?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    row.agent_key = agent_key.to_string();
    row.decode().map(Some)
}

/// A stored reputation as its row holds it, the evaluation left in its stored text (RFC 8785
/// canonical form, see [`ROWS_FORMAT`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReputation {
    /// The agent's key.
    pub agent: String,
    /// Its chain.
    pub chain_id: u64,
    /// The block it is computed as of.
    pub as_of_block: u64,
    /// That block's timestamp.
    pub as_of_timestamp: u64,
    /// The composite score.
    pub score: f64,
    /// The evaluation, as JSON text.
    pub evaluation: String,
    /// Whether that text is in canonical form: the chain's rows were written in
    /// [`ROWS_FORMAT`] (an older form until the indexer's next start rescores them).
    pub canonical: bool,
}

impl StoredRow {
    fn raw(self, canonical: bool) -> StoreResult<StoredReputation> {
        let table = agent_reputation::NAME;
        Ok(StoredReputation {
            agent: self.agent_key,
            chain_id: decode::uint(table, "chain_id", self.chain_id)?,
            as_of_block: decode::uint(table, "as_of_block", self.as_of_block)?,
            as_of_timestamp: decode::uint(table, "as_of_timestamp", self.as_of_timestamp)?,
            score: self.score,
            evaluation: self.evaluation,
            canonical,
        })
    }

    fn decode(self) -> StoreResult<AgentReputation> {
        let raw = self.raw(false)?;
        Ok(AgentReputation {
            evaluation: decode::json(agent_reputation::NAME, "evaluation", &raw.evaluation)?,
            agent: raw.agent,
            chain_id: raw.chain_id,
            as_of_block: raw.as_of_block,
            as_of_timestamp: raw.as_of_timestamp,
            score: raw.score,
        })
    }
}

/// Every stored reputation of `chain_id`, in key order, as its row holds it, handed to `page` a
/// round at a time.
pub(in crate::store) async fn stored_in_key_order(
    conn: &mut AnyConnection,
    chain_id: u64,
    mut page: impl FnMut(Vec<StoredReputation>),
) -> StoreResult<()> {
    let rules: Option<String> = sqlx::query_scalar(&format!(
        "SELECT rules FROM {reputation_rules_table} WHERE chain_id = $1",
        reputation_rules_table = reputation_rules::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the form of the stored reputation")?;
    let canonical = rules.is_some_and(|rules| rules.starts_with(ROWS_FORMAT));
    let mut after = String::new();
    loop {
        crate::priority::offer_core();
        // `+chain_id`: a page is a range of the key's index, not a sort of the chain's rows
        // (see `load::subjects_at`).
        let rows: Vec<StoredRow> = sqlx::query_as(&format!(
            "SELECT agent_key, chain_id, as_of_block, as_of_timestamp, score, evaluation
             FROM {agent_reputation_table} WHERE +chain_id = $1 AND agent_key > $2
             ORDER BY agent_key LIMIT $3",
            agent_reputation_table = agent_reputation::NAME,
        ))
        .bind(int("chain_id", chain_id)?)
        .bind(after.as_str())
        .bind(AGENTS_PER_ROUND as i64)
        .fetch_all(&mut *conn)
        .await
        .context("reading stored reputation in key order")?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.agent_key.clone();
        let raw = rows.into_iter().map(|row| row.raw(canonical));
        page(raw.collect::<StoreResult<_>>()?);
    }
}
