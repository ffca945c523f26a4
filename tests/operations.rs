//! Running agentindex for months: `agentindex backup` copies a live database consistently, and
//! `/metrics` tells an operator what the indexer and the API are doing, in a format a
//! Prometheus parser reads.

use crate::support;
use crate::support::{binary, chain};
use agentindex_indexer::store::{Store, StoreRead};

use agentindex_contracts::Devnet;
use prometheus_parse::{Sample, Scrape, Value};
use std::process::Command;
use std::time::Duration;

/// Waits until `/readyz` at `base` answers 200.
async fn ready(base: &str) {
    loop {
        let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
        if ready.status() == 200 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_copies_the_database_while_it_is_served_and_never_overwrites() {
    let devnet = Devnet::start().await.unwrap();
    support::scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();
    // Online backups are SQLite's (a PostgreSQL database is backed up with pg_dump), so this
    // test runs on SQLite whichever backend the suite tests.
    let db = dir.path().join("index.db");
    let sqlite = |path: &std::path::Path| format!("sqlite://{}", path.display());
    let toml = support::config_toml_at(&devnet, &[devnet.endpoint()], &sqlite(&db), 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let config = dir.path().join("run.toml");
    std::fs::write(&config, toml).unwrap();
    let (running, base) = binary::start(&["run", "--config"], &config);
    ready(&base).await;

    let copy = dir.path().join("copy.db");
    let backup = || {
        Command::new(env!("CARGO_BIN_EXE_agentindex"))
            .arg("backup")
            .arg(&copy)
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap()
    };
    let first = backup();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(String::from_utf8_lossy(&first.stdout).contains("backed up"));
    let dump = async |path: &std::path::Path| {
        let store = Store::open(&sqlite(path)).await.unwrap();
        let text = store.canonical_dump().await.unwrap();
        store.close().await;
        text
    };
    let original = dump(&db).await;
    assert!(original.contains("erc8004"), "the scenario was indexed");
    support::assert_same_index(&dump(&copy).await, &original, "the backup");

    let again = backup();
    assert!(
        !again.status.success(),
        "an existing file is not overwritten"
    );
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains(&copy.display().to_string()) && said.contains("exists"),
        "{said}"
    );
    drop(running);
}

/// The samples of `name`.
fn samples<'a>(scrape: &'a Scrape, name: &str) -> Vec<&'a Sample> {
    scrape.samples.iter().filter(|s| s.metric == name).collect()
}

/// A counter's or gauge's value (a histogram's count).
fn number(sample: &Sample) -> f64 {
    match &sample.value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
        Value::Histogram(buckets) => buckets.last().map_or(0.0, |b| b.count),
        Value::Summary(_) => f64::NAN,
    }
}

