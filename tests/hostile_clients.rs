//! Hostile clients against a running `agentindex serve` (the real binary, over an index of a
//! devnet scenario, on whichever backend the run tests): each class of request that once stalled
//! or exhausted the server is sent as an attacker would, in a few hundred bytes, and each must
//! get a refusal or a bounded answer within its budget while the server stays up, `/healthz`
//! answers in under 100 ms throughout (asked every 20 ms from a client address of its own), and
//! the server's resident memory stays under [`MEMORY_BOUND_KIB`].

use crate::support;
use crate::support::hostile::{HealthWatch, resident_kib};

use agentindex_contracts::Devnet;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// The server's resident memory may not pass this, whatever is sent (a 512 MiB pod holds it
/// twice over).
const MEMORY_BOUND_KIB: u64 = 256 * 1024;
/// `/healthz` answers within this throughout.
const HEALTH_BUDGET: Duration = Duration::from_millis(100);
/// A refusal comes back within this (a safety bound: refusals take well under a millisecond of
/// CPU; this only tells "refused" from "stalled").
const REFUSAL_BUDGET: Duration = Duration::from_secs(2);
/// The header-read timeout the server is configured with.
const HEADER_TIMEOUT_SECS: u64 = 2;

/// A served index and the process serving it.
struct Target {
    server: support::binary::Running,
    base: String,
    http: reqwest::Client,
    _devnet: Devnet,
    _dir: tempfile::TempDir,
}

impl Target {
    /// Indexes the devnet scenario, then starts `agentindex serve` over it with `api` (TOML
    /// keys of `[api]`) on top of the suite's own settings.
    async fn start(api: &str) -> Self {
        let devnet = Devnet::start().await.unwrap();
        support::scenario::run(&devnet).await;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.db");
        let config = support::config(&devnet, &db, 0);
        support::index_until_synced(&config).await;
        let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
            + &format!("\n[api]\nlisten = \"127.0.0.1:0\"\n{api}\n");
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, toml).unwrap();
        let (server, base) = support::binary::start(&["serve", "--config"], &path);
        Self {
            server,
            base,
            http: reqwest::Client::new(),
            _devnet: devnet,
            _dir: dir,
        }
    }

    /// POSTs `body` to `path` and returns the status, the JSON answer and how long it took.
    async fn post(&self, path: &str, body: &Value) -> (u16, Value, Duration) {
        let started = Instant::now();
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value, started.elapsed())
    }

    /// Sends `query` to `path` and checks it is refused, quickly, with nothing executed;
    /// returns the first error's message.
    async fn assert_refused(&self, path: &str, query: &str, what: &str) -> String {
        assert!(
            query.len() < 16 * 1024,
            "{what}: the attack fits the size cap"
        );
        let (status, body, took) = self.post(path, &json!({ "query": query })).await;
        assert!(
            took < REFUSAL_BUDGET,
            "{what} on {path}: answered after {took:?}"
        );
        assert!(
            status == 200 || status == 400,
            "{what} on {path}: status {status}: {body}"
        );
        let message = body["errors"][0]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{what} on {path} was not refused: {body}"))
            .to_string();
        assert!(
            body["data"].is_null(),
            "{what} on {path}: nothing is answered: {body}"
        );
        message
    }
}

/// `depth` fragments, each spreading the next twice: `2^depth` fields once expanded, in a few
/// hundred bytes.
fn fragment_bomb(root: &str, on: &str, leaf: &str, depth: usize) -> String {
    let mut text = format!("query {{ {root} {{ ...F0 }} }}");
    for level in 0..depth {
        let next = level + 1;
        text += &format!(" fragment F{level} on {on} {{ ...F{next} ...F{next} }}");
    }
    text + &format!(" fragment F{depth} on {on} {{ {leaf} }}")
}

