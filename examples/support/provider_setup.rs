//! The provider benchmark's setting: its knobs (environment variables), the Base-like devnet,
//! agentindex's config and process, and what the emulated provider served.

use agentindex_contracts::tied::{TiedChild, TiedCommand};
use agentindex_contracts::{Devnet, DevnetOptions};
use agentindex_emulator::{Emulator, Limits, Provider as Wording};
use agentindex_indexer::store::{Store, StoreRead};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Background transfers per block: Base's USDC moves a couple of million a day, about 25 a block.
pub(crate) const TRAFFIC_PER_BLOCK: u64 = 24;
/// Payments into agents per block.
pub(crate) const PAYMENTS_PER_BLOCK: usize = 2;
/// The provider's caps, as a pay-as-you-go plan words them.
pub(crate) const RANGE_CAP: u64 = 2_000;
pub(crate) const RESULT_CAP: usize = 10_000;

pub(crate) struct Settings {
    pub(crate) binary: String,
    pub(crate) latency: Duration,
    pub(crate) rps: u32,
    pub(crate) tip: Duration,
    pub(crate) tip_sizes: Vec<u64>,
    pub(crate) agents: u64,
    pub(crate) traffic_blocks: u64,
    pub(crate) ponder: bool,
}

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

impl Settings {
    pub(crate) fn from_env() -> Self {
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

    pub(crate) fn limits(&self) -> Limits {
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
pub(crate) async fn devnet() -> anyhow::Result<Devnet> {
    Ok(Devnet::start_with(DevnetOptions {
        gas_limit: Some(2_000_000_000),
        prune_history: Some(64),
        ..DevnetOptions::default()
    })
    .await?)
}

/// The config of agentindex following `devnet` through `rpc` into `db`.
pub(crate) fn config(
    devnet: &Devnet,
    rpc: &str,
    db: &Path,
    rps: u32,
    ranges_in_flight: usize,
) -> String {
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
pub(crate) fn start_agentindex(
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
pub(crate) async fn indexed(store: &Store, chain_id: u64) -> u64 {
    match store.progress(chain_id).await {
        Ok(Some(progress)) => progress.next_block.saturating_sub(1),
        _ => 0,
    }
}

/// Requests the emulator served so far: `eth_getLogs`, every method, compute units, and
/// answers refused for the rate.
pub(crate) fn served(emulator: &Emulator) -> [u64; 4] {
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
