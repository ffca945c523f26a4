//! The soak benchmark's document server: the registration files of the agents registered during
//! the run, on loopback. One in ten is missing (404), one in ten fails (500), and the rest
//! change every minute (their description names the minute), so the documents worker meets
//! what it meets in the wild: documents that change and documents that fail.

use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::time::{SystemTime, UNIX_EPOCH};

/// A running server; stops when dropped.
pub(crate) struct Documents {
    /// The base of every registration file's URL: append the agent id.
    pub(crate) base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Documents {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) async fn start() -> anyhow::Result<Documents> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}/agents/", listener.local_addr()?);
    let app = Router::new().route("/agents/{id}", get(registration));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Documents { base, task })
}

async fn registration(Path(id): Path<u64>) -> Response {
    match id % 10 {
        0 => return (StatusCode::NOT_FOUND, "no such agent").into_response(),
        1 => return (StatusCode::INTERNAL_SERVER_ERROR, "backend down").into_response(),
        _ => {}
    }
    let minute = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 60);
    let file = serde_json::json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": format!("Soak agent {id}"),
        "description": format!("Translates and summarizes; revision of minute {minute}"),
        "services": [
            {"name": "A2A", "endpoint": format!("https://soak.example/{id}"), "version": "1.0"}
        ],
        "x402Support": id % 3 == 0,
        "active": true
    });
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        file.to_string(),
    )
        .into_response()
}
