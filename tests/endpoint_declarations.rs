//! The endpoints to probe follow what agents declare, and only that: on anvil and on either
//! database, an ERC-8004 agent's registration file names a web page; the probe worker's sync
//! declares it. While no document or link changes, a sync brings nothing in line (it would read
//! every document and commit, costing the API's readers): a row changed behind the writer's
//! back stays changed, also after the documents worker fetched the same file again, until the
//! 60th sync, which brings the endpoints in line whatever it saw. Once the
//! file names another page, the next sync drops the first and declares the second; an
//! outcome saved for the dropped one does not bring it back, and of two outcomes of one
//! endpoint saved together the later is its state. Under the indexer the worker runs on a
//! thread of its own at the lowest priority, and ends when told to.

use crate::support;

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::config::Config;
use agentindex_indexer::engine::{self, DocumentsWorker, ProbeWorker};
use agentindex_indexer::liveness::{Kind, Outcome, Reason, Status};
use agentindex_indexer::priority;
use agentindex_indexer::store::ProbeResult;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::doc_server::{DocServer, Route};
use support::liveness::local_policy;

/// A registration file whose only service is the web page at `page`.
fn registration(page: &str) -> Vec<u8> {
    json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Declaring agent", "description": "Names one page",
        "services": [{"name": "web", "endpoint": page}],
    })
    .to_string()
    .into_bytes()
}

/// A web endpoint's outcome at `checked_at`: up, or refused.
fn outcome(url: &str, up: bool, checked_at: i64) -> ProbeResult {
    ProbeResult {
        outcome: Outcome {
            kind: Kind::Web,
            url: url.to_string(),
            status: if up { Status::Up } else { Status::Down },
            reason: (!up).then_some(Reason::Connect),
            error: (!up).then(|| "connection refused".to_string()),
            latency_ms: up.then_some(3),
            http_status: up.then_some(200),
            protocol_version: None,
            detail: serde_json::Value::Null,
        },
        checked_at,
        failures: i64::from(!up),
        next_probe_at: checked_at + 300,
    }
}

/// The endpoints to probe, as (kind, url, source).
async fn targets(pool: &sqlx::AnyPool) -> Vec<(String, String, String)> {
    sqlx::query_as("SELECT kind, url, source FROM probe_targets ORDER BY url")
        .fetch_all(pool)
        .await
        .unwrap()
}

/// Makes every document due and runs one step of the documents worker.
async fn refetch(pool: &sqlx::AnyPool, documents: &mut DocumentsWorker) {
    sqlx::query("UPDATE documents SET next_fetch_at = 0")
        .execute(pool)
        .await
        .unwrap();
    documents.step().await.unwrap();
}

