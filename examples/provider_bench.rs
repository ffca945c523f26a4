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
#[path = "support/provider_catch_up.rs"]
mod provider_catch_up;
#[path = "support/provider_setup.rs"]
mod provider_setup;
#[path = "support/provider_tip.rs"]
mod provider_tip;

use provider_catch_up::catch_up;
use provider_setup::{PAYMENTS_PER_BLOCK, RANGE_CAP, RESULT_CAP, Settings, TRAFFIC_PER_BLOCK};
use provider_tip::tip;
use std::fmt::Write as _;

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
