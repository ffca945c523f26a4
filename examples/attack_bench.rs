//! Attack benchmark: legitimate traffic, the API benchmark's loads at fixed rates (lookups by
//! id, filtered searches, the agent0 SDK's search), sent by `oha` to the real `agentindex serve`
//! binary over 100,000 synthetic agents, measured once alone and once while one attacker per
//! class of issue #30 sends the worst request of its class over and over, as fast as it is
//! answered, from a loopback address of its own (`support/attackers.rs`). The server runs with
//! the shipped limits, the per-client rate included, except that the legitimate load's address
//! is in `unlimited_clients`: it stands for many clients at once. `ATTACK_CLASSES` picks some
//! classes only (to find which one costs what). The attackers' client side runs at nice 19, as
//! remote machines' would cost this one nothing (`ATTACKERS_AT_NORMAL_PRIORITY` undoes that).
//!
//! Prints each load's p50 and p99 alone and under attack with their ratio (target: p99 within
//! 2x), what each attacker sent and got back, and the server's peak memory of its own (target:
//! under 512 MiB) beside its resident memory with the mapped database file.
//!
//! Run with `scripts/bench-attack` (or `cargo run --release --example attack_bench --
//! [agents] [seconds]` with `oha` in `OHA` and the release binary built).

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;
#[path = "support/attackers.rs"]
mod attackers;
#[path = "support/serve_process.rs"]
mod serve_process;

