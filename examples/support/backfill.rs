//! What the backfill benchmarks share: one `agentindex index` run over a seeded chain (time,
//! peak memory, events and database size) and one bare `eth_getLogs` pass over the same blocks.

#![allow(dead_code)]

use agentindex_contracts::tied::TiedCommand;
use agentindex_contracts::{Devnet, DevnetOptions};
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use std::path::Path;
use std::time::{Duration, Instant};

/// Blocks per `eth_getLogs` range, for the bare fetch and agentindex alike.
pub(crate) const RANGE: u64 = 2_000;

/// Events one round of [`agentindex_contracts::workload::Workload::bench`] emits, about.
const EVENTS_PER_ROUND: u64 = 5_600;

/// The anvil every backfill benchmark seeds: blocks large enough for the Seeder's rounds, and
/// only recent states kept, so a million events fit in memory.
pub(crate) fn devnet_options() -> DevnetOptions {
    DevnetOptions {
        gas_limit: Some(2_000_000_000),
        prune_history: Some(2),
        ..DevnetOptions::default()
    }
}

/// Seeder rounds that give about `events` events.
pub(crate) fn rounds_for(events: u64) -> u64 {
    events.div_ceil(EVENTS_PER_ROUND)
}

/// Mines 35 empty blocks: Ponder treats blocks less than 30 behind the head as unfinalized on
/// anvil and indexes them one at a time, so this keeps a whole workload on its bulk path.
pub(crate) async fn mine_past_ponder_finality(devnet: &Devnet) -> anyhow::Result<()> {
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_mine".into(), ("0x23",))
        .await?;
    Ok(())
}

/// What one run of `agentindex index` took.
pub(crate) struct IndexRun {
    pub(crate) elapsed: Duration,
    pub(crate) peak_kib: u64,
    /// The most of its own memory (`RssAnon`) and of mapped file pages (`RssFile`) seen in one
    /// sample, KiB, and when its own peaked (seconds into the run).
    pub(crate) peak_own_kib: u64,
    pub(crate) peak_file_kib: u64,
    pub(crate) own_peak_at: f64,
    pub(crate) events: i64,
    /// The database file's size after the run.
    pub(crate) db_bytes: u64,
}

/// Runs `agentindex index --exit-when-synced` over the whole chain into a fresh database in
/// `dir`, sampling its peak memory.
pub(crate) async fn index_pass(
    binary: &str,
    devnet: &Devnet,
    dir: &Path,
) -> anyhow::Result<IndexRun> {
    index_pass_into(binary, devnet, dir, None).await
}

/// [`index_pass`] into the empty PostgreSQL database at `postgres` when one is given (else the
/// SQLite file in `dir`); its size is then the database's as PostgreSQL counts it.
pub(crate) async fn index_pass_into(
    binary: &str,
    devnet: &Devnet,
    dir: &Path,
    postgres: Option<&str>,
) -> anyhow::Result<IndexRun> {
    std::fs::create_dir_all(dir)?;
    let db = dir.join("bench.db");
    let config_path = dir.join("bench.toml");
    std::fs::write(&config_path, config(devnet, &db))?;
    let url = postgres.map_or_else(|| format!("sqlite://{}", db.display()), str::to_string);

    let started = Instant::now();
    // Tied to this process: a benchmark stopped midway leaves no indexer running.
    let mut tied = TiedCommand::new(binary, Duration::from_secs(5));
    tied.command()
        .args(["index", "--exit-when-synced", "--no-documents", "--config"])
        .arg(&config_path)
        .env("AGENTINDEX_DATABASE__URL", &url)
        .env(
            "RUST_LOG",
            std::env::var("BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        );
    let mut tied_child = tied.spawn()?;
    let child = tied_child.child();
    // VmHWM is the process's peak resident set so far; the last reading before exit is its peak.
    let mut peak_kib = 0u64;
    let (mut peak_own_kib, mut peak_file_kib, mut own_peak_at) = (0u64, 0u64, 0f64);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let pid = child.id().to_string();
        peak_kib = peak_kib.max(crate::memory::peak_kib(&pid).unwrap_or(0));
        if let Some((own, file)) = crate::memory::resident_parts_kib(&pid) {
            if own > peak_own_kib {
                (peak_own_kib, own_peak_at) = (own, started.elapsed().as_secs_f64());
            }
            peak_file_kib = peak_file_kib.max(file);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let elapsed = started.elapsed();
    anyhow::ensure!(status.success(), "{binary} failed: {status}");

    // A bare pool, not the store: opening the store migrates, and the index may have been
    // written by another build (a baseline) whose migrations are not this one's.
    agentindex_indexer::store::install_drivers();
    let pool = sqlx::AnyPool::connect(&url).await?;
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(&pool)
        .await?;
    let db_bytes = match postgres {
        Some(_) => {
            let bytes: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
                .fetch_one(&pool)
                .await?;
            bytes as u64
        }
        None => std::fs::metadata(&db)?.len(),
    };
    pool.close().await;
    Ok(IndexRun {
        elapsed,
        peak_kib,
        peak_own_kib,
        peak_file_kib,
        own_peak_at,
        events,
        db_bytes,
    })
}

/// The reputation feed's digest of every chain of the SQLite index in `dir` (written by
/// [`index_pass`]), as `binary` computes it: `agentindex copy` into a scratch database prints
/// each chain's feed digest at its indexed block once it has checked the copy. Each build
/// computes its own, so an index written by an older build is read by the same build.
pub(crate) fn feed_digests(binary: &str, dir: &Path) -> anyhow::Result<String> {
    let copy = dir.join("feed-copy.db");
    let mut tied = TiedCommand::new(binary, Duration::from_secs(5));
    tied.command()
        .arg("copy")
        .arg("--from")
        .arg(format!("sqlite://{}", dir.join("bench.db").display()))
        .arg("--to")
        .arg(format!("sqlite://{}", copy.display()))
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = tied.spawn()?.wait_with_output()?;
    let printed = String::from_utf8_lossy(&output.stdout);
    anyhow::ensure!(
        output.status.success(),
        "{binary} copy failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let digests: Vec<&str> = printed
        .split("sha-256 ")
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !c.is_ascii_hexdigit())
                .next()
                .unwrap_or("")
        })
        .collect();
    anyhow::ensure!(
        !digests.is_empty(),
        "{binary} copy printed no feed digest: {printed}"
    );
    Ok(digests.join(" "))
}

/// One pass of `eth_getLogs` over `[start, head]` in ranges of [`RANGE`] blocks: its duration
/// and the logs it returned.
pub(crate) async fn bare_fetch(
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

/// The `agentindex` configuration that indexes everything `devnet` deployed into `db`, from
/// the deployment block on, in ranges of at most [`RANGE`] blocks.
pub(crate) fn config(devnet: &Devnet, db: &Path) -> String {
    let d = devnet.deployment();
    format!(
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
        start = d.start_block,
        identity = d.identity,
        reputation = d.reputation,
        validation = d.validation,
        factory = d.factory,
        usdc = d.usdc,
    )
}
