//! One GraphQL document run for an MCP tool or resource: the schema `/graphql` runs, with its
//! loaders, depth, complexity, row and time limits, so an answer over MCP is the answer the
//! GraphQL API gives to the same question.

use crate::graphql::AgentSchema;
use crate::metrics::Endpoint;
use crate::state::ApiState;
use serde_json::Value;
use std::time::Instant;

/// What a GraphQL document could not answer, in the words its errors give.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub(crate) struct QueryRefused(pub(crate) Vec<String>);

/// Runs `document` with `variables`, counted in `/metrics` as `mcp:{label}`, and returns its
/// `data`, or every error's message when it has any.
pub(crate) async fn run(
    schema: &AgentSchema,
    state: &ApiState,
    label: &str,
    document: &str,
    variables: Value,
) -> Result<Value, QueryRefused> {
    let started = Instant::now();
    let request = async_graphql::Request::new(document)
        .variables(async_graphql::Variables::from_json(variables));
    let request = crate::graphql::loader_set::for_request(request, state);
    let response = schema.execute(request).await;
    state
        .metrics
        .observe(Endpoint::Mcp, label, started.elapsed());
    if !response.errors.is_empty() {
        return Err(QueryRefused(
            response.errors.into_iter().map(|e| e.message).collect(),
        ));
    }
    response
        .data
        .into_json()
        .map_err(|e| QueryRefused(vec![format!("the answer could not be read as JSON: {e}")]))
}
