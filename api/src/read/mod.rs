//! The API's read queries over the store's read-only pool: agents with their profile and stored
//! reputation, filtered, searched and ordered ([`agents`], with its `WHERE` clauses in
//! `agent_filters` and its choice of plan in `agent_walk`), skills and documents by agent
//! ([`skills`], [`documents`]), a card's or registration file's bytes ([`document_body`]), what committed batches changed, for subscriptions ([`changes`], read in bounded runs of blocks: [`change_spans`]),
//! dashboard aggregates ([`facets`]), what the prober saw of agents' endpoints ([`liveness`]), the paid resources agents declare ([`x402_resources`]), Masumi agents' escrows ([`masumi_payments`]), ERC-8004 feedback and validations by agent
//! ([`activity`]), stored reputation evaluations by agent ([`evaluations`]), and lists' lengths and per-day
//! counts as aggregates ([`counts`]). Lists of many agents are read a page per agent in one
//! statement ([`pages`], which the subgraph's derived lists share).

pub(crate) mod activity;
mod agent_filters;
mod agent_list;
pub(crate) mod agent_rows;
mod agent_walk;
pub(crate) mod agents;
mod band_merge;
mod band_search;
pub(crate) mod change_spans;
pub(crate) mod changes;
pub(crate) mod counts;
pub(crate) mod cursor;
pub(crate) mod document_body;
pub(crate) mod documents;
pub(crate) mod evaluations;
pub(crate) mod facets;
pub(crate) mod liveness;
pub(crate) mod masumi_payments;
pub(crate) mod pages;
mod ranked_search;
mod selection;
pub(crate) mod skills;
mod snapshot;
pub(crate) mod x402_resources;

use agentindex_indexer::store::in_list::push_in;
use sqlx::{Any, QueryBuilder};

/// `query` followed by `IN (keys…)` (padded: [`push_in`]) and `tail`.
pub(crate) fn in_list(query: &mut QueryBuilder<'_, Any>, keys: &[String], tail: &str) {
    push_in(query, keys.iter().cloned());
    query.push(tail);
}

/// One step of SQLite's `EXPLAIN QUERY PLAN`, read by name, for tests that hold a read to its
/// plan.
#[cfg(test)]
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct PlanStep {
    /// What the step does (`SEARCH … USING INDEX …`, `USE TEMP B-TREE …`).
    pub(crate) detail: String,
}
