//! API benchmark: 100,000 agents (with profiles, skills, search rows and scores) served by the
//! API in this process, loaded by `oha` (crates.io) from another: by-id lookups and a bare
//! `/healthz` as fast as 16 connections go, a filtered search and a full-text search at a
//! fixed 500 requests/s. Prints p50, p99 and requests/s of each, and each one's throughput as a
//! ratio of the bare endpoint's, measured in the same run.
//!
//! Run with `scripts/bench-api` (or `cargo run --release --example api_bench -- [agents]
//! [seconds]` with `oha` on the PATH or in `OHA`).

#[path = "support/agents.rs"]
mod agents;

use agentindex_api::ApiState;
use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use agents::{CHAIN, fill, rules};
use serde_json::{Value, json};
use sqlx::sqlite::SqlitePoolOptions;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// One load to measure.
struct Load {
    name: &'static str,
    path: &'static str,
    body: Option<Value>,
    /// Fixed requests/s, or as fast as the connections go.
    rate: Option<u32>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let count = args.next().transpose()?.unwrap_or(100_000);
    let seconds = args.next().transpose()?.unwrap_or(10);
    let oha = std::env::var("OHA").unwrap_or_else(|_| "oha".into());

    let dir = tempfile::tempdir()?;
    let db = dir.path().join("api.db");
    let url = format!("sqlite://{}", db.display());
    let store = Store::open(&url).await?;
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await?;
    let started = Instant::now();
    let keys = fill(&pool, count, true).await?;
    pool.close().await;
    store
        .writer(4)
        .rescore(Arc::new(agents::chain_context(rules())), keys.clone())
        .await?;
    println!(
        "loaded {count} agents with profiles, skills, search rows and scores in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let toml = format!(
        r#"
[database]
url = "{url}"

[api]
requests_per_minute_per_client = 100000000
client_burst = 1000000

[[chains]]
name = "bench"
chain_id = {CHAIN}
rpc = ["http://127.0.0.1:9"]
"#
    );
    let config = Config::from_toml_and_env(&toml, std::path::Path::new("bench.toml"), Vec::new())?;
    let (stop, shutdown) = watch::channel(false);
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let serving = tokio::spawn(agentindex_api::serve(
        ApiState::new(store.clone(), &config),
        "127.0.0.1:0".parse()?,
        shutdown,
        move |address| {
            let _ = bound_tx.send(address);
        },
    ));
    let base = format!("http://{}", bound_rx.await?);

    let by_id = &keys[keys.len() / 2];
    let loads = [
        Load {
            name: "bare GET /healthz (baseline)",
            path: "/healthz",
            body: None,
            rate: None,
        },
        Load {
            name: "agent by id",
            path: "/graphql",
            body: Some(json!({ "query": format!(
                "{{ agent(id: \"{by_id}\") {{ id name owner reputation {{ score paymentCount }} }} }}"
            ) })),
            rate: None,
        },
        Load {
            name: "filtered search @500/s",
            path: "/graphql",
            body: Some(json!({ "query":
                "{ agents(filter: { skill: \"translate\", x402: true, minReputation: 1 }, orderBy: REPUTATION, first: 20) { edges { node { id name reputation { score } } } } }"
            })),
            rate: Some(500),
        },
        Load {
            name: "full-text search @500/s",
            path: "/graphql",
            body: Some(json!({ "query":
                "{ agents(search: \"forecast tag7\", first: 20) { edges { node { id name skills { id } } } } }"
            })),
            rate: Some(500),
        },
    ];
    let mut results = Vec::new();
    for load in &loads {
        let mut command = Command::new(&oha);
        command.args([
            "--no-tui",
            "--output-format",
            "json",
            "-z",
            &format!("{seconds}s"),
            "-c",
            if load.rate.is_some() { "32" } else { "16" },
        ]);
        if let Some(rate) = load.rate {
            command.args(["-q", &rate.to_string()]);
        }
        if let Some(body) = &load.body {
            command.args([
                "-m",
                "POST",
                "-H",
                "content-type: application/json",
                "-d",
                &body.to_string(),
            ]);
        }
        command.arg(format!("{base}{}", load.path));
        let output = command.output()?;
        anyhow::ensure!(
            output.status.success(),
            "oha failed for {}: {}",
            load.name,
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout)?;
        let statuses = &report["statusCodeDistribution"];
        anyhow::ensure!(
            statuses
                .as_object()
                .is_some_and(|s| s.keys().all(|k| k == "200")),
            "{}: answers other than 200: {statuses}",
            load.name
        );
        let ms = |p: &str| report["latencyPercentiles"][p].as_f64().unwrap_or(f64::NAN) * 1e3;
        results.push((
            load.name,
            report["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
            ms("p50"),
            ms("p99"),
        ));
    }
    let baseline = results[0].1;
    println!(
        "{:<32} {:>12} {:>10} {:>10} {:>14}",
        "load", "requests/s", "p50 ms", "p99 ms", "vs baseline"
    );
    for (name, rps, p50, p99) in &results {
        println!(
            "{name:<32} {rps:>12.0} {p50:>10.2} {p99:>10.2} {:>13.2}x",
            rps / baseline
        );
    }
    stop.send(true)?;
    serving.await??;
    Ok(())
}
