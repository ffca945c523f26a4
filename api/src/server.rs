//! The HTTP server: the routes and binding them to the configured address.

use crate::connections::{self, ConnectionPolicy};
use crate::graphql;
use crate::low_priority_lane::LowPriorityLane;
use crate::state::ApiState;
use crate::time_share::TimeShare;
use crate::{explorer, feeds, http, limits, subgraph, websocket};
use axum::Router;
use axum::middleware;
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::limit::RequestBodyLimitLayer;

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The listen address could not be bound.
    #[error("binding the API to {address}: {source}")]
    Bind {
        /// `[api] listen`.
        address: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Largest request body accepted.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Every route of the API.
pub fn router(state: ApiState) -> Router {
    let schema = graphql::schema(state.clone());
    let schema_for_mcp = schema.clone();
    agentindex_indexer::priority::ration_lowered_threads(state.api.low_priority_cores);
    let time = Arc::new(TimeShare::new(&state.api));
    let api = Router::new()
        .route("/graphql", get(http::graphql_get).post(http::graphql))
        .route(
            "/graphql/ws",
            get(websocket::subscribe).with_state(websocket::Websockets::new(
                schema.clone(),
                &state.api.websocket,
                Arc::clone(&time),
            )),
        )
        .route("/status", get(http::status))
        .route("/readyz", get(http::readyz))
        .route("/metrics", get(http::metrics))
        .with_state((schema, state.clone()));
    let lane = Arc::new(LowPriorityLane::start());
    let limiter = limits::ClientLimiter::new(&state.api, time, lane, state.metrics.clone());
    let cors = limits::cors(&state.api.cors_origins);
    Router::new()
        .route("/feeds/reputation.jsonl", get(feeds::reputation))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/subgraphs/name/agent0",
            get(subgraph::get_all).post(subgraph::post_all),
        )
        .route(
            "/subgraphs/name/agent0/{chain}",
            get(subgraph::get_chain).post(subgraph::post_chain),
        )
        .route(crate::discovery::PATH, get(crate::discovery::resources))
        .route_service(
            crate::mcp::PATH,
            crate::mcp::service(schema_for_mcp, state.clone()),
        )
        .with_state(state)
        .merge(api)
        .merge(explorer::routes())
        .layer(middleware::from_fn_with_state(limiter, limits::rate_limit))
        .layer(cors)
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
}

/// Binds `address` and serves until `shutdown` turns true, each connection held to
/// `[api.connections]` ([`connections`]). `bound` learns the address actually bound (useful
/// with port 0).
pub async fn serve(
    state: ApiState,
    address: SocketAddr,
    shutdown: watch::Receiver<bool>,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind { address, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { address, source })?;
    bound(local);
    tracing::info!(target: "agentindex::api", %local, "serving the API");
    let policy = ConnectionPolicy::new(&state.api.connections);
    connections::serve(listener, router(state), policy, shutdown).await;
    Ok(())
}
