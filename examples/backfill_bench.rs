//! Backfill benchmark: seeds a large Seeder workload on a local anvil, times a bare
//! `eth_getLogs` of every block range, then times `agentindex index` (the release binary) over
//! the same chain and reports events/s and its peak memory next to the bare fetch rate. The two
//! take turns, three passes each, and the fastest pass of each is compared. Ends with the
//! reputation feed's digest of the index, which the default 38 rounds (the M workload, about
//! 200,000 events) make comparable from one build to the next.
//!
//! With `BASELINE_BIN` naming another build of `agentindex` (an older commit's), that build
//! indexes the same chain in turns with the others, and its time and feed digest are printed
//! beside this build's: the figure "within x% of before" is read from one run on one chain.
//!
//! Run with `scripts/bench` (or `cargo run --release --example backfill_bench -- [rounds]`).

#[path = "support/backfill.rs"]
mod backfill;
#[path = "../tests/support/memory.rs"]
mod memory;

use agentindex_contracts::Devnet;
use agentindex_contracts::workload::{self, Workload};
use backfill::{IndexRun, bare_fetch, feed_digests, index_pass};
use std::time::{Duration, Instant};
/// Passes of the bare fetch and of the index, taking turns; the fastest of each counts.
const PASSES: usize = 3;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rounds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(38);
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let baseline = std::env::var("BASELINE_BIN").ok();

    let devnet = Devnet::start_with(backfill::devnet_options()).await?;
    let seeding = Instant::now();
    workload::seed(&devnet, Workload::bench(rounds)).await?;
    let head = devnet.block_number().await?;
    eprintln!(
        "seeded {rounds} rounds into {head} blocks in {:.1?}",
        seeding.elapsed()
    );

    // The node answers the same requests at quite different speeds from one pass to the next,
    // so the bare fetch and the index take turns, a few passes each, and each reports its
    // fastest pass. The baseline is a bare eth_getLogs of every log of every range, no filter.
    let start = devnet.deployment().start_block;
    let dir = tempfile::tempdir()?;
    let (mut bare_passes, mut index_passes, mut baseline_passes) =
        (Vec::new(), Vec::new(), Vec::new());
    let (mut logs, mut events, mut peak_kib) = (0usize, 0i64, 0u64);
    for pass in 0..PASSES {
        let (elapsed, count) = bare_fetch(&devnet, start, head).await?;
        bare_passes.push(elapsed);
        logs = count;
        let run = index_pass(&binary, &devnet, &dir.path().join(format!("pass-{pass}"))).await?;
        anyhow::ensure!(
            pass == 0 || run.events == events,
            "pass {pass} stored {} events, an earlier one {events}",
            run.events
        );
        report_pass(&format!("pass {pass}"), &run);
        index_passes.push(run.elapsed);
        events = run.events;
        peak_kib = peak_kib.max(run.peak_kib);
        if let Some(baseline) = &baseline {
            let dir = dir.path().join(format!("baseline-{pass}"));
            let run = index_pass(baseline, &devnet, &dir).await?;
            anyhow::ensure!(
                run.events == events,
                "the baseline stored {} events, this build {events}",
                run.events
            );
            report_pass(&format!("baseline pass {pass}"), &run);
            baseline_passes.push(run.elapsed);
        }
    }
    let bare = *bare_passes.iter().min().expect("at least one pass");
    let indexing = *index_passes.iter().min().expect("at least one pass");

    let bare_rate = logs as f64 / bare.as_secs_f64();
    let index_rate = events as f64 / indexing.as_secs_f64();
    println!("blocks            {}", head - start + 1);
    println!("logs on chain     {logs}");
    println!(
        "bare eth_getLogs  {:>8.2} s  {:>10.0} logs/s    (passes: {})",
        bare.as_secs_f64(),
        bare_rate,
        seconds(&bare_passes)
    );
    println!(
        "agentindex index  {:>8.2} s  {:>10.0} events/s  (passes: {}; {events} events stored)",
        indexing.as_secs_f64(),
        index_rate,
        seconds(&index_passes)
    );
    println!(
        "ratio             {:.2} of the bare fetch rate (fastest pass of each)",
        index_rate / bare_rate
    );
    println!(
        "peak memory       {:.1} MiB (highest of any pass)",
        peak_kib as f64 / 1024.0
    );
    let digest = feed_digests(&binary, &dir.path().join("pass-0"))?;
    println!("feed digest       {digest}");
    if let Some(baseline) = &baseline {
        let fastest = *baseline_passes.iter().min().expect("at least one pass");
        println!(
            "baseline index    {:>8.2} s  (passes: {}); this build takes {:.3}x its time",
            fastest.as_secs_f64(),
            seconds(&baseline_passes),
            indexing.as_secs_f64() / fastest.as_secs_f64()
        );
        let before = feed_digests(baseline, &dir.path().join("baseline-0"))?;
        let verdict = if before == digest {
            "the same"
        } else {
            "DIFFERENT"
        };
        println!("baseline digest   {before} ({verdict})");
    }
    Ok(())
}

/// One pass's time and memory, on stderr as it ends.
fn report_pass(label: &str, run: &IndexRun) {
    eprintln!(
        "{label}: {:.2} s, peak resident {:.1} MiB; most own memory seen {:.1} MiB at {:.2} s, most mapped file pages {:.1} MiB",
        run.elapsed.as_secs_f64(),
        run.peak_kib as f64 / 1024.0,
        run.peak_own_kib as f64 / 1024.0,
        run.own_peak_at,
        run.peak_file_kib as f64 / 1024.0
    );
}

fn seconds(passes: &[Duration]) -> String {
    passes
        .iter()
        .map(|p| format!("{:.2} s", p.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}
