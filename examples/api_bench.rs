//! API benchmark: 100,000 agents (with profiles, skills, search rows and scores) served by the
//! API in this process, loaded by `oha` (crates.io) from another, GraphQL queries sent in the
//! URL: by-id lookups and a bare `/healthz` as fast as 16 connections go; filtered searches,
//! full-text searches and reputation-ordered pages at a fixed 500 requests/s, each drawn from
//! thousands of distinct queries so the response cache rarely helps; the agent0 SDK's search on
//! the subgraph endpoint (`/subgraphs/name/agent0`) at 500 requests/s; and one query repeated, to
//! show the cache. Prints p50, p99 and requests/s of each, and each one's throughput as a ratio of
//! the bare endpoint's, measured in the same run.
//!
//! Run with `scripts/bench-api` (or `cargo run --release --example api_bench -- [agents]
//! [seconds]` with `oha` on the PATH or in `OHA`). With `API_BENCH_POSTGRES=1` the agents are
//! loaded into a database of a PostgreSQL server started for the run (as `scripts/bench-postgres`
//! starts it; `BENCH_POSTGRES=1` gives it a benchmark's settings) instead of SQLite.

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;
#[allow(dead_code)]
#[path = "../tests/support/postgres.rs"]
mod postgres;

use api_loads::{Load, finish_oha, in_url, start_oha};
use std::time::Instant;

/// The allocator the `agentindex` binary runs the API with (`src/main.rs`), so the API served
/// here allocates as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (count, seconds, oha) = api_loads::bench_args()?;

    // `API_BENCH_DB` keeps the loaded database at that path (to look at plans afterwards).
    let dir = tempfile::tempdir()?;
    let db = std::env::var_os("API_BENCH_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("api.db"));
    // `API_BENCH_POSTGRES=postgres://…` loads into that (empty) database instead, and leaves it.
    let postgres = std::env::var("API_BENCH_POSTGRES").ok();
    let on_postgres = postgres.is_some();
    let given_postgres = postgres
        .as_deref()
        .is_some_and(|url| url.starts_with("postgres://"));
    let url = match postgres {
        Some(url) if url.starts_with("postgres://") => url,
        Some(_) => postgres::server().fresh_database(),
        None => format!("sqlite://{}", db.display()),
    };
    let started = Instant::now();
    // `API_BENCH_REUSE=1` serves the database `API_BENCH_DB` kept from an earlier run as it is,
    // or the PostgreSQL database `API_BENCH_POSTGRES=postgres://…` names, loaded by an earlier
    // run.
    let reuse = std::env::var_os("API_BENCH_REUSE").is_some()
        && (db.exists() && !on_postgres || given_postgres);
    let (store, keys) = if reuse {
        agents::open_loaded(&url).await?
    } else {
        let (store, keys) = agents::open_filled(&url, count, true).await?;
        agents::score(&store, &keys).await?;
        if !on_postgres {
            // Adopting the rules is one transaction (6.8 GB of WAL at a million agents). An
            // indexer commits again within a block, and its checkpoint task has by then copied
            // the WAL and let it start over; do that here rather than measure the copy.
            let pool = sqlx::any::AnyPoolOptions::new()
                .max_connections(1)
                .connect(&url)
                .await?;
            sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&pool)
                .await?;
            pool.close().await;
        }
        if on_postgres {
            // What autovacuum does soon after a load: statistics and the visibility map.
            let pool = sqlx::any::AnyPoolOptions::new()
                .max_connections(1)
                .connect(&url)
                .await?;
            sqlx::query("VACUUM ANALYZE").execute(&pool).await?;
            pool.close().await;
        }
        (store, keys)
    };
    println!(
        "{} {} agents with profiles, skills, search rows and scores in {:.1} s",
        if reuse { "reopened" } else { "loaded" },
        keys.len(),
        started.elapsed().as_secs_f64()
    );

    let server = api_loads::InProcess::start(&store, &url).await?;
    let base = server.base.clone();

    let mut rng = rand::rng();
    let ids = api_loads::by_id(&keys, &mut rng);
    let repeated = in_url(
        "{ agents(filter: { skill: \"translate\", x402: true, minReputation: 1 }, orderBy: REPUTATION, first: 20) { edges { node { id name reputation { score } } } } }",
    );
    // Every load but the last asks varied questions (thousands of distinct URLs, as many as it
    // sends or more), so the response cache rarely answers; the last repeats one and shows it.
    let loads = [
        Load {
            name: "bare GET /healthz (baseline)",
            paths: vec!["/healthz".into()],
            rate: None,
        },
        Load {
            name: "agent by id",
            paths: ids,
            rate: None,
        },
        Load {
            name: "filtered search @500/s",
            paths: api_loads::filtered_searches(&mut rng),
            rate: Some(500),
        },
        Load {
            name: "full-text search @500/s",
            paths: api_loads::text_searches(&mut rng),
            rate: Some(500),
        },
        Load {
            name: "reputation order @500/s",
            paths: api_loads::reputation_pages(&mut rng),
            rate: Some(500),
        },
        Load {
            name: "agent0 SDK search @500/s",
            paths: api_loads::sdk_searches(count, &mut rng),
            rate: Some(500),
        },
        Load {
            name: "one search repeated (cached)",
            paths: vec![repeated],
            rate: None,
        },
    ];
    let list = dir.path().join("urls.txt");
    let mut results = Vec::new();
    // `API_BENCH_ONLY=text` measures only the loads whose name contains it (and the baseline).
    let only = std::env::var("API_BENCH_ONLY").unwrap_or_default();
    for load in loads
        .iter()
        .enumerate()
        .filter(|(i, load)| *i == 0 || load.name.contains(&only))
        .map(|(_, load)| load)
    {
        let connections = if load.rate.is_some() { 32 } else { 16 };
        // A varied load first runs two seconds on a fifth of its queries (faulting in the
        // pages it reads), then is measured on the rest, which the warm-up has not cached.
        let measured = match load.paths.as_slice() {
            [_] => &load.paths[..],
            paths => {
                let (warm, rest) = paths.split_at(paths.len() / 5);
                finish_oha(
                    load.name,
                    start_oha(&oha, &base, &list, load, warm, 2, connections, None)?,
                )?;
                rest
            }
        };
        let m = finish_oha(
            load.name,
            start_oha(
                &oha,
                &base,
                &list,
                load,
                measured,
                seconds,
                connections,
                None,
            )?,
        )?;
        results.push((
            load.name,
            m.requests_per_second,
            m.p50_ms,
            m.p99_ms,
            measured.len(),
        ));
    }
    let baseline = results[0].1;
    println!(
        "{:<32} {:>9} {:>12} {:>10} {:>10} {:>14}",
        "load", "queries", "requests/s", "p50 ms", "p99 ms", "vs baseline"
    );
    for (name, rps, p50, p99, queries) in &results {
        println!(
            "{name:<32} {queries:>9} {rps:>12.0} {p50:>10.2} {p99:>10.2} {:>13.2}x",
            rps / baseline
        );
    }
    server.stop().await?;
    Ok(())
}
