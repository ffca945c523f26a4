//! The API's caches and failures as a hostile client meets them, against the `agentindex serve`
//! binary: a flood of distinct cache keys leaves the response cache within its byte bound (as
//! `/metrics` reports it), concurrent requests for one uncached feed make it once and serve
//! what the feed writes directly, a client takes its share of feeds and then only what
//! `If-None-Match` spares it, and a store that fails gives clients an error id and no SQL,
//! while the operator's log has the id and the details.

use crate::support;

use agentindex_contracts::{Devnet, demo};
use futures::future::join_all;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// `[api.caches] response_cache_bytes` in these tests.
const RESPONSE_CACHE_BYTES: usize = 32 * 1024;

/// An indexed devnet with one agent, and a `serve` config over its database (rate limits wide
/// open, the given `[api.caches]` lines).
async fn indexed(dir: &Path, caches: &str) -> (Devnet, std::path::PathBuf, std::path::PathBuf) {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    demo::via_factory(&devnet, a[1], demo::sample_card(&devnet, "Cached", None))
        .await
        .unwrap();
    let db = dir.join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\nrequests_per_minute_per_client = 1000000\n"
        + "client_burst = 100000\n\n[api.caches]\n"
        + caches;
    let config = dir.join("serve.toml");
    std::fs::write(&config, toml).unwrap();
    (devnet, db, config)
}

