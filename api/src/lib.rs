//! agentindex's read side.
//!
//! This crate will own the GraphQL schema and resolvers, the read-only queries over the store,
//! and the HTTP server (GraphQL, GraphiQL, subscriptions, health, status and metrics). It is empty
//! until the API issue lands.
