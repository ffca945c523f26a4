//! Hostile clients against a running `agentindex serve` (the real binary, over an index of a
//! devnet scenario, on whichever backend the run tests): each class of request that once stalled
//! or exhausted the server is sent as an attacker would, in a few hundred bytes, and each must
//! get a refusal or a bounded answer within its budget while the server stays up, `/healthz`
//! answers in under 100 ms throughout (asked every 20 ms from a client address of its own), and
//! the server's resident memory stays under [`MEMORY_BOUND_KIB`].

use crate::support;
use crate::support::graphql_ws::{next_json, refusal, subscribe, websocket};
use crate::support::hostile::{HealthWatch, resident_kib};

mod connections;
mod feeds;

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
/// Connections one client may hold open, as configured.
const CONNECTIONS_PER_CLIENT: usize = 64;
/// The response cache's bound, as configured: small, so a flood must reach it.
const RESPONSE_CACHE_BYTES: u64 = 64 * 1024;

/// Blocks whose reputation feed the target's indexer stored.
const STORED_FEEDS: [u64; 2] = [5, 10];

/// A served index and the process serving it.
struct Target {
    server: support::binary::Running,
    base: String,
    /// The indexed block (whose feed is computed on request).
    indexed: u64,
    http: reqwest::Client,
    _devnet: Devnet,
    _dir: tempfile::TempDir,
}

