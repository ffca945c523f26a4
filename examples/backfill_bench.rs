//! Backfill benchmark: seeds a large Seeder workload on a local anvil, times a bare
//! `eth_getLogs` of every block range, then times `agentindex index` (the release binary) over
//! the same chain and reports events/s and its peak memory next to the bare fetch rate.
//!
//! Run with `scripts/bench` (or `cargo run --release --example backfill_bench -- [rounds]`).

use agentindex_contracts::workload::{self, Workload};
use agentindex_contracts::{Devnet, DevnetOptions};
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use std::process::Command;
use std::time::Instant;

const RANGE: u64 = 2_000;
/// Passes of the bare fetch; the fastest is the baseline.
const BARE_PASSES: usize = 3;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rounds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(38);
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());

    let devnet = Devnet::start_with(DevnetOptions {
        gas_limit: Some(2_000_000_000),
        ..DevnetOptions::default()
    })
    .await?;
    let seeding = Instant::now();
    workload::seed(&devnet, Workload::bench(rounds)).await?;
    let head = devnet.block_number().await?;
    eprintln!(
        "seeded {rounds} rounds into {head} blocks in {:.1?}",
        seeding.elapsed()
    );

    // Baseline: every log of every range, no filter, straight from the node. The node answers
    // the same request at quite different speeds from one pass to the next, so the baseline is
    // the fastest of a few passes: the hardest one to keep up with.
    let start = devnet.deployment().start_block;
    let mut passes = Vec::new();
    let mut logs = 0usize;
    for _ in 0..BARE_PASSES {
        let (elapsed, count) = bare_fetch(&devnet, start, head).await?;
        passes.push(elapsed);
        logs = count;
    }
    let bare = *passes.iter().min().expect("at least one pass");

    let dir = tempfile::tempdir()?;
    let db = dir.path().join("bench.db");
    let d = devnet.deployment();
    let config = format!(
        r#"[database]
url = "sqlite://{db}"
[[chains]]
name = "bench"
chain_id = {chain}
rpc = ["{rpc}"]
finality = 0
start_block = {start}
max_block_range = {RANGE}
requests_per_second = 100000
[chains.erc8004]
identity = "{identity}"
reputation = "{reputation}"
validation = "{validation}"
[[chains.factories]]
address = "{factory}"
[[chains.payment_tokens]]
address = "{usdc}"
symbol = "USDC"
decimals = 6
"#,
        db = db.display(),
        chain = devnet.chain_id(),
        rpc = devnet.endpoint(),
        identity = d.identity,
        reputation = d.reputation,
        validation = d.validation,
        factory = d.factory,
        usdc = d.usdc,
    );
    let config_path = dir.path().join("bench.toml");
    std::fs::write(&config_path, config)?;

    let indexing = Instant::now();
    let mut child = Command::new(&binary)
        .args(["index", "--exit-when-synced", "--config"])
        .arg(&config_path)
        .env(
            "RUST_LOG",
            std::env::var("BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .spawn()?;
    // VmHWM is the process's peak resident set so far; the last reading before exit is its peak.
    let mut peak_kib = 0u64;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        peak_kib = peak_kib.max(peak_rss_kib(child.id()).unwrap_or(0));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let indexing = indexing.elapsed();
    anyhow::ensure!(status.success(), "{binary} failed: {status}");

    let store =
        agentindex_indexer::store::Store::open(&format!("sqlite://{}", db.display())).await?;
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(store.reader())
        .await?;
    store.close().await;

    let bare_rate = logs as f64 / bare.as_secs_f64();
    let index_rate = events as f64 / indexing.as_secs_f64();
    println!("blocks            {}", head - start + 1);
    println!("logs on chain     {logs}");
    println!(
        "bare eth_getLogs  {:>8.2} s  {:>10.0} logs/s  (fastest of {BARE_PASSES} passes: {})",
        bare.as_secs_f64(),
        bare_rate,
        passes
            .iter()
            .map(|p| format!("{:.2} s", p.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "agentindex index  {:>8.2} s  {:>10.0} events/s  ({events} events stored)",
        indexing.as_secs_f64(),
        index_rate
    );
    println!(
        "ratio             {:.2} of the bare fetch rate",
        index_rate / bare_rate
    );
    println!("peak memory       {:.1} MiB", peak_kib as f64 / 1024.0);
    Ok(())
}

/// One pass of `eth_getLogs` over `[start, head]` in ranges of [`RANGE`] blocks: its duration
/// and the logs it returned.
async fn bare_fetch(
    devnet: &Devnet,
    start: u64,
    head: u64,
) -> anyhow::Result<(std::time::Duration, usize)> {
    let started = Instant::now();
    let mut logs = 0usize;
    let mut from = start;
    while from <= head {
        let to = head.min(from + RANGE - 1);
        logs += devnet
            .provider()
            .get_logs(&Filter::new().from_block(from).to_block(to))
            .await?
            .len();
        from = to + 1;
    }
    Ok((started.elapsed(), logs))
}

/// Peak resident set of process `pid` so far, in KiB, from /proc.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
