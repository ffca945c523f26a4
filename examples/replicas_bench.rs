//! API throughput with one and with two `agentindex serve` replicas reading one PostgreSQL:
//! 100,000 synthetic agents (with profiles, skills, search rows and scores) in a database of a
//! PostgreSQL server started for the run, the real binary serving them, and `oha` loading each
//! replica as fast as its connections go with lookups by id and filtered searches (thousands of
//! distinct URLs, so the response cache rarely answers). With two replicas the load is split
//! evenly between them, as a round-robin balancer would split it, with no balancer in the path.
//!
//! Replicas run on separate machines in a deployment; here they share two cores with PostgreSQL
//! and the load generator. So that each replica stands for one machine of the same size, each
//! runs in a CPU cgroup of its own capped at `REPLICA_CPUS` cores (0.5 unless set; cgroup v1
//! `cpu` or cgroup v2, which needs root). The table gives each load's requests/s with one and
//! with two replicas, their ratio, and how often the replicas hit their cap (throttled CPU
//! periods, from the cgroup), which shows that the replicas, not PostgreSQL or the load
//! generator, set the pace.
//!
//! Run with `scripts/bench-replicas` (or `cargo run --release --example replicas_bench --
//! [agents] [seconds]` with `oha` in `OHA` and the release binary built).

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;
#[path = "support/cpu_cap.rs"]
mod cpu_cap;
#[allow(dead_code)]
#[path = "../tests/support/postgres.rs"]
mod postgres;
#[path = "support/serve_process.rs"]
mod serve_process;

use api_loads::{Load, Measured, finish_oha, start_oha};
use cpu_cap::CpuCap;
use serve_process::ServeProcess;
use sqlx::any::AnyPoolOptions;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

/// Connections `oha` keeps open to each replica.
const CONNECTIONS: usize = 16;

/// One load against `replicas`, each sent its share by its own `oha`, all at once; the
/// requests/s add up and the latencies are the worst replica's.
fn measure(
    oha: &str,
    dir: &Path,
    replicas: &[ServeProcess],
    load: &Load,
    paths: &[String],
    seconds: usize,
) -> anyhow::Result<Measured> {
    let share = paths.len() / replicas.len();
    let running = replicas
        .iter()
        .enumerate()
        .map(|(i, replica)| {
            let list = dir.join(format!("urls-{i}.txt"));
            let mine = &paths[i * share..(i + 1) * share];
            start_oha(
                oha,
                &replica.base,
                &list,
                load,
                mine,
                seconds,
                CONNECTIONS,
                None,
            )
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut total = Measured {
        requests_per_second: 0.0,
        p50_ms: 0.0,
        p99_ms: 0.0,
    };
    for child in running {
        let one = finish_oha(load.name, child)?;
        total.requests_per_second += one.requests_per_second;
        total.p50_ms = total.p50_ms.max(one.p50_ms);
        total.p99_ms = total.p99_ms.max(one.p99_ms);
    }
    Ok(total)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (count, seconds, oha) = api_loads::bench_args()?;
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let cpus: f64 = match std::env::var("REPLICA_CPUS") {
        Ok(text) => text
            .parse()
            .map_err(|e| anyhow::anyhow!("REPLICA_CPUS={text}: {e}"))?,
        Err(_) => 0.5,
    };
    let caps = [
        CpuCap::create("agentindex-replica-1", cpus)?,
        CpuCap::create("agentindex-replica-2", cpus)?,
    ];

    let url = postgres::server().fresh_database();
    let started = Instant::now();
    let (store, keys) = agents::open_filled(&url, count, true).await?;
    agents::score(&store, &keys).await?;
    store.close().await;
    // What autovacuum does soon after a load: statistics, and the visibility map that lets
    // counts over an index skip the table.
    sqlx::query("VACUUM ANALYZE")
        .execute(
            &AnyPoolOptions::new()
                .max_connections(1)
                .connect(&url)
                .await?,
        )
        .await?;
    println!(
        "loaded {count} agents into PostgreSQL in {:.1} s; each replica capped at {cpus} cores",
        started.elapsed().as_secs_f64()
    );

    let dir = tempfile::tempdir()?;
    let config = dir.path().join("replica.toml");
    std::fs::write(&config, api_loads::serve_config(&url))?;

    let mut rng = rand::rng();
    let loads = [
        Load {
            name: "agent by id",
            paths: api_loads::by_id(&keys, &mut rng),
            rate: None,
        },
        Load {
            name: "filtered search",
            paths: api_loads::filtered_searches(&mut rng),
            rate: None,
        },
    ];
    // Per load: (one replica, two replicas), with the throttled periods of each run.
    let mut rows: Vec<Vec<(Measured, u64)>> = loads.iter().map(|_| Vec::new()).collect();
    for replicas in [1, 2] {
        let running = caps[..replicas]
            .iter()
            .map(|cap| {
                serve_process::start(&binary, &config, "warn", Stdio::inherit(), |pid| {
                    cap.enter(pid)
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        for (load, row) in loads.iter().zip(&mut rows) {
            // Two seconds on a fifth of the queries fault in the pages they read; the rest,
            // which the warm-up has not cached, is measured.
            let (warm, rest) = load.paths.split_at(load.paths.len() / 5);
            measure(&oha, dir.path(), &running, load, warm, 2)?;
            let before: u64 = caps
                .iter()
                .map(CpuCap::throttled)
                .sum::<anyhow::Result<_>>()?;
            let measured = measure(&oha, dir.path(), &running, load, rest, seconds)?;
            let after: u64 = caps
                .iter()
                .map(CpuCap::throttled)
                .sum::<anyhow::Result<_>>()?;
            row.push((measured, after - before));
        }
    }

    println!(
        "{:<20} {:>16} {:>17} {:>8} {:>13} {:>14} {:>22}",
        "load",
        "1 replica req/s",
        "2 replicas req/s",
        "ratio",
        "p99 ms (1)",
        "p99 ms (2)",
        "throttled periods 1/2"
    );
    for (load, row) in loads.iter().zip(&rows) {
        let [(one, one_throttled), (two, two_throttled)] = row.as_slice() else {
            unreachable!("each load runs with one and with two replicas");
        };
        println!(
            "{:<20} {:>16.0} {:>17.0} {:>7.2}x {:>13.2} {:>14.2} {:>22}",
            load.name,
            one.requests_per_second,
            two.requests_per_second,
            two.requests_per_second / one.requests_per_second,
            one.p99_ms,
            two.p99_ms,
            format!("{one_throttled}/{two_throttled}")
        );
    }
    Ok(())
}
