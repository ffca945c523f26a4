//! The API served in the test's own process on a loopback port, and indexing in the background,
//! for tests that query while the chain moves.

use agentindex_api::{ApiState, ServeError};
use agentindex_indexer::config::{ApiConfig, Config};
use agentindex_indexer::engine::{self, EngineError, IndexOptions};
use agentindex_indexer::store::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A running API server.
pub(crate) struct Served {
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    stop: watch::Sender<bool>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl Served {
    /// Stops the server and checks it ended cleanly.
    pub(crate) async fn stop(self) {
        self.stop.send(true).unwrap();
        self.task.await.unwrap().unwrap();
    }
}

/// Serves `store` under `config` on a free loopback port (with [`super::TEST_SERVER_MS_BURST`]
/// as the burst of server time, and as what a client may owe before it is served at low
/// priority, unless the config sets its own).
pub(crate) async fn serve(store: Store, config: &Config) -> Served {
    let mut config = config.clone();
    let shipped = ApiConfig::default();
    if config.api.server_ms_burst_per_client == shipped.server_ms_burst_per_client {
        config.api.server_ms_burst_per_client = super::TEST_SERVER_MS_BURST;
    }
    if config.api.low_priority_after_ms_per_client == shipped.low_priority_after_ms_per_client {
        config.api.low_priority_after_ms_per_client = super::TEST_SERVER_MS_BURST;
    }
    let config = &config;
    let (stop, shutdown) = watch::channel(false);
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(agentindex_api::serve(
        ApiState::new(store, config),
        "127.0.0.1:0".parse().unwrap(),
        shutdown,
        move |address| {
            let _ = bound_tx.send(address);
        },
    ));
    let base = format!("http://{}", bound_rx.await.unwrap());
    Served { base, stop, task }
}

/// Indexing of `config` (chains only, no documents) running until [`Indexing::stop`].
pub(crate) struct Indexing {
    stop: watch::Sender<bool>,
    task: JoinHandle<Result<(), EngineError>>,
}

impl Indexing {
    /// Stops indexing after the batch in flight and checks it ended cleanly.
    pub(crate) async fn stop(self) {
        self.stop.send(true).unwrap();
        self.task.await.unwrap().unwrap();
    }
}

/// Starts following the chains of `config` in the background (no documents).
pub(crate) fn index_in_background(config: &Config) -> Indexing {
    start_indexing(config, true)
}

/// Starts following the chains of `config` and fetching their documents in the background.
pub(crate) fn index_with_documents_in_background(config: &Config) -> Indexing {
    start_indexing(config, false)
}

fn start_indexing(config: &Config, skip_documents: bool) -> Indexing {
    let (stop, shutdown) = watch::channel(false);
    let config = config.clone();
    let task = tokio::spawn(async move {
        let options = IndexOptions {
            skip_documents,
            retry: super::quick_retry(),
            ..IndexOptions::default()
        };
        engine::index(&config, options, shutdown, |_, _| {}).await
    });
    Indexing { stop, task }
}

/// The text of `{base}/metrics`.
pub(crate) async fn metrics_text(base: &str) -> String {
    let url = format!("{base}/metrics");
    let answer = reqwest::get(&url)
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    answer
        .text()
        .await
        .unwrap_or_else(|e| panic!("GET {url}: the body: {e}"))
}

/// The value of the unlabelled metric `name` in an OpenMetrics text (`/metrics`).
pub(crate) fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// A reputation feed as a client reads it: its body and the digest header, which is checked to
/// be the SHA-256 of the body.
pub(crate) struct Feed {
    pub(crate) body: String,
    pub(crate) digest: String,
}

/// Fetches `{base}/feeds/reputation.jsonl{query}`.
pub(crate) async fn feed(base: &str, query: &str) -> Feed {
    use sha2::{Digest, Sha256};
    let response = reqwest::get(format!("{base}/feeds/reputation.jsonl{query}"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "feed {query} from {base}");
    let digest = response.headers()["x-feed-sha256"]
        .to_str()
        .unwrap()
        .to_string();
    let body = response.text().await.unwrap();
    let hex: String = Sha256::digest(body.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, hex, "the digest header is the SHA-256 of the body");
    Feed { body, digest }
}

/// The feed of `block` from `base` once the indexer behind it has stored it: asked every 50 ms
/// while the answer is 404 (not stored yet), for at most `limit`.
pub(crate) async fn stored_feed(base: &str, block: u64, limit: std::time::Duration) -> Feed {
    let url = format!("{base}/feeds/reputation.jsonl?block={block}");
    let deadline = std::time::Instant::now() + limit;
    loop {
        let status = reqwest::get(&url).await.unwrap().status();
        if status != 404 {
            return feed(base, &format!("?block={block}")).await;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{base} stored no feed at block {block} within {limit:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// POSTs `body` as JSON to `url` and reads the answer as JSON, whatever its status; a transport
/// or decoding error fails the test, naming `url`.
pub(crate) async fn post_json(url: &str, body: &serde_json::Value) -> serde_json::Value {
    let response = reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    response
        .json()
        .await
        .unwrap_or_else(|e| panic!("POST {url}: the answer is not JSON: {e}"))
}

/// The agent ids of `query` (an `agents` list taking `$after`, asking for `edges { node { id } }
/// pageInfo { hasNextPage endCursor }`) with `variables`, up to `pages` pages, following the
/// cursors; `what` names the list in failures.
pub(crate) async fn agent_ids_paged(
    endpoint: &str,
    query: &str,
    mut variables: serde_json::Value,
    pages: usize,
    what: &str,
) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..pages {
        let body = post_json(
            endpoint,
            &serde_json::json!({ "query": query, "variables": variables }),
        )
        .await;
        assert!(body["errors"].is_null(), "{what}: {body}");
        let agents = &body["data"]["agents"];
        ids.extend(
            agents["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|edge| edge["node"]["id"].as_str().unwrap().to_string()),
        );
        if agents["pageInfo"]["hasNextPage"] != true {
            break;
        }
        variables["after"] = agents["pageInfo"]["endCursor"].clone();
    }
    ids
}