/// Seconds since the Unix epoch.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// An anvil chain with an ERC-8004 agent whose registration file, at `server`'s `/reg.json`,
/// names `page`; indexed with its documents into `db`. The chain is returned to keep it up.
async fn indexed(server: &DocServer, page: &str, db: &Path) -> (Devnet, Config) {
    let devnet = Devnet::start().await.unwrap();
    let file = server.route(
        "/reg.json",
        Route::Body("application/json", registration(page)),
    );
    demo::via_erc8004(&devnet, devnet.accounts()[1], &file)
        .await
        .unwrap();
    let config = support::config_with_local_documents(&devnet, db);
    support::index_with_documents(&config).await;
    (devnet, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_follow_changed_documents_and_nothing_else() {
    let server = DocServer::start().await;
    let first = server.route("/first", Route::Body("text/html", b"<h1>one</h1>".to_vec()));
    let second = server.route(
        "/second",
        Route::Body("text/html", b"<h1>two</h1>".to_vec()),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let (_devnet, config) = indexed(&server, &first, &db).await;

    let store = support::open(&db).await;
    let writer = store.writer(4);
    let contexts = Arc::new(engine::chain_contexts(&config));
    let mut documents = DocumentsWorker::new(
        &config.documents,
        store.clone(),
        writer.clone(),
        BTreeMap::new(),
        contexts,
    )
    .unwrap();
    let mut probes = ProbeWorker::new(
        local_policy(Duration::from_millis(1)),
        Duration::ZERO,
        store.clone(),
        writer.clone(),
    )
    .unwrap();
    let pool = sqlx::AnyPool::connect(&support::database_url(&db))
        .await
        .unwrap();
    let declared =
        |url: &str, source: &str| vec![("web".to_string(), url.to_string(), source.into())];

    let step = probes.step().await.unwrap();
    assert_eq!(step.declared, Some(1));
    assert_eq!(targets(&pool).await, declared(&first, "registration"));

    // Nothing new: the sync leaves the endpoints as they are, even one changed behind its back.
    sqlx::query("UPDATE probe_targets SET source = 'planted'")
        .execute(&pool)
        .await
        .unwrap();
    documents.step().await.unwrap();
    assert_eq!(probes.step().await.unwrap().declared, Some(1));
    assert_eq!(targets(&pool).await, declared(&first, "planted"));

    // The same file fetched again is no change either.
    let fetched_before = server.hits("/reg.json");
    refetch(&pool, &mut documents).await;
    assert!(
        server.hits("/reg.json") > fetched_before,
        "the file is fetched again"
    );
    probes.step().await.unwrap();
    assert_eq!(targets(&pool).await, declared(&first, "planted"));
    // Yet at least every 60th sync brings them in line, for what another indexer's writer saved.
    for _ in 0..60 {
        writer.sync_probes(unix_now()).await.unwrap();
    }
    assert_eq!(targets(&pool).await, declared(&first, "registration"));

    // The file names another page: the next sync follows it.
    server.route(
        "/reg.json",
        Route::Body("application/json", registration(&second)),
    );
    refetch(&pool, &mut documents).await;
    assert_eq!(probes.step().await.unwrap().declared, Some(1));
    assert_eq!(targets(&pool).await, declared(&second, "registration"));
    let endpoints: Vec<String> = sqlx::query_scalar("SELECT url FROM probe_endpoints")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(endpoints, std::slice::from_ref(&second));

    // Late outcomes: the dropped page stays dropped; the later of two outcomes is the state.
    let at = 2_000_000_000;
    let saved = vec![
        outcome(&first, true, at),
        outcome(&second, true, at),
        outcome(&second, false, at + 1),
    ];
    writer.save_probes(saved, at + 2, 86_400).await.unwrap();
    let states: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT url, status, failures FROM probe_endpoints")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(states, [(second.clone(), "down".to_string(), 1)]);
    let kept: Vec<(String, String)> = sqlx::query_as(
        "SELECT url, status FROM probe_results WHERE checked_at >= $1 ORDER BY checked_at",
    )
    .bind(at)
    .fetch_all(&pool)
    .await
    .unwrap();
    let raw = |status: &str| (second.clone(), status.to_string());
    assert_eq!(kept, [raw("up"), raw("down")], "both outcomes are kept raw");
    pool.close().await;
}

/// Waits up to 20 s for `done`, failing with `what`.
async fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_indexers_probe_worker_runs_on_a_lowered_thread_until_stopped() {
    let server = DocServer::start().await;
    let page = server.route("/page", Route::Body("text/html", b"<h1>up</h1>".to_vec()));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let (_devnet, _config) = indexed(&server, &page, &db).await;
    let store = support::open(&db).await;
    let worker = ProbeWorker::new(
        local_policy(Duration::from_millis(1)),
        Duration::from_secs(60),
        store.clone(),
        store.writer(4),
    )
    .unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = worker.run_lowered(stopped);
    wait_for("the page is probed", || server.hits("/page") > 0).await;
    let threads = priority::threads_named("probe-worker");
    assert!(!threads.is_empty(), "the worker has a thread of its own");
    for thread in threads {
        assert_eq!(priority::is_lowered(thread), Some(true), "thread {thread}");
    }
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the worker stops when told")
        .expect("the worker ends without a panic");
    wait_for("the worker's thread ends", || {
        priority::threads_named("probe-worker").is_empty()
    })
    .await;
}
