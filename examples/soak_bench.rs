//! Soak benchmark: `agentindex run` (release build) following a Base-like day compressed through
//! the provider emulator, with its latency, request budget, caps and faults, while a side load
//! asks its API.
//!
//! The chain is anvil with blocks made on demand two seconds of chain time apart: every block
//! holds a busy token's background transfers and payments into agents; agents register (their
//! registration files on a loopback server where some fail and the rest change), feedback is
//! given, and every 600 blocks a reorg replaces the newest three (`support/soak_chain.rs`).
//! Every `sample_every` blocks it records resident memory and heap, open files, threads, the
//! database and its write-ahead log, the lag `/status` reports, provider requests per block and
//! the API's p99 (`support/soak_watch.rs`); the report is a table, the ratios the issue asks for
//! and an SVG plot (`support/soak_report.rs`).
//!
//! `scripts/bench-soak` runs two Base hours (3,600 blocks, 20 times faster than Base: six
//! minutes); `scripts/bench-soak --day` the whole day (43,200 blocks, 72 minutes at 20x, about
//! 90 as anvil slows). Settings in `support/soak_settings.rs`; the report goes to `BENCH_OUT`
//! (else stdout), the plot to `SOAK_PLOT` (else `bench/soak.svg`).

#[path = "support/serve_process.rs"]
mod serve_process;
#[path = "support/soak_chain.rs"]
mod soak_chain;
#[path = "support/soak_documents.rs"]
mod soak_documents;
#[path = "support/soak_report.rs"]
mod soak_report;
#[path = "support/soak_settings.rs"]
mod soak_settings;
#[path = "support/soak_watch.rs"]
mod soak_watch;

use agentindex_contracts::network_load::{fund_payers, seed_wallet_agents};
use agentindex_contracts::{Devnet, DevnetOptions};
use agentindex_emulator::Emulator;
use soak_chain::Chain;
use soak_settings::{BLOCK_SECONDS, Settings};
use soak_watch::{Latencies, Sample, Watched};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::from_env_and_args();
    let dir = tempfile::tempdir()?;
    let devnet = Devnet::start_with(DevnetOptions {
        gas_limit: Some(2_000_000_000),
        prune_history: Some(64),
        ..DevnetOptions::default()
    })
    .await?;
    fund_payers(&devnet).await?;
    let wallets = seed_wallet_agents(&devnet, settings.agents).await?;
    eprintln!("soak: {} agents with wallets seeded", wallets.len());
    let documents = soak_documents::start().await?;
    let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
    let db = dir.path().join("soak.db");
    let config = dir.path().join("soak.toml");
    std::fs::write(
        &config,
        config_toml(&settings, &devnet, emulator.url(), &db),
    )?;
    let process = serve_process::start_subcommand(
        &settings.binary,
        "run",
        &config,
        &std::env::var("BENCH_AGENTINDEX_LOG").unwrap_or_else(|_| "warn".into()),
        std::process::Stdio::inherit(),
        |_| Ok(()),
    )?;
    let watched = Watched {
        pid: process.child.id(),
        db: db.clone(),
        api: process.base.clone(),
    };
    let client = reqwest::Client::new();
    wait_until_caught_up(&watched, &client, devnet.block_number().await?).await?;
    eprintln!(
        "soak: caught up with the seeded chain; making {} blocks",
        settings.blocks
    );

    let mut chain = Chain::take_over(&devnet, wallets, documents.base.clone()).await?;
    let latencies = Arc::new(Mutex::new(Latencies::default()));
    let side = soak_watch::side_load(process.base.clone(), settings.api_rps, latencies.clone());
    let mut samples = Vec::new();
    let mut requests_before = emulator.counters().total_requests();
    let started = Instant::now();
    for n in 1..=settings.blocks {
        chain.next_block(n).await?;
        if n % settings.sample_every == 0 || n == settings.blocks {
            let requests = emulator.counters().total_requests();
            let blocks_since = settings.sample_every.min(n) as f64;
            let head = devnet.block_number().await?;
            let (rss, anon, open_files, threads, db_mib, wal_mib, lag) =
                watched.sample(&client, head).await;
            let (p99, answers, errors, error_kinds) =
                latencies.lock().unwrap_or_else(|p| p.into_inner()).take();
            let sample = Sample {
                blocks: n,
                chain_hours: (n * BLOCK_SECONDS) as f64 / 3_600.0,
                rss_mib: rss,
                anon_mib: anon,
                open_files,
                threads,
                db_mib,
                wal_mib,
                lag,
                requests_per_block: (requests - requests_before) as f64 / blocks_since,
                api_p99_ms: p99,
                api_answers: answers,
                api_errors: errors,
                api_error_kinds: error_kinds,
            };
            requests_before = requests;
            eprintln!("soak: {sample:?}");
            samples.push(sample);
            // Written as the samples come: a day's run cut short still leaves its curves.
            let wall = started.elapsed().as_secs_f64();
            write_report(&settings, &samples, chain.counts, wall, false)?;
        }
        // Paced: block n is due n block-walls after the start; a slow block is not made up for.
        let due = started + settings.block_wall * n as u32;
        tokio::time::sleep_until(due.into()).await;
    }
    let wall = started.elapsed().as_secs_f64();
    side.abort();
    write_report(&settings, &samples, chain.counts, wall, true)?;
    drop(process);
    Ok(())
}

/// Writes the plot to `SOAK_PLOT` (else `bench/soak.svg`) and the report to `BENCH_OUT`; without
/// `BENCH_OUT` (or with `-`) the report is printed, once, when the run is `finished`.
fn write_report(
    settings: &Settings,
    samples: &[Sample],
    counts: soak_chain::ChainCounts,
    wall: f64,
    finished: bool,
) -> anyhow::Result<()> {
    let report = soak_report::markdown(settings, samples, counts, wall);
    let plot = std::env::var("SOAK_PLOT").unwrap_or_else(|_| "bench/soak.svg".into());
    std::fs::write(&plot, soak_report::svg(samples))?;
    match std::env::var("BENCH_OUT") {
        Ok(path) if path != "-" => std::fs::write(path, &report)?,
        _ if finished => println!("{report}"),
        _ => {}
    }
    if finished {
        eprintln!("soak: plot written to {plot}");
    }
    Ok(())
}

/// agentindex following `devnet` through the emulator at `rpc` into `db`, documents fetched from
/// the loopback server, the API on a free port.
fn config_toml(settings: &Settings, devnet: &Devnet, rpc: &str, db: &std::path::Path) -> String {
    let chain = devnet.chain_toml(
        "base-like",
        &[rpc.to_string()],
        &format!(
            "finality = 10\npoll_interval_ms = {}\nrequests_per_second = {}\nmax_block_range = 2000\n",
            settings.block_wall.as_millis().max(50),
            settings.rps
        ),
    );
    format!(
        "[database]\nurl = \"sqlite://{}\"\n\n[api]\nlisten = \"127.0.0.1:0\"\n\n[documents]\nallow_private_addresses = true\nallow_http = true\n{chain}",
        db.display()
    )
}

/// Waits for the indexer to reach `head`, the seeded chain's (an hour at most).
async fn wait_until_caught_up(
    watched: &Watched,
    client: &reqwest::Client,
    head: u64,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(3_600);
    loop {
        let (.., lag) = watched.sample(client, head).await;
        let status: serde_json::Value = client
            .get(format!("{}/status", watched.api))
            .send()
            .await?
            .json()
            .await?;
        if lag == Ok(0) && status[0]["indexed_block"].as_u64().is_some_and(|b| b > 0) {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "not caught up within an hour: {status}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
