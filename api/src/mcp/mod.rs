//! The MCP server: agentindex's discovery API for models with tools (Claude, Gemini CLI,
//! Cursor, AgentKit…), over streamable HTTP at `/mcp` on `serve`, `run` and `dev`, and over
//! stdio (`agentindex mcp`) for desktop clients reading a local index.
//!
//! [`Directory`] (`handler`) answers every request; its tools (`tools`, described for a model
//! in `catalogue` with the GraphQL filter's own fields, `input_schema`) run GraphQL documents
//! (`documents`) on the `/graphql` schema (`query`), with their arguments checked
//! (`arguments`), their answers flattened (`answers`) and rendered as text (`render`), client
//! text quoted back cut short (`echo`);
//! `resources` serves agents' cards and registration files and the skill and tag taxonomy.
//! Over HTTP the server is stateless (no session to hold or exhaust) and sits behind the same
//! per-client rate limit, time share and body cap as `/graphql`.

mod answers;
mod arguments;
mod catalogue;
mod documents;
mod echo;
mod handler;
mod input_schema;
mod query;
mod render;
mod resources;
mod tools;

pub use handler::Directory;

use crate::graphql::AgentSchema;
use crate::state::ApiState;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// Where the server answers over HTTP.
pub const PATH: &str = "/mcp";

/// Largest JSON-RPC message accepted over HTTP: the API's request body cap.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// The streamable-HTTP service for [`PATH`]: stateless, answering in JSON, any `Host` (the
/// server is public and read-only: a page that rebinds a name to it can read nothing it could
/// not fetch itself).
pub fn service(
    schema: AgentSchema,
    state: ApiState,
) -> StreamableHttpService<Directory, NeverSessionManager> {
    let directory = Directory::new(schema, state);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES);
    StreamableHttpService::new(
        move || Ok(directory.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// Why the stdio server stopped.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The client's `initialize` never completed.
    #[error("starting the MCP server on stdio: {0}")]
    Start(String),
    /// The server's task failed.
    #[error("serving MCP on stdio: {0}")]
    Serve(#[from] tokio::task::JoinError),
}

/// Serves MCP on standard input and output until the client closes them.
pub async fn serve_stdio(schema: AgentSchema, state: ApiState) -> Result<(), StdioError> {
    let running = Directory::new(schema, state)
        .serve(rmcp::transport::io::stdio())
        .await
        .map_err(|e| StdioError::Start(e.to_string()))?;
    running.waiting().await?;
    Ok(())
}
