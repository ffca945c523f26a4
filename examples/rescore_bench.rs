//! Rescore benchmark: fills a database with 100,000 agents (half ERC-8004 agents with feedback,
//! half agent contracts with ratings, every one paid four times), then times how long the writer
//! takes to rescore the 1,000 agents one batch touched, against the baseline of rescoring all of
//! them in the same run. Prints both, the per-agent cost of each and their ratio.
//!
//! Run with `scripts/bench-rescore` (or `cargo run --release --example rescore_bench --
//! [agents] [touched]`).

#[path = "support/agents.rs"]
mod agents;

use agents::rules;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Timed passes of the touched rescore; the fastest counts.
const PASSES: usize = 5;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let agents = args.next().transpose()?.unwrap_or(100_000);
    let touched = args.next().transpose()?.unwrap_or(1_000).min(agents);
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("rescore.db").display());
    let filling = Instant::now();
    let (store, keys) = agents::open_filled(&url, agents, false).await?;
    println!(
        "filled {agents} agents ({} payments) in {:.1} s",
        agents * 4,
        filling.elapsed().as_secs_f64()
    );

    let chain = Arc::new(agents::chain_context(rules()));
    let writer = store.writer(4);

    let started = Instant::now();
    writer.rescore(chain.clone(), keys.clone()).await?;
    let all = started.elapsed();

    let step = agents / touched.max(1);
    let batch: Vec<String> = keys
        .iter()
        .step_by(step.max(1))
        .take(touched)
        .cloned()
        .collect();
    let mut fastest = Duration::MAX;
    for _ in 0..PASSES {
        let started = Instant::now();
        writer.rescore(chain.clone(), batch.clone()).await?;
        fastest = fastest.min(started.elapsed());
    }
    let per = |d: Duration, n: usize| d.as_secs_f64() * 1e6 / n as f64;
    println!(
        "rescore {touched} of {agents} agents: {:.1} ms (fastest of {PASSES}; {:.1} µs per agent)",
        fastest.as_secs_f64() * 1e3,
        per(fastest, touched)
    );
    println!(
        "baseline, rescore all {agents}: {:.2} s ({:.1} µs per agent)",
        all.as_secs_f64(),
        per(all, agents)
    );
    println!(
        "ratio: the touched batch takes {:.2}% of a full rescore ({:.2}x the per-agent cost)",
        100.0 * fastest.as_secs_f64() / all.as_secs_f64(),
        per(fastest, touched) / per(all, agents)
    );
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM agent_reputation")
        .fetch_one(store.reader())
        .await?;
    anyhow::ensure!(
        stored as usize == agents,
        "{stored} rows stored for {agents} agents"
    );
    store.close().await;
    Ok(())
}
