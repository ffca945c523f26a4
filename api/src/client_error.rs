//! The one place a failure inside the server becomes what a client sees. Clients never see SQL
//! text, connection strings or file paths: they get a short sentence and an error id
//! (`internal error while reading the index (error id 3f9c0a…)`); the log line
//! (`tracing::error!`, target `agentindex::api`) carries the same id with the full details, so an
//! operator given the id finds what failed. Every endpoint maps its store errors here: the
//! GraphQL schema (through [`crate::graphql::hidden_errors`]), the subgraph, the feed, `/status`,
//! `/readyz` and `/metrics`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::fmt;
use std::hash::BuildHasher;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// An opaque id tying what a client was told to the log line with the details: 16 hex digits,
/// unguessable across restarts (a per-process random key hashes a counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorId(u64);

impl ErrorId {
    fn next() -> Self {
        static KEY: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        Self(KEY.get_or_init(Default::default).hash_one(n))
    }
}

impl fmt::Display for ErrorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A failure as a client is told of it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("internal error while {what} (error id {id})")]
pub struct Hidden {
    /// What the server was doing, in words safe to show (`reading the index`).
    what: &'static str,
    /// The id the log line carries.
    pub(crate) id: ErrorId,
}

/// Logs `error` (with everything it says) under a new error id and returns what the client may
/// see of it: `what` the server was doing and the id.
pub(crate) fn hide(what: &'static str, error: &dyn fmt::Display) -> Hidden {
    let id = ErrorId::next();
    tracing::error!(target: "agentindex::api", error_id = %id, what, error = %error, "a request failed inside the server");
    Hidden { what, id }
}

impl Hidden {
    /// The GraphQL error: the message, with `code: INTERNAL_SERVER_ERROR` and `errorId` in its
    /// extensions.
    pub(crate) fn graphql(&self) -> async_graphql::ServerError {
        let mut error = async_graphql::ServerError::new(self.to_string(), None);
        let mut extensions = async_graphql::ErrorExtensionValues::default();
        extensions.set("code", "INTERNAL_SERVER_ERROR");
        extensions.set("errorId", self.id.to_string());
        error.extensions = Some(extensions);
        error
    }

    /// The HTTP answer: `status` with `{"error": …, "errorId": …}`.
    pub(crate) fn response(&self, status: StatusCode) -> Response {
        let body = serde_json::json!({ "error": self.to_string(), "errorId": self.id.to_string() });
        (status, axum::Json(body)).into_response()
    }
}

/// Whether an error a GraphQL resolver returned came from the store (its source is a driver or
/// store error, or a DataLoader's, which carry those or their text): those are hidden, every
/// other resolver error is the client's own doing and is shown as it is.
pub(crate) fn is_internal(error: &async_graphql::ServerError) -> bool {
    use agentindex_indexer::store::StoreError;
    use std::sync::Arc;
    error.source::<sqlx::Error>().is_some()
        || error.source::<Arc<sqlx::Error>>().is_some()
        || error.source::<StoreError>().is_some()
        || error.source::<Arc<StoreError>>().is_some()
        || error.source::<Arc<String>>().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_sees_the_id_and_not_the_details() {
        let hidden = hide(
            "reading the index",
            &"no such table: agents (sqlite:///srv/secret/agentindex.db)",
        );
        let message = hidden.to_string();
        assert!(message.contains(&hidden.id.to_string()), "{message}");
        assert!(
            !message.contains("agents") && !message.contains("/srv"),
            "{message}"
        );
        assert_eq!(hidden.id.to_string().len(), 16);
        assert_ne!(
            hide("x", &"y").id,
            hide("x", &"y").id,
            "every failure gets its own id"
        );
    }

    #[test]
    fn store_errors_are_internal_and_refusals_are_not() {
        let from_store: async_graphql::Error = sqlx::Error::RowNotFound.into();
        assert!(is_internal(
            &from_store.into_server_error(Default::default())
        ));
        let loader: async_graphql::Error = std::sync::Arc::new(sqlx::Error::PoolTimedOut).into();
        assert!(is_internal(&loader.into_server_error(Default::default())));
        let refusal = async_graphql::Error::new("first must be between 1 and 100, got 0");
        assert!(!is_internal(&refusal.into_server_error(Default::default())));
    }
}
