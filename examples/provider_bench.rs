//! agentindex behind a hosted provider, emulated on loopback (`agentindex-emulator`: 80 ms a
//! request, 25 requests/s, 2,000-block and 10,000-result caps in Alchemy's words), on Base-like
//! chains: every ERC-8004 agent with a wallet of its own, a payment token busy with transfers
//! between addresses that are not agents, and payments into agents among them.
//!
//! 1. **Tip**: for 1,000, 10,000 and 100,000 agents, blocks every 2 s, each with 24 background
//!    transfers and 2 payments into agents; once agentindex has caught up, for
//!    `BENCH_TIP_SECONDS` (600): `eth_getLogs` and all requests per new block, compute units,
//!    and the lag behind the head (sampled every 250 ms).
//! 2. **Catch-up**: `BENCH_AGENTS` (100,000) agents and `BENCH_TRAFFIC_BLOCKS` (1,000) blocks of
//!    traffic, indexed from an empty database: wall time and requests, next to the fewest
//!    `eth_getLogs` the provider's caps allow, and next to Ponder through the same emulator at
//!    the same request rate (unless `BENCH_SKIP_PONDER`).
//!
//! Prints a Markdown report (and writes it to `BENCH_OUT` when set). Run with
//! `scripts/bench-provider [tip|catchup|all]`.

#[path = "../tests/support/memory.rs"]
mod memory;
#[path = "support/ponder.rs"]
mod ponder;

use agentindex_contracts::network_load::{fund_payers, seed_wallet_agents, send_block_traffic};
use agentindex_contracts::tied::{TiedChild, TiedCommand};
use agentindex_contracts::{Devnet, DevnetOptions, TestUSDC};
use agentindex_emulator::{Emulator, Limits, Provider as Wording};
use agentindex_indexer::store::Store;
use agentindex_indexer::store::StoreRead;
use alloy::primitives::Address;
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use alloy::sol_types::SolEvent;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Background transfers per block: Base's USDC moves a couple of million a day, about 25 a block.
const TRAFFIC_PER_BLOCK: u64 = 24;
/// Payments into agents per block.
const PAYMENTS_PER_BLOCK: usize = 2;
/// The provider's caps, as a pay-as-you-go plan words them.
const RANGE_CAP: u64 = 2_000;
const RESULT_CAP: usize = 10_000;

struct Settings {
    binary: String,
    latency: Duration,
    rps: u32,
    tip: Duration,
    tip_sizes: Vec<u64>,
    agents: u64,
    traffic_blocks: u64,
    ponder: bool,
}

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

impl Settings {
    fn from_env() -> Self {
        Self {
            binary: std::env::var("AGENTINDEX_BIN")
                .unwrap_or_else(|_| "target/release/agentindex".into()),
            latency: Duration::from_millis(env_or("BENCH_LATENCY_MS", 80)),
            rps: env_or("BENCH_RPS", 25),
            tip: Duration::from_secs(env_or("BENCH_TIP_SECONDS", 600)),
            tip_sizes: std::env::var("BENCH_TIP_AGENTS")
                .unwrap_or_else(|_| "1000,10000,100000".into())
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect(),
            agents: env_or("BENCH_AGENTS", 100_000),
            traffic_blocks: env_or("BENCH_TRAFFIC_BLOCKS", 1_000),
            ponder: std::env::var_os("BENCH_SKIP_PONDER").is_none(),
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            latency: self.latency,
            requests_per_second: Some(self.rps),
            max_block_range: Some(RANGE_CAP),
            max_results: Some(RESULT_CAP),
            provider: Wording::Alchemy,
            ..Limits::default()
        }
    }
}

/// An anvil for a Base-like load: blocks large enough to register thousands of agents at once,
/// and only recent states kept.
async fn devnet() -> anyhow::Result<Devnet> {
    Ok(Devnet::start_with(DevnetOptions {
        gas_limit: Some(2_000_000_000),
        prune_history: Some(64),
        ..DevnetOptions::default()
    })
    .await?)
}

/// The config of agentindex following `devnet` through `rpc` into `db`.
fn config(devnet: &Devnet, rpc: &str, db: &Path, rps: u32, ranges_in_flight: usize) -> String {
    let chain = devnet.chain_toml(
        "base-like",
        &[rpc.to_string()],
        &format!(
            "finality = 10\npoll_interval_ms = 1000\nrequests_per_second = {rps}\nmax_block_range = {RANGE_CAP}\nranges_in_flight = {ranges_in_flight}\n"
        ),
    );
    format!("[database]\nurl = \"sqlite://{}\"\n{chain}", db.display())
}

