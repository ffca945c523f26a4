//! The GraphQL API: the schema ([`schema`]), its query and subscription roots ([`query`],
//! [`facets`], [`subscription`]), the `Agent` type ([`agent`]) with what the prober saw of it ([`liveness`]) and its payments, feedback and
//! validations (`relations`), the `agents` arguments ([`filter`]), cursors ([`cursor`]),
//! DataLoaders ([`loaders`], gathered in [`loader_set`]), what one operation may spend (`operation_limits`) and the hiding
//! of store errors ([`hidden_errors`]). How big a
//! document may be is `crate::budget`'s, checked by its extension. `api/schema.graphql` is the
//! schema as printed; a test keeps them equal.

pub(crate) mod agent;
pub(crate) mod days;
pub mod facets;
pub(crate) mod filter;
pub(crate) mod hidden_errors;
mod live_changes;
pub(crate) mod liveness;
pub(crate) mod loader_set;
pub(crate) mod loaders;
pub(crate) mod masumi;
pub(crate) mod operation_limits;
pub mod query;
pub(crate) mod relations;
pub(crate) mod reputation;
pub(crate) mod shared_reads;
pub mod subscription;
pub(crate) mod subscription_places;

use crate::budget::{QueryBudget, extension::Budget};
use crate::state::ApiState;
use async_graphql::{EmptyMutation, MergedObject, Schema};
use subscription::Subscription;

/// Deepest nesting a query may have.
pub const MAX_DEPTH: usize = 12;
/// Highest complexity (fields counted, lists by their page size) a query may have.
pub const MAX_COMPLEXITY: usize = 5_000;

/// Largest page size a list field's complexity counts: past it the field refuses `first` with
/// its own message, which says more than "too complex" would.
const MAX_COUNTED_PAGE: i32 = 500;

/// The complexity of a list field that returns `first` items (its default when absent): each
/// item costs what its selected fields cost, so `agents(first: 100) { feedback(first: 100) {…} }`
/// counts ten thousand feedback items' fields, not a hundred.
pub(crate) fn page_cost(first: i32, child_complexity: usize) -> usize {
    let items = first.clamp(1, MAX_COUNTED_PAGE) as usize;
    items.saturating_mul(child_complexity).saturating_add(1)
}

/// The query root: agent lookups and status, and dashboard aggregates.
#[derive(MergedObject, Default)]
pub struct Query(query::AgentQuery, facets::FacetQuery);

/// The schema type.
pub type AgentSchema = Schema<Query, EmptyMutation, Subscription>;

/// The schema over `state`, with its limits (`[api.query_limits]` checked before anything
/// expands a document; field suggestions off, so error messages do not map the schema for a
/// prober) and DataLoaders.
pub fn schema(state: ApiState) -> AgentSchema {
    Schema::build(Query::default(), EmptyMutation, Subscription)
        .data(state.clone())
        .data(loader_set::Loaders::new(&state))
        .data(std::sync::Arc::new(shared_reads::SharedReads::default()))
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
        .limit_recursive_depth(state.api.query_limits.max_nesting)
        .extension(Budget::new(QueryBudget::new(
            state.api.query_limits.clone(),
        )))
        .extension(operation_limits::OperationLimits::new(
            state.api.reads.max_rows_per_request,
            state.api.reads.query_time_limit(),
            usize::try_from(state.api.low_priority_above_complexity).unwrap_or(usize::MAX),
        ))
        .extension(hidden_errors::HideInternalErrors)
        .disable_suggestions()
        .finish()
}

/// The schema in GraphQL SDL, as committed in `api/schema.graphql`.
pub fn sdl() -> String {
    Schema::build(Query::default(), EmptyMutation, Subscription)
        .finish()
        .sdl()
}

#[cfg(test)]
mod tests {
    /// The committed schema is the schema the code serves. Refresh it with
    /// `AGENTINDEX_BLESS_SCHEMA=1 cargo test -p agentindex-api`.
    #[test]
    fn committed_schema_matches_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.graphql");
        let printed = super::sdl();
        if std::env::var_os("AGENTINDEX_BLESS_SCHEMA").is_some() {
            std::fs::write(path, &printed).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == printed,
            "api/schema.graphql is stale; run AGENTINDEX_BLESS_SCHEMA=1 cargo test -p agentindex-api"
        );
    }
}
