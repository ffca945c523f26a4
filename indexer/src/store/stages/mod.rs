//! The writer's derivations as stages: each owns its tables and says how a committed batch is
//! applied to them and how a reorg is undone in them, one file each. The writer runs every
//! stage over a batch in [`STAGES`] order, in the batch's transaction (`sql_writer.rs`).
//!
//! A rewind (`rewind.rs`) makes two passes over the same order. Unlike an unwind that peels
//! stages off in reverse, it rebuilds: every derived table is a pure function of the facts, so
//! the derived stages recompute what the undone facts touched from the facts that remain, and
//! so must run after the facts are gone, each after the stages it reads.
//!
//! 1. [`Stage::before_rewind`], while the rows above the ancestor are all still there: a
//!    derived stage notes what they touch (the agents to recompute, the agents to rescore), in
//!    the [`RewindContext`] or in its own tables;
//! 2. [`Stage::rewind`]: the facts above the ancestor go first, then every derived stage
//!    rebuilds what they touched, and the cursor moves back last.
//!
//! A new signal is one more file here with its tables, its apply and its rewind, and one more
//! entry in [`STAGES`] (and in [`Stage`]'s matches) at the place its inputs are ready.

mod activity;
mod agents;
mod cursor;
mod facts;
mod reputation;

use super::batch::ChainContext;
use super::decode::int;
use super::facts::{PreparedBatch, Touched};
use super::interface::ApplySummary;
use super::statistics::Statistics;
use super::{Dialect, QueryContext, StoreResult};
use sqlx::AnyConnection;

/// A derivation of the writer, owning its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// The raw events and the facts decoded from them (`stages/facts.rs`).
    Facts,
    /// The agents' current state, from their facts (`stages/agents.rs`).
    Agents,
    /// When each agent was last active (`stages/activity.rs`).
    Activity,
    /// The agents' reputation, its dirty marks and the trust rank (`stages/reputation.rs`).
    Reputation,
    /// The chain's cursor and reorg window (`stages/cursor.rs`).
    Cursor,
}

/// The stages in the order a batch runs through them: each reads what those before it wrote.
pub(super) const STAGES: [Stage; 5] = [
    Stage::Facts,
    Stage::Agents,
    Stage::Activity,
    Stage::Reputation,
    Stage::Cursor,
];

/// A batch as the stages apply it, and what they report back.
pub(super) struct BatchContext<'a> {
    /// The batch, its rows bound.
    pub(super) prepared: &'a mut PreparedBatch,
    /// The database it is written to.
    pub(super) dialect: Dialect,
    /// PostgreSQL's planner statistics, kept up with the rows written.
    pub(super) statistics: &'a Statistics,
    /// What applying the batch did.
    pub(super) summary: ApplySummary,
}

/// A rewind as the stages undo it: which chain, down to which block, and what the undone rows
/// touched.
pub(super) struct RewindContext<'a> {
    /// The chain.
    pub(super) chain: &'a ChainContext,
    /// The common ancestor: every row above it goes.
    pub(super) ancestor: u64,
    /// The chain id as the database holds it.
    chain_key: i64,
    /// The ancestor as the database holds it.
    above: i64,
    /// The agents the undone facts named, read before they go.
    pub(super) touched: Touched,
    /// Fact rows removed.
    pub(super) removed: u64,
}

impl<'a> RewindContext<'a> {
    /// The rewind of `chain` down to `ancestor`, nothing touched or removed yet.
    pub(super) fn new(chain: &'a ChainContext, ancestor: u64) -> StoreResult<Self> {
        Ok(Self {
            chain,
            ancestor,
            chain_key: int("chain_id", chain.chain_id)?,
            above: int("ancestor", ancestor)?,
            touched: Touched::default(),
            removed: 0,
        })
    }
}