/// The sum of `name` over the samples whose labels include every pair of `labels`.
fn total(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples(scrape, name)
        .into_iter()
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(number)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_parse_as_prometheus_text_and_tell_what_happened() {
    let devnet = Devnet::start().await.unwrap();
    support::scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let toml = support::config_toml(
        &devnet,
        &[devnet.endpoint()],
        &db,
        8,
        "fetch_strategy = \"scan\"",
    ) + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let config = dir.path().join("run.toml");
    std::fs::write(&config, toml).unwrap();
    let (running, base) = binary::start(&["run", "--config"], &config);
    ready(&base).await;
    let store = support::open(&db).await;
    chain::mine(&devnet, 3).await;
    chain::wait_for_head(&devnet, &store, Duration::from_secs(30)).await;
    chain::reorg(&devnet, 2, &[]).await;
    chain::wait_for_head(&devnet, &store, Duration::from_secs(30)).await;
    let answer = reqwest::Client::new()
        .post(format!("{base}/graphql"))
        .json(&serde_json::json!({ "query": "query Count { agents { totalCount } }" }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let answer = reqwest::Client::new()
        .post(format!("{base}/subgraphs/name/agent0"))
        .json(&serde_json::json!({ "query": "query Agents { agents(first: 1) { id } }" }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(store.reader())
        .await
        .unwrap();
    let head = devnet.block_number().await.unwrap() as f64;

    let text = support::api::metrics_text(&base).await;
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
    let chain_id = devnet.chain_id().to_string();
    let of_chain = [("chain_id", chain_id.as_str())];
    assert_eq!(
        total(&scrape, "agentindex_chain_head_block", &of_chain),
        head
    );
    assert_eq!(
        total(&scrape, "agentindex_chain_indexed_block", &of_chain),
        head
    );
    assert_eq!(
        total(&scrape, "agentindex_chain_lag_blocks", &of_chain),
        0.0
    );
    assert!(total(&scrape, "agentindex_chain_finalized_block", &of_chain) <= head - 8.0);
    assert!(total(&scrape, "agentindex_agents", &[("source", "erc8004")]) >= 1.0);
    // Every stored event was counted once as committed (the reorg's undone blocks held none).
    assert_eq!(
        total(&scrape, "agentindex_events_stored_total", &of_chain),
        events as f64,
        "{text}"
    );
    assert!(
        total(
            &scrape,
            "agentindex_events_stored_total",
            &[("source", "identity"), ("kind", "Registered")]
        ) >= 1.0
    );
    let get_logs = [("method", "eth_getLogs")];
    assert!(total(&scrape, "agentindex_rpc_requests_total", &get_logs) >= 1.0);
    assert!(
        total(&scrape, "agentindex_rpc_request_seconds", &get_logs) >= 1.0,
        "latency observed per request"
    );
    let endpoints: Vec<&str> = samples(&scrape, "agentindex_rpc_requests_total")
        .iter()
        .filter_map(|s| s.labels.get("endpoint"))
        .collect();
    assert!(
        endpoints.iter().all(|e| e.starts_with("http://127.0.0.1:")),
        "{endpoints:?}"
    );
    assert!(total(&scrape, "agentindex_log_range_blocks", &of_chain) >= 1.0);
    for family in ["agents", "payments"] {
        let scanned = [("family", family), ("way", "scan")];
        assert!(
            total(&scrape, "agentindex_fetch_ranges_total", &scanned) >= 1.0,
            "{family}: {text}"
        );
        assert_eq!(
            samples(&scrape, "agentindex_fetch_scan_density")
                .iter()
                .filter(|s| s.labels.get("family") == Some(family))
                .count(),
            1,
            "the density the model expects of the {family} scan"
        );
    }
    assert_eq!(total(&scrape, "agentindex_reorgs_total", &of_chain), 1.0);
    assert_eq!(
        total(&scrape, "agentindex_reorg_depth_blocks", &of_chain),
        1.0,
        "one reorg in the depth histogram"
    );
    assert!(
        total(
            &scrape,
            "agentindex_reputation_recomputations_total",
            &of_chain
        ) >= 1.0
    );
    assert!(
        total(&scrape, "agentindex_documents_total", &[]) >= 1.0,
        "{text}"
    );
    assert!(
        total(
            &scrape,
            "agentindex_api_requests_total",
            &[("operation", "Count")]
        ) >= 1.0
    );
    assert!(
        total(
            &scrape,
            "agentindex_api_request_seconds",
            &[("operation", "Count")]
        ) >= 1.0
    );
    // The subgraph's request, under its operation and the endpoint's prefix.
    let subgraph = [("operation", "subgraph:Agents")];
    assert_eq!(
        total(&scrape, "agentindex_api_requests_total", &subgraph),
        1.0,
        "{text}"
    );
    assert_eq!(
        total(&scrape, "agentindex_api_request_seconds", &subgraph),
        1.0
    );
    assert_eq!(
        total(
            &scrape,
            "agentindex_api_requests_total",
            &[("operation", "other")]
        ),
        0.0,
        "no request fell into `other`"
    );
    store.close().await;
    drop(running);
}

/// Runs `agentindex ARGS`; returns whether it succeeded and what it printed on both streams.
fn agentindex(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .args(args)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), said)
}

#[test]
fn network_flags_and_config_errors_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("presets.db");
    let config = dir.path().join("base.toml");
    std::fs::write(
        &config,
        format!("[database]\nurl = \"{}\"\n", support::database_url(&db)),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    // A preset chain added to a file that only names the database.
    let (ok, said) = agentindex(&[
        "migrate",
        "--config",
        config,
        "--network",
        "base-sepolia",
        "--rpc",
        "http://127.0.0.1:9",
    ]);
    assert!(ok, "{said}");
    assert!(
        support::postgres::selected() || db.exists(),
        "the file was created"
    );
    let (ok, said) = agentindex(&[
        "migrate",
        "--config",
        config,
        "--network",
        "basse",
        "--rpc",
        "http://x",
    ]);
    assert!(
        !ok && said.contains("basse") && said.contains("base-sepolia"),
        "{said}"
    );
    let (ok, said) = agentindex(&["migrate", "--network", "base"]);
    assert!(!ok && said.contains("--rpc"), "{said}");

    // Each bad key is named.
    let cases = [
        (
            "[database]\nurl = \"sqlite://x.db\"\n[[chains]]\nnetwork = \"base\"\nrpc = [\"ftp://r\"]\n",
            "chains[0].rpc[0]",
        ),
        (
            "[database]\nurl = \"sqlite://x.db\"\n[[chains]]\nnetwork = \"base\"\nrpc = [\"https://r\"]\nfinalty = 3\n",
            "finalty",
        ),
        (
            "[database]\nurl = \"sqlite://x.db\"\n[api]\nlisten = \"nowhere\"\n",
            "api.listen",
        ),
        ("[database]\nurl = \"postgres://x\"\n", "postgres://x"),
        (
            "[database]\nurl = \"sqlite://x.db\"\n[reputation]\nhalf_life_days = -1\n",
            "reputation",
        ),
    ];
    for (i, (text, key)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let (ok, said) = agentindex(&["migrate", "--config", path.to_str().unwrap()]);
        assert!(!ok, "{text} was accepted");
        assert!(said.contains(key), "{text}: {said}");
    }
}
