//! agentindex's read side: the HTTP server over the store.
//!
//! [`server`] binds the address and routes requests; [`feeds`] answers the reputation feed
//! (`GET /feeds/reputation.jsonl`); [`state`] holds what every handler reads from. The GraphQL
//! schema, its resolvers and the health, status and metrics endpoints join them with the API
//! issue.

pub mod feeds;
pub mod server;
pub mod state;

pub use server::{ServeError, router, serve};
pub use state::ApiState;
