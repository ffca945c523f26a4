//! Documents benchmark: serves 10,000 distinct Agent Cards from a local HTTP server, then
//! fetches them all twice with the same concurrency: once with bare HTTP GETs (the baseline) and
//! once through agentindex's checker (policy checks, size cap, JSON reading, projection, lints,
//! signature status). Prints cards/s of each, their ratio, and the process's peak memory.
//!
//! Run with `scripts/bench-cards` (or `cargo run --release --example cards_bench -- [cards]`).

#[path = "../tests/support/doc_server.rs"]
#[allow(dead_code)]
mod doc_server;
#[path = "../tests/support/memory.rs"]
mod memory;

use agentindex_indexer::documents::uri::ResolveOptions;
use agentindex_indexer::documents::{Checker, Expect, FetchPolicy, Fetcher};
use doc_server::{DocServer, Route};
use futures::StreamExt;
use std::time::{Duration, Instant};

/// Requests in flight at once, for both passes.
const CONCURRENCY: usize = 64;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cards: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let server = DocServer::start().await;
    let urls: Vec<String> = (0..cards)
        .map(|i| {
            server.route(
                &format!("/agents/{i}/agent-card.json"),
                Route::Body("application/json", card(i)),
            )
        })
        .collect();

    let client = reqwest::Client::builder().no_proxy().build()?;
    let started = Instant::now();
    let fetched: Vec<usize> = futures::stream::iter(&urls)
        .map(|url| {
            let client = client.clone();
            async move {
                let body = client.get(url.as_str()).send().await?.bytes().await?;
                Ok::<_, reqwest::Error>(body.len())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    let bare = started.elapsed();
    anyhow::ensure!(
        fetched.len() == cards,
        "the bare pass fetched {}",
        fetched.len()
    );

    let checker = Checker::new(
        Fetcher::new(FetchPolicy {
            allow_private: true,
            allow_http: true,
            per_host_per_second: 1_000_000,
            concurrency: CONCURRENCY,
            ..FetchPolicy::default()
        })?,
        ResolveOptions {
            allow_http: true,
            ..ResolveOptions::default()
        },
        Vec::new(),
    );
    let started = Instant::now();
    let checked: Vec<bool> = futures::stream::iter(&urls)
        .map(|url| {
            let checker = &checker;
            async move {
                let checked = checker.check(url, Expect::Card, None).await;
                checked.projection.is_some() && !checked.report.has_errors()
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let indexed = started.elapsed();
    let good = checked.iter().filter(|ok| **ok).count();
    anyhow::ensure!(good == cards, "only {good} of {cards} cards read cleanly");

    let rate = |d: Duration| cards as f64 / d.as_secs_f64();
    println!("cards             {cards} (concurrency {CONCURRENCY})");
    println!(
        "bare HTTP GET     {:>8.2} s  {:>8.0} cards/s",
        bare.as_secs_f64(),
        rate(bare)
    );
    println!(
        "agentindex check  {:>8.2} s  {:>8.0} cards/s",
        indexed.as_secs_f64(),
        rate(indexed)
    );
    println!(
        "ratio             {:.2} of the bare fetch rate",
        rate(indexed) / rate(bare)
    );
    println!(
        "peak memory       {:.1} MiB (this process, server included)",
        memory::peak_kib("self").unwrap_or(0) as f64 / 1024.0
    );
    Ok(())
}

/// A v1.0 card with a few skills, different for each agent.
fn card(i: usize) -> Vec<u8> {
    let skills: Vec<serde_json::Value> = (0..4)
        .map(|s| {
            serde_json::json!({
                "id": format!("skill-{s}"), "name": format!("Skill {s} of agent {i}"),
                "description": "Does one thing well, for a fee, over A2A.",
                "tags": ["benchmark", format!("tag-{}", (i + s) % 50)], "examples": ["do it"]
            })
        })
        .collect();
    serde_json::json!({
        "name": format!("Agent {i}"), "description": "A benchmark agent", "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("https://agent-{i}.example/a2a"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "extensions": [{"uri": "https://github.com/google-a2a/a2a-x402/v0.1", "required": false,
            "params": {"network": "base", "asset": "USDC", "payTo": format!("0x{i:040x}"), "amount": "10000"}}]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
        "skills": skills
    })
    .to_string()
    .into_bytes()
}
