//! agentindex's read side: the HTTP server over the store.
//!
//! [`server`] binds the address and routes requests; [`budget`] decides how big a GraphQL
//! document may be before anything expands it, on every endpoint; [`explorer`] serves the explorer at `/`
//! and GraphiQL's files, embedded; [`graphql`] is the GraphQL schema and its
//! resolvers, over the read queries in `read` (single agents by id through `agent_lookups`,
//! which coalesces them on PostgreSQL); [`http`] has the GraphQL, health, readiness and
//! status endpoints; [`limits`] the per-client rate limit and CORS, [`time_share`] each client's
//! share of the server's time, [`low_priority_lane`] where a client that used much of it runs; [`client`] who a request
//! comes from (behind trusted proxies too); [`connections`] the accept loop and its timeouts
//! and connection caps; `websocket` `/graphql/ws` and its caps; [`metrics`] `/metrics`;
//! [`feeds`] answers the
//! reputation feed (`GET /feeds/reputation.jsonl`);
//! [`subgraph`] answers the agent0 subgraph's GraphQL at `/subgraphs/name/agent0`; [`mcp`] is
//! the MCP server (`/mcp`, and stdio for `agentindex mcp`);
//! [`changes`] turns committed batches into subscription events; [`cache`] keeps query
//! responses while the database is unchanged (keyed by `cache_key`, bounded by `lru`);
//! `facet_cache` keeps skill and tag facets; [`feed_cache`] keeps computed feeds (in files,
//! `feed_spool`); [`client_error`]
//! is what clients see of a failure inside the server; `row_budget` counts the rows one
//! request reads; [`state`] holds what every handler reads from.

mod agent_lookups;
pub mod budget;
pub mod cache;
mod cache_key;
mod chain_status;
pub mod changes;
pub mod client;
pub mod client_error;
mod common_words;
pub mod connections;
pub mod discovery;
pub mod explorer;
mod facet_cache;
pub mod feed_cache;
mod feed_spool;
pub mod feeds;
pub mod graphql;
pub mod http;
pub mod limits;
pub mod low_priority_lane;
mod lru;
pub mod mcp;
pub mod metrics;
mod read;
mod row_budget;
pub mod server;
pub mod state;
pub mod subgraph;
mod term_counts;
pub mod time_share;
mod websocket;

pub use server::{ServeError, router, serve};
pub use state::ApiState;
