//! A seeded chain held open for profiling: starts anvil, seeds a Seeder workload of about
//! `events` events (as the comparison benchmark does), writes an `agentindex` configuration that
//! indexes it into `DIR/bench.db` to `DIR/bench.toml`, and keeps the chain up until Ctrl-C, so
//! one seeding serves any number of `agentindex index` runs under `perf` or `valgrind`.
//!
//! Run with `cargo run --release --example seeded_chain -- DIR [events]`.

#[path = "support/backfill.rs"]
mod backfill;
#[path = "../tests/support/memory.rs"]
mod memory;

use agentindex_contracts::Devnet;
use agentindex_contracts::workload::{self, Workload};
use std::path::PathBuf;
use std::time::Instant;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or_else(|| anyhow::anyhow!("usage: seeded_chain DIR [events]"))?,
    );
    let events: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(200_000);
    let devnet = Devnet::start_with(backfill::devnet_options()).await?;
    let started = Instant::now();
    workload::seed(&devnet, Workload::bench(backfill::rounds_for(events))).await?;
    backfill::mine_past_ponder_finality(&devnet).await?;
    std::fs::create_dir_all(&dir)?;
    let config = dir.join("bench.toml");
    std::fs::write(&config, backfill::config(&devnet, &dir.join("bench.db")))?;
    println!(
        "seeded {} blocks in {:.1?}; agentindex index --exit-when-synced --no-documents --config {}",
        devnet.block_number().await?,
        started.elapsed(),
        config.display()
    );
    tokio::signal::ctrl_c().await?;
    Ok(())
}