/// `/metrics` once it reflects at least `requests` requests counted under `operation`, which
/// it does within its reuse window (a second here).
async fn metrics_after(base: &str, operation: &str, requests: usize) -> String {
    let counted = format!("agentindex_api_requests_total{{operation=\"{operation}\"}}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = support::api::metrics_text(base).await;
        if support::api::metric(&text, &counted).is_some_and(|n| n >= requests as f64) {
            return text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "/metrics never counted {requests} {operation}:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_distinct_cache_keys_keeps_the_response_cache_within_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (_devnet, _db, config) = indexed(
        dir.path(),
        &format!("response_cache_bytes = {RESPONSE_CACHE_BYTES}\nmetrics_cache_secs = 1\n"),
    )
    .await;
    let (_serving, base) = support::binary::start(&["serve", "--config"], &config);
    let client = reqwest::Client::new();

    // 400 answerable questions, each its own key: variables padded to a few hundred bytes
    // (kept as text) or to 10 KB (hashed), half on /graphql and half on the subgraph.
    let flood = 400;
    let mut sent = 0;
    for n in 0..flood {
        let pad = if n % 2 == 0 { 300 } else { 10_000 };
        let body = json!({
            "query": "query Flood { agents(first: 1) { edges { node { id name } } } }",
            "operationName": "Flood",
            "variables": { "n": n, "pad": "x".repeat(pad) },
        });
        let url = if n % 4 < 2 {
            format!("{base}/graphql")
        } else {
            format!("{base}/subgraphs/name/agent0")
        };
        let body = if n % 4 < 2 {
            body
        } else {
            json!({
                "query": "query Flood { agents(first: 1) { id } }",
                "operationName": "Flood",
                "variables": body["variables"],
            })
        };
        sent += body.to_string().len();
        let response = client.post(url).json(&body).send().await.unwrap();
        assert_eq!(response.status(), 200, "request {n}");
        let answer: Value = response.json().await.unwrap();
        assert!(answer["errors"].is_null(), "request {n}: {answer}");
        assert!(!answer["data"].is_null(), "request {n}: {answer}");
    }
    assert!(
        sent > 10 * RESPONSE_CACHE_BYTES,
        "the flood is far larger than the bound"
    );

    // Rendered after the flood: every request was counted before its answer came back.
    let text = metrics_after(&base, "Flood", flood / 2).await;
    let held = support::api::metric(&text, "agentindex_api_response_cache_bytes")
        .expect("the gauge is shown");
    assert!(
        held > 0.0,
        "the cache holds the latest answers (it is in use)"
    );
    assert!(
        held <= RESPONSE_CACHE_BYTES as f64,
        "{held} bytes held, bound {RESPONSE_CACHE_BYTES}"
    );
    let response = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_for_one_uncached_feed_compute_it_once_and_serve_the_feed() {
    let dir = tempfile::tempdir().unwrap();
    let (devnet, db, config) = indexed(dir.path(), "").await;
    let store = support::open(&db).await;
    let block = support::indexed_block(&store, devnet.chain_id()).await;
    let (_serving, base) = support::binary::start(&["serve", "--config"], &config);
    let client = reqwest::Client::new();

    // Eight clients (each its own loopback address, so each has its own share of feeds).
    let from = |n: u8| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from([127, 0, 0, n]))
            .build()
            .unwrap()
    };
    let asks = (2..10).map(|n| {
        from(n)
            .get(format!("{base}/feeds/reputation.jsonl?block={block}"))
            .send()
    });
    let mut bodies = Vec::new();
    for response in join_all(asks).await {
        let response = response.unwrap();
        assert_eq!(response.status(), 200);
        bodies.push(response.text().await.unwrap());
    }
    assert!(bodies.iter().all(|body| body == &bodies[0]));

    // What the latest feed writes directly from the same database's stored reputation.
    let latest = agentindex_indexer::feed::Snapshot::Latest;
    let direct = agentindex_indexer::feed::body(&store, devnet.chain_id(), latest)
        .await
        .unwrap();
    assert_eq!(
        bodies[0].as_bytes(),
        direct,
        "served byte for byte as written"
    );
    assert_eq!(bodies[0].lines().count(), 1, "the one agent: {}", bodies[0]);

    // Eight asked at once, one computed; asking again computes nothing.
    support::api::feed(&base, &format!("?block={block}")).await;

    // The first scrape of this server: rendered now, after every feed request.
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        support::api::metric(&text, "agentindex_api_feed_computations_total"),
        Some(1.0),
        "{text}"
    );

    // One client takes its share of feeds, two, and is then told when to come back; a client
    // that says it has the feed (If-None-Match with its ETag) is told so without a body and
    // without taking any of its share.
    let one = from(20);
    let url = format!("{base}/feeds/reputation.jsonl");
    let mut etag = String::new();
    for n in 0..2 {
        let response = one.get(&url).send().await.unwrap();
        assert_eq!(response.status(), 200, "feed {n} of the share");
        etag = response.headers()["etag"].to_str().unwrap().to_string();
    }
    assert_eq!(etag.len(), 66, "the quoted SHA-256: {etag}");
    let refused = one.get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let said = refused.text().await.unwrap();
    assert!(said.contains("If-None-Match"), "{said}");
    for _ in 0..10 {
        let unchanged = one
            .get(&url)
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(unchanged.status(), 304);
        assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), etag);
        assert!(unchanged.bytes().await.unwrap().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_store_gives_clients_an_error_id_and_the_log_the_details() {
    let dir = tempfile::tempdir().unwrap();
    let (_devnet, db, config) = indexed(dir.path(), "").await;
    break_tables(&db).await;
    let log = dir.path().join("serve.log");
    let (serving, base) = support::binary::start_logging_to(&["serve", "--config"], &config, &log);
    let client = reqwest::Client::new();

    let graphql = client
        .post(format!("{base}/graphql"))
        .json(&json!({ "query": "{ agents(first: 1) { edges { node { id } } } }" }))
        .send();
    let subgraph = client
        .post(format!("{base}/subgraphs/name/agent0"))
        .json(&json!({ "query": "{ agents(first: 1) { id } }" }))
        .send();
    let mut told = Vec::new();
    for (what, response, status) in [
        ("graphql", graphql.await.unwrap(), 200),
        ("subgraph", subgraph.await.unwrap(), 200),
        (
            "status",
            client.get(format!("{base}/status")).send().await.unwrap(),
            500,
        ),
        (
            "metrics",
            client.get(format!("{base}/metrics")).send().await.unwrap(),
            500,
        ),
        (
            "feed",
            client
                .get(format!("{base}/feeds/reputation.jsonl"))
                .send()
                .await
                .unwrap(),
            500,
        ),
    ] {
        assert_eq!(response.status(), status, "{what}");
        let body = response.text().await.unwrap();
        for secret in [
            "no such table",
            "relation",
            "SELECT",
            "sqlite",
            "postgres",
            "agents_gone",
        ] {
            assert!(!body.contains(secret), "{what} leaks {secret:?}: {body}");
        }
        assert!(
            !body.contains(&*db.to_string_lossy()),
            "{what} leaks the path: {body}"
        );
        let id = error_id(&body).unwrap_or_else(|| panic!("{what} gives no error id: {body}"));
        told.push((what, id));
    }
    drop(serving);
    let logged = std::fs::read_to_string(&log).unwrap();
    for (what, id) in told {
        let line = logged
            .lines()
            .find(|line| line.contains(&id))
            .unwrap_or_else(|| panic!("{what}: error id {id} is not in the log:\n{logged}"));
        assert!(
            line.contains("agents") || line.contains("chain_cursor"),
            "{what}: the log line has the details: {line}"
        );
    }
}

/// Renames the tables every endpoint reads, so each of them fails inside the store.
async fn break_tables(db: &Path) {
    use sqlx::Connection;
    agentindex_indexer::store::install_drivers();
    let mut conn = sqlx::AnyConnection::connect(&support::database_url(db))
        .await
        .unwrap();
    for statement in [
        "ALTER TABLE agents RENAME TO agents_gone",
        "ALTER TABLE chain_cursor RENAME TO chain_cursor_gone",
    ] {
        sqlx::query(statement).execute(&mut conn).await.unwrap();
    }
    conn.close().await.unwrap();
}

/// The 16-hex-digit id after "error id " in a response body.
fn error_id(body: &str) -> Option<String> {
    let at = body.find("error id ")? + "error id ".len();
    let id: String = body[at..].chars().take(16).collect();
    (id.len() == 16 && id.chars().all(|c| c.is_ascii_hexdigit())).then_some(id)
}