impl Target {
    /// Indexes the devnet scenario, stores the reputation feeds of [`STORED_FEEDS`], then
    /// starts `agentindex serve` over it with `api` (TOML keys of `[api]`) on top of the suite's
    /// own settings.
    async fn start(api: &str) -> Self {
        let devnet = Devnet::start().await.unwrap();
        support::scenario::run(&devnet).await;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.db");
        let config = support::config(&devnet, &db, 0);
        support::index_until_synced(&config).await;
        support::store_feeds(&config, &STORED_FEEDS).await;
        let store = support::open(&db).await;
        let indexed = support::indexed_block(&store, devnet.chain_id()).await;
        store.close().await;
        let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
            + &format!("\n[api]\nlisten = \"127.0.0.1:0\"\n{api}\n");
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, toml).unwrap();
        let (server, base) = support::binary::start(&["serve", "--config"], &path);
        Self {
            server,
            base,
            indexed,
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

    /// The value of the unlabelled metric `name` in `/metrics`.
    async fn metric(&self, name: &str) -> f64 {
        let text = self
            .http
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        support::api::metric(&text, name)
            .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
    }

    /// The metric `name` once `/metrics` shows it at `value` or more (it is rendered at most
    /// once a `metrics_cache_secs`); what it shows then.
    async fn metric_reaching(&self, name: &str, value: f64) -> f64 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self.metric(name).await;
            if now >= value {
                return now;
            }
            assert!(
                Instant::now() < deadline,
                "{name} stayed at {now}, below {value}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
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
    let mut target = Target::start(&format!(
        "requests_per_minute_per_client = 1000000\nclient_burst = 100000\n\
         [api.connections]\nheader_read_timeout_secs = {HEADER_TIMEOUT_SECS}\n\
         max_connections_per_client = {CONNECTIONS_PER_CLIENT}\n\
         [api.websocket]\nmax_replay_blocks = 5\n\
         [api.caches]\nresponse_cache_bytes = {RESPONSE_CACHE_BYTES}\n"
    ))
    .await;
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
        let query = format!(
            "{{ agents({argument}{} }}) {{ {fields} }} }}",
            nested_list(4_000)
        );
        target
            .assert_refused(path, &query, "a value nested 4,000 deep")
            .await;
    }

    // The same behind a block string never closed, which the parser reads as `""` and parses
    // on from.
    for path in ["/graphql", "/subgraphs/name/agent0"] {
        let query = format!(
            "{{ agents(chainIds: [\"\"\"x\" {} ) {{ id }} }}",
            "[".repeat(8_000)
        );
        target
            .assert_refused(
                path,
                &query,
                "an unclosed block string before 8,000 brackets",
            )
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
    let directives = format!("{{ __typename {} }}", "@include(if: true) ".repeat(300));
    target
        .assert_refused("/graphql", &directives, "300 directives")
        .await;
    let aliases: String = (0..100)
        .map(|i| format!("a{i}: agents {{ id }} "))
        .collect();
    for path in ["/graphql", "/subgraphs/name/agent0"] {
        let refused = target
            .assert_refused(path, &format!("{{ {aliases} }}"), "100 aliases")
            .await;
        assert!(
            refused.contains("100") && refused.contains("aliases"),
            "{refused}"
        );
    }

    // Lists in arguments: a thousand chain ids, a thousand ids in a subgraph filter.
    let ids: Vec<String> = (0..1_000).map(|n| n.to_string()).collect();
    let chains: Vec<u64> = (0..1_000).collect();
    for (path, query, variables) in [
        (
            "/graphql",
            "query($c: [Int!]) { agents(filter: { chainIds: $c }) { totalCount } }",
            json!({ "c": chains }),
        ),
        (
            "/subgraphs/name/agent0",
            "query($ids: [ID!]) { agents(where: { id_in: $ids }) { id } }",
            json!({ "ids": ids }),
        ),
    ] {
        let (_, body, took) = target
            .post(path, &json!({ "query": query, "variables": variables }))
            .await;
        let message = body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("1000") && message.contains("100"),
            "a list of 1,000 on {path} is refused naming its size and the cap: {body}"
        );
        assert!(took < REFUSAL_BUDGET, "{path}: {took:?}");
    }

    // Variables that would be copied into every place a query names them: refused by size.
    let (_, body, took) = target
        .post(
            "/subgraphs/name/agent0",
            &json!({
                "query": "query($w: Agent_filter) { agents(where: { or: [$w, $w, $w] }) { id } }",
                "variables": { "w": { "id": "x".repeat(60 * 1024) } },
            }),
        )
        .await;
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("the variables are")),
        "{body}"
    );
    assert!(took < REFUSAL_BUDGET, "{took:?}");

    // A page of pages: every agent's feedback, payments and history at the largest page size.
    let costly = "{ agents(first: 1000) { edges { node { \
        feedback(first: 1000) { edges { node { value } } } \
        payments(first: 1000) { edges { node { amount } } } \
        history(first: 1000) { edges { node { block } } } } } } }";
    target
        .assert_refused("/graphql", costly, "pages of pages")
        .await;

    // Distinct questions with big variables, each a new cache key: the cache stays within its
    // bytes. Every question is answered (the cache is not what refuses them).
    for n in 0..300 {
        let body = json!({
            "query": "query($skill: String) { agents(filter: { skill: $skill }, first: 5) { totalCount } }",
            "variables": { "skill": format!("{n}{}", "x".repeat(8 * 1024)) },
        });
        let (status, answer, _) = target.post("/graphql", &body).await;
        assert_eq!(status, 200, "{answer}");
        assert!(answer["errors"].is_null(), "{answer}");
    }
    let cached = target.metric("agentindex_api_response_cache_bytes").await;
    assert!(
        cached > 0.0 && cached <= RESPONSE_CACHE_BYTES as f64,
        "the response cache holds {cached} bytes (bound {RESPONSE_CACHE_BYTES})"
    );

    // A client past its share of feeds is refused before any feed is made for it.
    feeds::a_client_past_its_feed_share_sets_nothing_to_work(&target).await;

    // The feed at twenty different blocks at once: each answered, or refused as busy with a
    // time to retry; none hangs.
    feeds::feeds_at_many_blocks_are_bounded(&target).await;

    // Websockets: a fragment bomb in a subscription, a message over the size cap, more
    // subscriptions than one socket may hold, a replay from further back than allowed.
    connections::websocket_attacks_are_refused(&target.base).await;

    // Connections that never finish their headers: those over the per-client cap are closed at
    // once, the rest once the header timeout passes, while /healthz (from another address)
    // keeps answering.
    connections::slow_headers_are_cut_off(&target.base, 400).await;

    // The server is up, was never slow to say so, and held its memory.
    assert!(target.server.alive(), "the server is still running");
    let record = health.finish().await;
    assert!(
        record.answers > 50,
        "the watcher asked throughout: {record:?}"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_floods_and_spoofed_forwarding_headers_meet_the_rate_limit() {
    let target = Target::start("requests_per_minute_per_client = 60\nclient_burst = 10\n").await;
    // /metrics is limited like any query.
    let mut statuses = Vec::new();
    for _ in 0..30 {
        let response = target
            .http
            .get(format!("{}/metrics", target.base))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert!(limited >= 15, "a /metrics flood is limited: {statuses:?}");

    // A client that is no trusted proxy cannot pose as many by writing X-Forwarded-For: it is
    // still one client, and still over its rate.
    let mut statuses = Vec::new();
    for n in 0..30u8 {
        let response = target
            .http
            .post(format!("{}/graphql", target.base))
            .header("x-forwarded-for", format!("203.0.113.{n}"))
            .json(&json!({ "query": "{ __typename }" }))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    assert!(
        statuses.iter().all(|s| *s == 429),
        "the spoofing client stays limited: {statuses:?}"
    );
    // /healthz is never limited.
    let health = target
        .http
        .get(format!("{}/healthz", target.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}