/// A list argument nested `levels` deep: `[[[…]]]`.
fn nested_list(levels: usize) -> String {
    "[".repeat(levels) + &"]".repeat(levels)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_are_refused_or_bounded_while_the_server_stays_healthy() {
    // Rate limits out of the way: each attack must be stopped by the limit meant for it, not
    // by the per-client rate.
    let mut target =
        Target::start("requests_per_minute_per_client = 1000000\nclient_burst = 100000\n").await;
    let pid = target.server.pid();
    let baseline = resident_kib(pid);
    let health = HealthWatch::start(&target.base, HEALTH_BUDGET);

    // Expansion before limits: fragments spreading fragments, 2^24 fields in under 1 KB.
    let bomb = fragment_bomb("agents(first: 1000)", "Agent", "id", 24);
    assert!(bomb.len() < 1024, "{} bytes", bomb.len());
    target
        .assert_refused("/subgraphs/name/agent0", &bomb, "a fragment bomb")
        .await;
    let bomb = fragment_bomb("agents(first: 50) { edges { node", "Agent", "id } }", 24);
    target
        .assert_refused("/graphql", &bomb, "a fragment bomb")
        .await;

    // An argument value nested thousands of levels deep, under the size cap.
    for path in ["/graphql", "/subgraphs/name/agent0"] {
        let (argument, fields) = if path == "/graphql" {
            ("filter: { tags: ", "totalCount")
        } else {
            ("where: { id_in: ", "id")
        };
        let query = format!("{{ agents({argument}{} }}) {{ {fields} }} }}", nested_list(4_000));
        target
            .assert_refused(path, &query, "a value nested 4,000 deep")
            .await;
    }

    // Many tokens, many directives, many aliases, each in one small request.
    let tokens = format!(
        "{{ agents(filter: {{ tags: [{}] }}) {{ totalCount }} }}",
        vec!["\"a\""; 3_000].join(",")
    );
    target
        .assert_refused("/graphql", &tokens, "3,000 tokens")
        .await;
    let directives = format!(
        "{{ __typename {} }}",
        "@include(if: true) ".repeat(300)
    );
    target
        .assert_refused("/graphql", &directives, "300 directives")
        .await;
    let aliases: String = (0..1_000).map(|i| format!("a{i}: agents {{ id }} ")).collect();
    target
        .assert_refused("/subgraphs/name/agent0", &format!("{{ {aliases} }}"), "1,000 aliases")
        .await;

    // Connections that never finish their headers are closed once the header timeout passes,
    // while /healthz (from another address) keeps answering.
    slow_headers_are_cut_off(&target.base, 400).await;

    // The server is up, was never slow to say so, and held its memory.
    assert!(target.server.alive(), "the server is still running");
    let record = health.finish().await;
    assert!(record.answers > 50, "the watcher asked throughout: {record:?}");
    assert!(record.failures.is_empty(), "/healthz failed: {record:?}");
    assert!(
        record.slow.is_empty(),
        "/healthz answered slower than {HEALTH_BUDGET:?}: {record:?}"
    );
    let peak = support::memory::peak_kib(&pid.to_string()).unwrap();
    assert!(
        peak < MEMORY_BOUND_KIB,
        "peak resident memory {peak} KiB (started at {baseline} KiB)"
    );
}

/// Opens `count` connections that send part of a request's headers and then nothing, and
/// checks every one is closed by the server soon after the header timeout.
async fn slow_headers_are_cut_off(base: &str, count: usize) {
    let address = base.trim_start_matches("http://").to_string();
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let Ok(mut stream) = TcpStream::connect(&address).await else {
            // Refused at accept (a connection cap) is as good as closed.
            continue;
        };
        let _ = stream
            .write_all(b"GET /graphql HTTP/1.1\r\nHost: attacker\r\nX-Slow: ")
            .await;
        held.push(stream);
    }
    let deadline = Duration::from_secs(HEADER_TIMEOUT_SECS + 3);
    let closed = futures::future::join_all(held.into_iter().map(|mut stream| async move {
        let mut buffer = [0u8; 512];
        loop {
            match tokio::time::timeout(deadline, stream.read(&mut buffer)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                // A 408 or similar answer before the close is fine: keep reading to the end.
                Ok(Ok(_)) => continue,
                Err(_) => return false,
            }
        }
    }))
    .await;
    let open = closed.iter().filter(|c| !**c).count();
    assert_eq!(open, 0, "{open} slow connections were still held");
}

/// Keeps the types of the websocket client in use until its attacks land here.
#[allow(dead_code)]
async fn websocket(base: &str) -> impl SinkExt<Message> + StreamExt {
    let url = format!("{}/graphql/ws", base.replacen("http", "ws", 1));
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
            .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    socket
}
