//! The HTTP endpoints besides the feed: GraphQL (`POST /graphql`, and `GET /graphql` with the
//! query in the URL or GraphiQL without one), `/healthz`, `/readyz`, `/status` and `/metrics`.

use crate::cache_key::CacheKey;
use crate::chain_status;
use crate::client_error;
use crate::graphql::AgentSchema;
use crate::metrics::{CacheSizes, Endpoint};
use crate::state::ApiState;
use agentindex_indexer::store::StoreRead;
use async_graphql_axum::{GraphQLRequest, GraphQLResponse};
use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// `POST /graphql`.
pub(crate) async fn graphql(
    State((schema, state)): State<(AgentSchema, ApiState)>,
    request: GraphQLRequest,
) -> Response {
    answer(&schema, &state, request.into_inner()).await
}

/// `GET /graphql`: a query in the URL (`?query=…&variables=…&operationName=…`, as GraphQL over
/// HTTP has it, so answers can be cached by URL), or GraphiQL when the URL has none.
pub(crate) async fn graphql_get(
    State((schema, state)): State<(AgentSchema, ApiState)>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Some(raw) = raw.filter(|raw| !raw.is_empty()) else {
        return crate::explorer::graphiql_page();
    };
    match async_graphql::http::parse_query_string(&raw) {
        Ok(request) if request.query.trim().is_empty() => {
            (StatusCode::BAD_REQUEST, "the URL has no `query` parameter").into_response()
        }
        Ok(request) => answer(&schema, &state, request).await,
        Err(e) => (
            StatusCode::BAD_REQUEST,
            format!("the URL holds no GraphQL request: {e}"),
        )
            .into_response(),
    }
}

/// Runs one request; counted and timed by operation name in `/metrics`; answered from the
/// response cache while the database is unchanged.
async fn answer(
    schema: &AgentSchema,
    state: &ApiState,
    request: async_graphql::Request,
) -> Response {
    let operation = operation_label(&request);
    let started = std::time::Instant::now();
    let key = Some(CacheKey::of("graphql", &request));
    let version = state.cache.version().await.ok();
    let cached = match (&key, version) {
        (Some(key), Some(version)) => state.cache.get(key, version),
        _ => None,
    };
    let response = match cached {
        Some(body) => json_body(body),
        None => {
            // Its size was checked by the schema's budget (`crate::budget`) before anything
            // expanded it; its rows and time are bounded by `graphql::operation_limits`.
            let request = crate::graphql::loader_set::for_request(request, state);
            let response = schema.execute(request).await;
            match (key, version, response.is_ok()) {
                (Some(key), Some(version), true) => match serde_json::to_vec(&response) {
                    Ok(body) => {
                        state.cache.put(key, version, &body);
                        json_body(body)
                    }
                    Err(_) => GraphQLResponse::from(response).into_response(),
                },
                _ => GraphQLResponse::from(response).into_response(),
            }
        }
    };
    state
        .metrics
        .observe(Endpoint::Graphql, &operation, started.elapsed());
    response
}

/// The operation a request is counted under: its `operationName`, else the name its document
/// gives its first operation (`query Name …`), else `anonymous`.
pub(crate) fn operation_label(request: &async_graphql::Request) -> String {
    if let Some(name) = &request.operation_name {
        return name.clone();
    }
    let text = request.query.trim_start();
    let rest = ["query", "subscription", "mutation"]
        .iter()
        .find_map(|keyword| text.strip_prefix(keyword));
    let name: String = rest
        .map(|rest| {
            rest.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .unwrap_or_default();
    if name.is_empty() {
        "anonymous".into()
    } else {
        name
    }
}

fn json_body(body: Vec<u8>) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// `GET /metrics`.
pub(crate) async fn metrics(State((_, state)): State<(AgentSchema, ApiState)>) -> Response {
    let caches = || CacheSizes {
        response_bytes: state.cache.bytes(),
        feed_bytes: state.feeds.bytes(),
        facet_entries: state.facets.len(),
    };
    match state.metrics.render(&state.store, caches).await {
        Ok(text) => (
            [(
                axum::http::header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text.to_string(),
        )
            .into_response(),
        Err(e) => {
            client_error::hide("rendering /metrics", &e).response(StatusCode::INTERNAL_SERVER_ERROR)
        }
    }
}

/// `GET /status`: every chain's head, finalized and indexed block and lag, and under `run`
/// what its follower and endpoints meet (`chain_status.rs`).
pub(crate) async fn status(State((_, state)): State<(AgentSchema, ApiState)>) -> Response {
    match state.store.statuses().await {
        Ok(statuses) => {
            Json(chain_status::merged(statuses, state.health.as_deref())).into_response()
        }
        Err(e) => client_error::hide("reading the chains' status", &e)
            .response(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

/// `GET /readyz`: 200 once every chain reached its head once (under `run`), or at once when
/// only serving; 503 before, with a line for each chain not following saying what it meets
/// and what to check.
pub(crate) async fn readyz(State((_, state)): State<(AgentSchema, ApiState)>) -> Response {
    match state.ready().await {
        Ok(true) => (StatusCode::OK, "ready").into_response(),
        Ok(false) => {
            let mut body = String::from("indexing has not reached the head yet");
            for trouble in chain_status::troubles(state.health.as_deref()) {
                body += "\n";
                body += &trouble;
            }
            (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
        }
        Err(e) => client_error::hide("reading the chains' status", &e)
            .response(StatusCode::SERVICE_UNAVAILABLE),
    }
}
