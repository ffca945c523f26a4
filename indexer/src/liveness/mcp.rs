//! MCP probes over streamable HTTP: `initialize` (the reply read from JSON or from an event
//! stream), `notifications/initialized`, `tools/list` page by page, then the session closed
//! with a DELETE. Up when the tools are listed; kept: the negotiated protocol version, the
//! server's name and version, and each tool's name and description.

use super::jsonrpc;
use super::prober::{answered, unanswered, unexpected_status, unknown_id};
use super::{Outcome, Prober, Reason, Status, Target};
use crate::documents::Request;
use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName};
use serde_json::{Value, json};
use tokio::time::Instant;
use url::Url;

/// The protocol version asked for; the server answers with the one it speaks.
const ASKED_VERSION: &str = "2025-06-18";
/// Pages of `tools/list` read at most.
const MAX_PAGES: usize = 5;
/// Tools kept at most.
const MAX_TOOLS: usize = 200;
/// Characters of a tool's description kept at most.
const MAX_DESCRIPTION: usize = 1_000;

const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// A request to the MCP server at `url` in session `session` (when it gave one).
fn post(url: &Url, body: Vec<u8>, session: Option<&str>, version: Option<&str>) -> Request {
    let mut request = Request::post(url.clone(), body)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    request.enough = Some(jsonrpc::stream_has_reply);
    if let Some(session) = session {
        request = request.header(SESSION, session);
    }
    if let Some(version) = version {
        request = request.header(VERSION, version);
    }
    request
}

/// Initializes a session with the MCP server at `url` and lists its tools.
pub(super) async fn probe(
    prober: &Prober,
    target: &Target,
    url: Url,
    deadline: Instant,
) -> Outcome {
    let id = unknown_id();
    let params = json!({
        "protocolVersion": ASKED_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "agentindex-prober", "version": env!("CARGO_PKG_VERSION")},
    });
    let request = post(
        &url,
        jsonrpc::request(&id, "initialize", params),
        None,
        None,
    );
    let (answer, latency) = match prober.send(&request, deadline).await {
        Ok(sent) => sent,
        Err(error) => return unanswered(target, &error),
    };
    let initialized = match jsonrpc::reply(&answer.body, &id) {
        Some(Ok(result)) => result,
        Some(Err(error)) => {
            return answered(target, &answer, latency, Status::Up).failed(
                Status::Degraded,
                Reason::Protocol,
                format!(
                    "initialize answered error {}: {}",
                    error.code, error.message
                ),
            );
        }
        None if answer.status >= 300 => return unexpected_status(target, &answer, latency),
        None => {
            return answered(target, &answer, latency, Status::Up).failed(
                Status::Degraded,
                Reason::Protocol,
                "initialize: no JSON-RPC 2.0 reply",
            );
        }
    };
    let mut outcome = answered(target, &answer, latency, Status::Up);
    let version = initialized
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    outcome.protocol_version = version.clone();
    let session = answer.header("mcp-session-id").map(str::to_string);
    let server = initialized
        .get("serverInfo")
        .cloned()
        .unwrap_or(Value::Null);
    let notify = post(
        &url,
        jsonrpc::notification("notifications/initialized"),
        session.as_deref(),
        version.as_deref(),
    );
    // A server that refuses the notification still says so when the tools are asked for.
    let _ = prober.send(&notify, deadline).await;
    let listed = if initialized.pointer("/capabilities/tools").is_some() {
        list_tools(
            prober,
            &url,
            session.as_deref(),
            version.as_deref(),
            deadline,
        )
        .await
    } else {
        Ok(Vec::new())
    };
    if let Some(session) = &session {
        let mut close = Request::get(url.clone()).header(SESSION, session);
        close.method = Method::DELETE;
        let _ = prober.send(&close, deadline).await;
    }
    match listed {
        Ok(tools) => {
            outcome.detail = json!({"server": server, "tools": tools});
            outcome
        }
        Err(error) => {
            outcome.detail = json!({"server": server});
            outcome.failed(Status::Degraded, Reason::Protocol, error.to_string())
        }
    }
}

/// Why the tools could not be listed.
#[derive(Debug, thiserror::Error)]
enum ListError {
    #[error("tools/list: {0}")]
    Request(crate::documents::FetchError),
    #[error("tools/list answered error {code}: {message}")]
    Rpc { code: i64, message: String },
    #[error("tools/list: no JSON-RPC 2.0 reply (HTTP {status})")]
    NoReply { status: u16 },
}

/// Every tool the server lists, page by page, as `{name, description}`.
async fn list_tools(
    prober: &Prober,
    url: &Url,
    session: Option<&str>,
    version: Option<&str>,
    deadline: Instant,
) -> Result<Vec<Value>, ListError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let id = unknown_id();
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let request = post(
            url,
            jsonrpc::request(&id, "tools/list", params),
            session,
            version,
        );
        let (answer, _) = prober
            .send(&request, deadline)
            .await
            .map_err(ListError::Request)?;
        let result = match jsonrpc::reply(&answer.body, &id) {
            Some(Ok(result)) => result,
            Some(Err(error)) => {
                return Err(ListError::Rpc {
                    code: error.code,
                    message: error.message,
                });
            }
            None => {
                return Err(ListError::NoReply {
                    status: answer.status,
                });
            }
        };
        for tool in result
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            if tools.len() < MAX_TOOLS {
                let description = tool
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| d.chars().take(MAX_DESCRIPTION).collect::<String>());
                tools.push(json!({"name": name, "description": description}));
            }
        }
        cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    Ok(tools)
}
