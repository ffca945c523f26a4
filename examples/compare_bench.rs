//! The comparison benchmark: for each workload size (S 10,000 events, M 200,000, L 1,000,000),
//! a fresh anvil seeded through the `Seeder`, then on the same chain and in the same run:
//! a bare `eth_getLogs` of every range (the limit), `agentindex index` to the head (wall time,
//! events/s, blocks/s, peak RSS, database size), and Ponder (npm `ponder`, its embedded PGlite,
//! no RPC cache, equivalent schema and handlers in `bench/ponder`) until every row is in (wall
//! time, events/s, peak RSS). Writes the table, with the ratios agentindex / limit and
//! agentindex / Ponder, to standard output (and to the file `BENCH_OUT` names, if any;
//! `scripts/benchmarks` puts it in its report under `bench/runs/`).
//!
//! With `BENCH_POSTGRES=1`, each size is indexed a second time into PostgreSQL (a server
//! started for the run, as the tests start theirs, both reaching it through its Unix socket),
//! and Ponder runs on the same server instead of PGlite; a second table sets agentindex on
//! PostgreSQL beside agentindex on SQLite and beside Ponder.
//!
//! Run with `scripts/benchmarks [S,M,L]` (installs Ponder into `bench/ponder/node_modules`).

#[path = "support/backfill.rs"]
mod backfill;
#[path = "../tests/support/memory.rs"]
mod memory;
#[path = "support/ponder.rs"]
mod ponder;
#[allow(dead_code)]
#[path = "../tests/support/postgres.rs"]
mod postgres;

use agentindex_contracts::Devnet;
use agentindex_contracts::workload::{self, Workload};
use backfill::{bare_fetch, index_pass};
use std::fmt::Write as _;
use std::time::Instant;

/// One workload size: its name and the Seeder rounds that give about its events.
struct Size {
    name: &'static str,
    events: u64,
}

const SIZES: [Size; 3] = [
    Size {
        name: "S",
        events: 10_000,
    },
    Size {
        name: "M",
        events: 200_000,
    },
    Size {
        name: "L",
        events: 1_000_000,
    },
];

/// One size's figures.
struct Figures {
    size: &'static str,
    blocks: u64,
    logs: usize,
    bare_secs: f64,
    index: backfill::IndexRun,
    ponder: Option<ponder::PonderRun>,
    /// With `BENCH_POSTGRES`: agentindex and Ponder on PostgreSQL.
    on_postgres: Option<(backfill::IndexRun, Option<ponder::PonderRun>)>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let wanted: Vec<String> = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "S,M".into())
        .split(',')
        .map(|s| s.trim().to_uppercase())
        .collect();
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let skip_ponder = std::env::var_os("BENCH_SKIP_PONDER").is_some();
    let server = std::env::var_os("BENCH_POSTGRES").map(|_| postgres::server());
    let mut all = Vec::new();
    for size in SIZES.iter().filter(|s| wanted.iter().any(|w| w == s.name)) {
        let devnet = Devnet::start_with(backfill::devnet_options()).await?;
        let rounds = backfill::rounds_for(size.events);
        let seeding = Instant::now();
        let agents = workload::seed(&devnet, Workload::bench(rounds)).await?;
        backfill::mine_past_ponder_finality(&devnet).await?;
        let head = devnet.block_number().await?;
        let start = devnet.deployment().start_block;
        eprintln!(
            "{}: seeded {rounds} rounds into {head} blocks in {:.1?}",
            size.name,
            seeding.elapsed()
        );
        let (bare, logs) = bare_fetch(&devnet, start, head).await?;
        let dir = tempfile::tempdir()?;
        let index = index_pass(&binary, &devnet, dir.path()).await?;
        eprintln!(
            "{}: agentindex {} events in {:.2} s",
            size.name,
            index.events,
            index.elapsed.as_secs_f64()
        );
        let on_postgres = match server {
            Some(server) => {
                // agentindex and Ponder both reach the server through its Unix socket, as
                // processes on the database's own machine do (over loopback TCP each statement's
                // round trip costs more: BENCHMARKS.md, "Backfill on PostgreSQL").
                let url = server.fresh_database_on_socket();
                let pg_dir = dir.path().join("postgres");
                let index =
                    backfill::index_pass_into(&binary, &devnet, &pg_dir, Some(&url)).await?;
                eprintln!(
                    "{}: agentindex on PostgreSQL {} events in {:.2} s",
                    size.name,
                    index.events,
                    index.elapsed.as_secs_f64()
                );
                let ponder = match skip_ponder {
                    true => None,
                    false => {
                        let url = server.fresh_database_on_socket();
                        let run = ponder::run_on_postgres(&devnet, &agents, &url).await?;
                        eprintln!(
                            "{}: ponder on PostgreSQL {} events in {:.2} s",
                            size.name,
                            run.events,
                            run.elapsed.as_secs_f64()
                        );
                        Some(run)
                    }
                };
                Some((index, ponder))
            }
            None => None,
        };
        let ponder = if skip_ponder || server.is_some() {
            None
        } else {
            let run = ponder::run(&devnet, &agents).await?;
            // Both indexers hold the same events, or the comparison is not of like with like.
            anyhow::ensure!(
                run.events == index.events as u64,
                "{}: Ponder holds {} events, agentindex {}",
                size.name,
                run.events,
                index.events
            );
            eprintln!(
                "{}: ponder {} events in {:.2} s",
                size.name,
                run.events,
                run.elapsed.as_secs_f64()
            );
            Some(run)
        };
        all.push(Figures {
            size: size.name,
            blocks: head - start + 1,
            logs,
            bare_secs: bare.as_secs_f64(),
            index,
            ponder,
            on_postgres,
        });
    }
    let mut report = report(&all);
    if server.is_some() {
        report.push_str(&postgres_report(&all));
    }
    print!("{report}");
    // BENCHMARKS.md is the curated record (each session's runs and notes): never written here.
    let out = std::env::var("BENCH_OUT").unwrap_or_else(|_| "-".into());
    if out != "-" {
        std::fs::write(&out, report)?;
        eprintln!("wrote {out}");
    }
    Ok(())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The Markdown table of agentindex on PostgreSQL beside agentindex on SQLite and Ponder on the