use api_loads::{Load, Measured, finish_oha, start_oha};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The address the legitimate loads come from (oha's, the default loopback source); the
/// attackers come from 127.0.0.10 and up.
const LEGITIMATE: &str = "127.0.0.1";

/// Connections `oha` keeps open per load.
const CONNECTIONS: usize = 16;

/// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`).
fn memory_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The highest resident memory seen, in KiB: in all (`VmRSS`), and the process's own
/// (`RssAnon`: heap and stacks), without the pages of the database file its readers map
/// (`RssFile`, the operating system's page cache, which it takes back under pressure).
#[derive(Debug, Default, Clone, Copy)]
struct Peaks {
    resident: u64,
    anonymous: u64,
}

/// Samples the server's resident memory every 50 ms until `stop`; returns the highest seen.
fn sample_memory(pid: u32, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<Peaks> {
    tokio::spawn(async move {
        let mut peaks = Peaks::default();
        while !stop.load(Ordering::Relaxed) {
            peaks.resident = peaks.resident.max(memory_kib(pid, "VmRSS:").unwrap_or(0));
            peaks.anonymous = peaks
                .anonymous
                .max(memory_kib(pid, "RssAnon:").unwrap_or(0));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        peaks
    })
}

/// Runs `loads` one after the other for `seconds` each.
fn measure_all(
    oha: &str,
    base: &str,
    dir: &Path,
    loads: &[Load],
    seconds: usize,
) -> anyhow::Result<Vec<Measured>> {
    let list = dir.join("urls.txt");
    loads
        .iter()
        .map(|load| {
            finish_oha(
                load.name,
                start_oha(oha, base, &list, load, &load.paths, seconds, CONNECTIONS)?,
            )
        })
        .collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (count, seconds, oha) = api_loads::bench_args()?;
    let classes = attackers::chosen()?;
    let rate = attackers::rate()?;
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("attack.db").display());
    let started = Instant::now();
    let (store, keys) = agents::open_filled(&url, count, true).await?;
    agents::score(&store, &keys).await?;
    // The three final epoch boundaries below the indexed block hold stored feeds, as the
    // indexer's feed keeper leaves them (`[reputation] feeds_kept`, 3, every 1,000 blocks).
    let indexed = agents::indexed_block(&store).await?;
    let boundary = indexed - indexed % 1_000;
    let stored: Vec<u64> = (1..=3)
        .filter_map(|k| boundary.checked_sub(k * 1_000))
        .collect();
    agents::store_feeds(&store, &stored).await?;
    store.close().await;
    println!(
        "loaded {count} agents in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let config = dir.path().join("serve.toml");
    // The shipped limits, but for the legitimate load's own address: it stands for many
    // clients at once, as an operator's server-side renderer would.
    let api = format!("unlimited_clients = [\"{LEGITIMATE}\"]");
    std::fs::write(&config, api_loads::serve_config_with(&url, &api))?;
    let server = serve_process::start(&binary, &config, "error", Stdio::null(), |_| Ok(()))?;
    let pid = server.child.id();
    println!("serving at {} (pid {pid})", server.base);

    let mut rng = rand::rng();
    let loads = [
        Load {
            name: "agent by id @300/s",
            paths: api_loads::by_id(&keys, &mut rng),
            rate: Some(300),
        },
        Load {
            name: "filtered search @200/s",
            paths: api_loads::filtered_searches(&mut rng),
            rate: Some(200),
        },
        Load {
            name: "agent0 SDK search @100/s",
            paths: api_loads::sdk_searches(count, &mut rng),
            rate: Some(100),
        },
    ];

    // A first pass faults in the pages the loads read, so neither measured pass pays for it.
    measure_all(&oha, &server.base, dir.path(), &loads, 2)?;
    let sampling = Arc::new(AtomicBool::new(false));
    let memory = sample_memory(pid, sampling.clone());
    let alone = measure_all(&oha, &server.base, dir.path(), &loads, seconds)?;
    sampling.store(true, Ordering::Relaxed);
    let peaks_alone = memory.await?;

    let sampling = Arc::new(AtomicBool::new(false));
    let memory = sample_memory(pid, sampling.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let attacking = attackers::runtime()?;
    let running = attackers::start(attacking.handle(), &server.base, &classes, rate, &stop);
    // The attackers get a while (ATTACK_WARMUP_SECS, 5) to reach full strength and to spend
    // their bursts (of requests and of the server's time) before the measured pass.
    tokio::time::sleep(Duration::from_secs(attackers::warmup()?)).await;
    let attacked = measure_all(&oha, &server.base, dir.path(), &loads, seconds)?;
    stop.store(true, Ordering::Relaxed);
    let mut tallies = Vec::new();
    for attacker in running {
        tallies.push(attacker.join().await);
    }
    sampling.store(true, Ordering::Relaxed);
    let peaks_attacked = memory.await?;
    drop(attacking);

    println!(
        "\n{:<28} {:>10} {:>10} {:>12} {:>12} {:>9}",
        "legitimate load", "p50 alone", "p99 alone", "p50 attacked", "p99 attacked", "p99 ratio"
    );
    for ((load, a), b) in loads.iter().zip(&alone).zip(&attacked) {
        println!(
            "{:<28} {:>8.2}ms {:>8.2}ms {:>10.2}ms {:>10.2}ms {:>8.2}x",
            load.name,
            a.p50_ms,
            a.p99_ms,
            b.p50_ms,
            b.p99_ms,
            b.p99_ms / a.p99_ms
        );
    }
    println!(
        "\n{:<24} {:>10} {:>10} {:>10}",
        "attacker", "sent", "refused", "answered"
    );
    let read = |n: &AtomicU64| n.load(Ordering::Relaxed);
    for (class, tally) in &tallies {
        println!(
            "{:<24} {:>10} {:>10} {:>10}",
            format!("{class:?}"),
            read(&tally.sent),
            read(&tally.refused),
            read(&tally.answered)
        );
    }
    println!(
        "\n{} attackers, each at {rate} requests (messages, connections) a second",
        classes.len()
    );
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "\nserver peak memory, MiB       {:>10} {:>10}\n\
         own (RssAnon; bound 512)     {:>10.1} {:>10.1}\n\
         resident (VmRSS, with the    {:>10.1} {:>10.1}\n  mapped database file)",
        "alone",
        "attacked",
        mib(peaks_alone.anonymous),
        mib(peaks_attacked.anonymous),
        mib(peaks_alone.resident),
        mib(peaks_attacked.resident),
    );
    drop(server);
    Ok(())
}