impl Stage {
    /// The tables the stage writes and undoes (names from `crate::schema`).
    pub(super) fn tables(self) -> &'static [&'static str] {
        match self {
            Stage::Facts => facts::TABLES,
            Stage::Agents => agents::TABLES,
            Stage::Activity => activity::TABLES,
            Stage::Reputation => reputation::TABLES,
            Stage::Cursor => cursor::TABLES,
        }
    }

    /// Applies `batch` to the stage's tables, inside the batch's transaction.
    pub(super) async fn apply(
        self,
        conn: &mut AnyConnection,
        batch: &mut BatchContext<'_>,
    ) -> StoreResult<()> {
        match self {
            Stage::Facts => facts::apply(conn, batch).await,
            Stage::Agents => agents::apply(conn, batch).await,
            Stage::Activity => activity::apply(conn, batch).await,
            Stage::Reputation => reputation::apply(conn, batch).await,
            Stage::Cursor => cursor::apply(conn, batch).await,
        }
    }

    /// Notes what undoing `rewind` will touch, while the rows above its ancestor are there.
    pub(super) async fn before_rewind(
        self,
        conn: &mut AnyConnection,
        rewind: &mut RewindContext<'_>,
    ) -> StoreResult<()> {
        match self {
            Stage::Facts | Stage::Activity | Stage::Cursor => Ok(()),
            Stage::Agents => agents::before_rewind(conn, rewind).await,
            Stage::Reputation => reputation::before_rewind(conn, rewind).await,
        }
    }

    /// Undoes the blocks above `rewind`'s ancestor in the stage's tables.
    pub(super) async fn rewind(
        self,
        conn: &mut AnyConnection,
        rewind: &mut RewindContext<'_>,
    ) -> StoreResult<()> {
        match self {
            Stage::Facts => facts::rewind(conn, rewind).await,
            Stage::Agents => agents::rewind(conn, rewind).await,
            Stage::Activity => activity::rewind(conn, rewind).await,
            Stage::Reputation => reputation::rewind(conn, rewind).await,
            Stage::Cursor => cursor::rewind(conn, rewind).await,
        }
    }
}

/// Deletes the rows of `table` (keyed by chain and block) above `rewind`'s ancestor; returns
/// how many went. `context` names the deletion in errors.
async fn delete_above(
    conn: &mut AnyConnection,
    table: &str,
    rewind: &RewindContext<'_>,
    context: &'static str,
) -> StoreResult<u64> {
    delete_above_by(conn, table, "block_number", rewind, context).await
}

/// As [`delete_above`], for a table whose rows belong to the block in `column`.
async fn delete_above_by(
    conn: &mut AnyConnection,
    table: &str,
    column: &str,
    rewind: &RewindContext<'_>,
    context: &'static str,
) -> StoreResult<u64> {
    Ok(sqlx::query(&format!(
        "DELETE FROM {table} WHERE chain_id = $1 AND {column} > $2"
    ))
    .bind(rewind.chain_key)
    .bind(rewind.above)
    .execute(&mut *conn)
    .await
    .context(context)?
    .rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema;
    use std::collections::BTreeMap;

    /// Tables no stage owns: documents and what is built from them, written by their own command
    /// (`store/documents/`), not by a batch.
    const DOCUMENT_TABLES: &[&str] = &[
        schema::agent_skills::NAME,
        schema::agent_tags::NAME,
        schema::agent_terms::NAME,
        schema::agent_search::NAME,
        schema::search_agents::NAME,
        schema::agent_postings::NAME,
        schema::agent_registrations::NAME,
        schema::agent_registration_text::NAME,
        schema::agent_a2a_skills::NAME,
        schema::agent_x402_terms::NAME,
        schema::agent_profiles::NAME,
        schema::documents::NAME,
        schema::document_lints::NAME,
        schema::agent_documents::NAME,
    ];

    /// Tables no stage owns: what the prober saw, written by its own commands
    /// (`store/liveness/`), never by a batch.
    const LIVENESS_TABLES: &[&str] = &[
        schema::probe_targets::NAME,
        schema::probe_endpoints::NAME,
        schema::probe_results::NAME,
        schema::probe_daily::NAME,
        schema::agent_liveness::NAME,
        schema::agent_capabilities::NAME,
    ];

    #[test]
    fn every_table_has_one_owner() {
        let mut owners: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for stage in STAGES {
            for table in stage.tables() {
                owners.entry(*table).or_default().push(format!("{stage:?}"));
            }
        }
        for table in DOCUMENT_TABLES {
            owners
                .entry(*table)
                .or_default()
                .push("documents".to_string());
        }
        for table in LIVENESS_TABLES {
            owners
                .entry(*table)
                .or_default()
                .push("liveness".to_string());
        }
        for (table, owned_by) in &owners {
            assert!(
                schema::table(table).is_some(),
                "{table} is not a declared table"
            );
            assert_eq!(owned_by.len(), 1, "{table} is owned by {owned_by:?}");
        }
        for table in schema::ALL {
            assert!(
                owners.contains_key(table.name),
                "{} has no stage (add it to the stage that writes it)",
                table.name
            );
        }
    }

    #[test]
    fn the_list_holds_every_stage_once_facts_first_and_cursor_last() {
        for (at, stage) in STAGES.iter().enumerate() {
            assert!(!STAGES[..at].contains(stage), "{stage:?} listed twice");
        }
        assert_eq!(STAGES.first(), Some(&Stage::Facts));
        assert_eq!(STAGES.last(), Some(&Stage::Cursor));
    }
}