/// same PostgreSQL server.
fn postgres_report(all: &[Figures]) -> String {
    let mut out = String::from(
        "\n| size | events | agentindex SQLite s | agentindex PostgreSQL s | events/s | db MiB | PostgreSQL / SQLite time | Ponder PostgreSQL s | Ponder events/s | vs Ponder |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for f in all {
        let Some((index, ponder)) = &f.on_postgres else {
            continue;
        };
        let secs = index.elapsed.as_secs_f64();
        let rate = index.events as f64 / secs;
        let (ponder_secs, ponder_rate, versus) = match ponder {
            Some(p) => {
                let prate = p.events as f64 / p.elapsed.as_secs_f64();
                (
                    format!("{:.2}", p.elapsed.as_secs_f64()),
                    format!("{prate:.0}"),
                    format!("{:.1}x", rate / prate),
                )
            }
            None => ("–".into(), "–".into(), "–".into()),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.2} | {:.0} | {:.1} | {:.2}x | {} | {} | {} |",
            f.size,
            index.events,
            f.index.elapsed.as_secs_f64(),
            secs,
            rate,
            index.db_bytes as f64 / (1024.0 * 1024.0),
            secs / f.index.elapsed.as_secs_f64(),
            ponder_secs,
            ponder_rate,
            versus
        );
    }
    out
}

/// The Markdown table of every size measured.
fn report(all: &[Figures]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| size | blocks | logs | bare fetch s | agentindex s | events/s | blocks/s | peak RSS MiB | db MiB | vs limit | Ponder s | Ponder events/s | Ponder RSS MiB | vs Ponder |"
    );
    let _ = writeln!(
        out,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for f in all {
        let secs = f.index.elapsed.as_secs_f64();
        let rate = f.index.events as f64 / secs;
        let limit = f.logs as f64 / f.bare_secs;
        let (ponder_secs, ponder_rate, ponder_rss, versus) = match &f.ponder {
            Some(p) => {
                let prate = p.events as f64 / p.elapsed.as_secs_f64();
                (
                    format!("{:.2}", p.elapsed.as_secs_f64()),
                    format!("{prate:.0}"),
                    format!("{:.0}", mib(p.peak_kib)),
                    format!("{:.1}x", rate / prate),
                )
            }
            None => ("–".into(), "–".into(), "–".into(), "–".into()),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2} | {:.2} | {:.0} | {:.0} | {:.1} | {:.1} | {:.2} | {} | {} | {} | {} |",
            f.size,
            f.blocks,
            f.logs,
            f.bare_secs,
            secs,
            rate,
            f.blocks as f64 / secs,
            mib(f.index.peak_kib),
            f.index.db_bytes as f64 / (1024.0 * 1024.0),
            rate / limit,
            ponder_secs,
            ponder_rate,
            ponder_rss,
            versus
        );
    }
    out
}