/// `agentindex index` on `config`, tied to this process (a benchmark stopped midway leaves no
/// indexer running).
fn start_agentindex(
    binary: &str,
    config: &Path,
    exit_when_synced: bool,
) -> anyhow::Result<TiedChild> {
    let mut tied = TiedCommand::new(binary, Duration::from_secs(5));
    let command = tied.command();
    command
        .args(["index", "--no-documents", "--config"])
        .arg(config)
        .env(
            "RUST_LOG",
            std::env::var("BENCH_AGENTINDEX_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if exit_when_synced {
        command.arg("--exit-when-synced");
    }
    Ok(tied.spawn()?)
}

/// The last block agentindex holds.
async fn indexed(store: &Store, chain_id: u64) -> u64 {
    match store.progress(chain_id).await {
        Ok(Some(progress)) => progress.next_block.saturating_sub(1),
        _ => 0,
    }
}

/// Requests the emulator served so far: `eth_getLogs`, every method, compute units, and
/// answers refused for the rate.
fn served(emulator: &Emulator) -> [u64; 4] {
    let counters = emulator.counters();
    [
        counters.requests_of("eth_getLogs"),
        counters.total_requests(),
        counters.compute_units(),
        counters
            .rate_limited
            .load(std::sync::atomic::Ordering::Relaxed),
    ]
}

struct TipRun {
    agents: u64,
    blocks: u64,
    get_logs: u64,
    requests: u64,
    compute_units: u64,
    rate_limited: u64,
    max_lag: u64,
    mean_lag: f64,
    catch_up: Duration,
}

/// Sends each new block's traffic until dropped.
fn traffic(devnet: &Devnet, wallets: Vec<Address>) -> tokio::task::JoinHandle<()> {
    let seeder = devnet.seeder();
    let provider = devnet.provider().clone();
    tokio::spawn(async move {
        let mut last = 0;
        let mut salt = 1u64 << 32;
        loop {
            let head = provider.get_block_number().await.unwrap_or(last);
            if head != last {
                last = head;
                salt += 1;
                let payees: Vec<Address> = (0..PAYMENTS_PER_BLOCK)
                    .map(|i| wallets[(salt as usize * 7919 + i * 104_729) % wallets.len()])
                    .collect();
                if let Err(error) =
                    send_block_traffic(&seeder, TRAFFIC_PER_BLOCK, salt, &payees).await
                {
                    eprintln!("traffic: {error}");
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

async fn tip(settings: &Settings, agents: u64, dir: &Path) -> anyhow::Result<TipRun> {
    let devnet = devnet().await?;
    fund_payers(&devnet).await?;
    let seeding = Instant::now();
    let wallets = seed_wallet_agents(&devnet, agents).await?;
    eprintln!(
        "tip {agents}: seeded {} agents in {:.1?}",
        wallets.len(),
        seeding.elapsed()
    );
    let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("evm_setIntervalMining".into(), (2,))
        .await?;
    let sender = traffic(&devnet, wallets);
    let db = dir.join(format!("tip-{agents}.db"));
    let config_path = dir.join(format!("tip-{agents}.toml"));
    std::fs::write(
        &config_path,
        config(&devnet, emulator.url(), &db, settings.rps, 4),
    )?;
    // Created and migrated here first: two processes migrating one new file at once collide.
    let store = Store::open(&format!("sqlite://{}", db.display())).await?;
    let mut tied = start_agentindex(&settings.binary, &config_path, false)?;
    let child = tied.child();
    let chain = devnet.chain_id();
    let started = Instant::now();
    while indexed(&store, chain).await + 1 < devnet.block_number().await? {
        anyhow::ensure!(child.try_wait()?.is_none(), "agentindex exited");
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(3_600),
            "not caught up within an hour"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let catch_up = started.elapsed();
    let (head0, served0) = (devnet.block_number().await?, served(&emulator));
    let window = Instant::now();
    let (mut max_lag, mut lag_sum, mut samples) = (0u64, 0u64, 0u64);
    while window.elapsed() < settings.tip {
        let lag = devnet
            .block_number()
            .await?
            .saturating_sub(indexed(&store, chain).await);
        max_lag = max_lag.max(lag);
        lag_sum += lag;
        samples += 1;
        anyhow::ensure!(child.try_wait()?.is_none(), "agentindex exited");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (head1, served1) = (devnet.block_number().await?, served(&emulator));
    sender.abort();
    tied.stop()?;
    store.close().await;
    Ok(TipRun {
        agents,
        blocks: head1 - head0,
        get_logs: served1[0] - served0[0],
        requests: served1[1] - served0[1],
        compute_units: served1[2] - served0[2],
        rate_limited: served1[3] - served0[3],
        max_lag,
        mean_lag: lag_sum as f64 / samples.max(1) as f64,
        catch_up,
    })
}

struct CatchUp {
    agents: u64,
    blocks: u64,
    contract_logs: u64,
    token_logs: u64,
    /// agentindex with ranges read ahead (the default), then one range at a time.
    runs: Vec<(usize, Backfill)>,
    ponder: Option<(Duration, u64, u64)>,
}

/// One agentindex catch-up through a fresh emulator.
struct Backfill {
    elapsed: Duration,
    get_logs: u64,
    requests: u64,
    compute_units: u64,
    rate_limited: u64,
    peak_kib: u64,
}

/// Indexes the devnet from scratch through a fresh emulator, `ranges_in_flight` at once.
async fn backfill(
    settings: &Settings,
    devnet: &Devnet,
    dir: &Path,
    ranges_in_flight: usize,
) -> anyhow::Result<Backfill> {
    let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
    let db = dir.join(format!("catch-up-{ranges_in_flight}.db"));
    let config_path = dir.join(format!("catch-up-{ranges_in_flight}.toml"));
    std::fs::write(
        &config_path,
        config(devnet, emulator.url(), &db, settings.rps, ranges_in_flight),
    )?;
    let started = Instant::now();
    let mut tied = start_agentindex(&settings.binary, &config_path, true)?;
    let child = tied.child();
    let mut peak_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        peak_kib = peak_kib.max(memory::peak_kib(&child.id().to_string()).unwrap_or(0));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let elapsed = started.elapsed();
    anyhow::ensure!(status.success(), "agentindex failed: {status}");
    let [get_logs, requests, compute_units, rate_limited] = served(&emulator);
    Ok(Backfill {
        elapsed,
        get_logs,
        requests,
        compute_units,
        rate_limited,
        peak_kib,
    })
}

impl CatchUp {
    /// The fewest `eth_getLogs` the caps allow for what agentindex needs: the configured
    /// contracts' logs and the token's transfers, each in ranges and answers no larger than
    /// the caps.
    fn minimum_get_logs(&self) -> u64 {
        let ranges = self.blocks.div_ceil(RANGE_CAP);
        let answers = |logs: u64| ranges.max(logs.div_ceil(RESULT_CAP as u64));
        answers(self.contract_logs) + answers(self.token_logs)
    }
}

async fn catch_up(settings: &Settings, dir: &Path) -> anyhow::Result<CatchUp> {
    let devnet = devnet().await?;
    fund_payers(&devnet).await?;
    let seeding = Instant::now();
    let wallets = seed_wallet_agents(&devnet, settings.agents).await?;
    for block in 0..settings.traffic_blocks {
        let payees: Vec<Address> = (0..PAYMENTS_PER_BLOCK)
            .map(|i| wallets[(block as usize * 7919 + i * 104_729) % wallets.len()])
            .collect();
        send_block_traffic(&devnet.seeder(), TRAFFIC_PER_BLOCK, block, &payees).await?;
    }
    // The traffic was sent without waiting: let anvil mine all of it before anything is timed.
    loop {
        let before = devnet.block_number().await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        if devnet.block_number().await? == before {
            break;
        }
    }
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_mine".into(), ("0x23",))
        .await?;
    let head = devnet.block_number().await?;
    let start = devnet.deployment().start_block;
    eprintln!(
        "catch-up: {} agents and {} traffic blocks seeded into {head} blocks in {:.1?}",
        wallets.len(),
        settings.traffic_blocks,
        seeding.elapsed()
    );
    let (mut contract_logs, mut token_logs) = (0, 0);
    let mut from = start;
    while from <= head {
        let to = head.min(from + RANGE_CAP - 1);
        let d = devnet.deployment();
        let contracts = Filter::new()
            .address(vec![
                d.identity,
                d.reputation,
                d.validation,
                d.factory,
                d.registry,
                d.curated_registry,
            ])
            .from_block(from)
            .to_block(to);
        contract_logs += devnet.provider().get_logs(&contracts).await?.len() as u64;
        let filter = Filter::new()
            .address(devnet.deployment().usdc)
            .event_signature(vec![
                TestUSDC::Transfer::SIGNATURE_HASH,
                TestUSDC::AuthorizationUsed::SIGNATURE_HASH,
            ])
            .from_block(from)
            .to_block(to);
        token_logs += devnet.provider().get_logs(&filter).await?.len() as u64;
        from = to + 1;
    }

    let mut runs = Vec::new();
    for ranges_in_flight in [4, 1] {
        runs.push((
            ranges_in_flight,
            backfill(settings, &devnet, dir, ranges_in_flight).await?,
        ));
    }

    let ponder = if settings.ponder {
        let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
        let run = ponder::run_through(&devnet, &[], emulator.url(), settings.rps, None).await?;
        let [_, requests, _, _] = served(&emulator);
        Some((run.elapsed, requests, run.events))
    } else {
        None
    };
    Ok(CatchUp {
        agents: wallets.len() as u64,
        blocks: head - start + 1,
        contract_logs,
        token_logs,
        runs,
        ponder,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let what = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    let settings = Settings::from_env();
    let dir = tempfile::tempdir()?;
    let mut report = String::new();
    writeln!(
        report,
        "Behind the provider emulator: {} ms a request, {} requests/s, ranges of at most {RANGE_CAP} blocks and answers of at most {RESULT_CAP} logs (Alchemy's wording).\n",
        settings.latency.as_millis(),
        settings.rps
    )?;
    if what == "tip" || what == "all" {
        writeln!(
            report,
            "### At the tip: a block every 2 s, {TRAFFIC_PER_BLOCK} background transfers and {PAYMENTS_PER_BLOCK} payments into agents each, for {} s\n",
            settings.tip.as_secs()
        )?;
        writeln!(
            report,
            "| agents | caught up in | blocks | eth_getLogs / block | requests / block | compute units / block | requests / day | 429s | lag max / mean (blocks) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        )?;
        for agents in &settings.tip_sizes {
            let run = tip(&settings, *agents, dir.path()).await?;
            let blocks = run.blocks.max(1) as f64;
            writeln!(
                report,
                "| {} | {:.0} s | {} | {:.2} | {:.2} | {:.0} | {:.0} | {} | {} / {:.2} |",
                run.agents,
                run.catch_up.as_secs_f64(),
                run.blocks,
                run.get_logs as f64 / blocks,
                run.requests as f64 / blocks,
                run.compute_units as f64 / blocks,
                run.requests as f64 / blocks * 43_200.0,
                run.rate_limited,
                run.max_lag,
                run.mean_lag
            )?;
            eprintln!("{report}");
        }
        writeln!(report)?;
    }
    if what == "catchup" || what == "all" {
        let run = catch_up(&settings, dir.path()).await?;
        writeln!(
            report,
            "### Catch-up: {} agents with wallets, {} blocks, {} logs of the registries, {} of the token\n",
            run.agents, run.blocks, run.contract_logs, run.token_logs
        )?;
        writeln!(
            report,
            "| indexer | wall time | requests | eth_getLogs | fewest eth_getLogs the caps allow | compute units | 429s | peak RSS |\n|---|---:|---:|---:|---:|---:|---:|---:|"
        )?;
        for (ranges_in_flight, backfill) in &run.runs {
            let how = match ranges_in_flight {
                1 => "agentindex, one range at a time".to_string(),
                n => format!("agentindex, {n} ranges in flight"),
            };
            writeln!(
                report,
                "| {how} | {:.1} s | {} | {} | {} | {} | {} | {} MiB |",
                backfill.elapsed.as_secs_f64(),
                backfill.requests,
                backfill.get_logs,
                run.minimum_get_logs(),
                backfill.compute_units,
                backfill.rate_limited,
                backfill.peak_kib / 1024
            )?;
        }
        if let Some((elapsed, requests, events)) = run.ponder {
            writeln!(
                report,
                "| Ponder ({events} rows) | {:.1} s | {requests} | | | | | |",
                elapsed.as_secs_f64()
            )?;
        }
    }
    println!("{report}");
    if let Ok(path) = std::env::var("BENCH_OUT") {
        std::fs::write(path, &report)?;
    }
    Ok(())
}
