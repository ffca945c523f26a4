//! Running Ponder (`bench/ponder`, npm `ponder` with its embedded PGlite) over a benchmark
//! chain: the rows it must end with are counted on the chain first (every log of the registries
//! and the factory, of the agent contracts it created, and USDC transfers into them), then
//! Ponder starts from a fresh database and is timed until its GraphQL counts them all.

#![allow(dead_code)]

use agentindex_contracts::Devnet;
use agentindex_contracts::tied::TiedCommand;
use alloy::primitives::{Address, B256};
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use alloy::sol_types::SolEvent;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one Ponder run took.
pub(crate) struct PonderRun {
    pub(crate) elapsed: Duration,
    pub(crate) peak_kib: u64,
    pub(crate) events: u64,
}

/// Longest a run may take.
const LIMIT: Duration = Duration::from_secs(1_800);

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/ponder")
}

/// Every event Ponder's handlers store, counted on the chain.
async fn expected_events(devnet: &Devnet, agents: &[Address]) -> anyhow::Result<u64> {
    let d = devnet.deployment();
    let head = devnet.block_number().await?;
    let mut total = 0u64;
    let mut from = d.start_block;
    while from <= head {
        let to = head.min(from + 2_000 - 1);
        let range = Filter::new().from_block(from).to_block(to);
        let fixed = [d.identity, d.reputation, d.validation, d.factory];
        total += devnet
            .provider()
            .get_logs(&range.clone().address(fixed.to_vec()))
            .await?
            .len() as u64;
        for chunk in agents.chunks(500) {
            total += devnet
                .provider()
                .get_logs(&range.clone().address(chunk.to_vec()))
                .await?
                .len() as u64;
            let payees: Vec<B256> = chunk.iter().map(|a| a.into_word()).collect();
            let transfers = range
                .clone()
                .address(d.usdc)
                .event_signature(agentindex_contracts::TestUSDC::Transfer::SIGNATURE_HASH)
                .topic2(payees);
            total += devnet.provider().get_logs(&transfers).await?.len() as u64;
        }
        from = to + 1;
    }
    Ok(total)
}

/// The rows Ponder's GraphQL at `base` counts so far.
async fn counted(client: &reqwest::Client, base: &str) -> Option<u64> {
    let answer: serde_json::Value = client
        .post(format!("{base}/graphql"))
        .json(&serde_json::json!({ "query": "{ rawEvents { totalCount } }" }))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    answer["data"]["rawEvents"]["totalCount"].as_u64()
}

/// Runs Ponder over `devnet` (factory children `agents`) until it holds every event.
pub(crate) async fn run(devnet: &Devnet, agents: &[Address]) -> anyhow::Result<PonderRun> {
    run_through(devnet, agents, &devnet.endpoint(), 50, None).await
}

/// [`run`] with Ponder's tables in the PostgreSQL database at `database_url` (its
/// `DATABASE_URL`) instead of its embedded PGlite.
pub(crate) async fn run_on_postgres(
    devnet: &Devnet,
    agents: &[Address],
    database_url: &str,
) -> anyhow::Result<PonderRun> {
    run_through(devnet, agents, &devnet.endpoint(), 50, Some(database_url)).await
}

/// Runs Ponder over `devnet` through the RPC endpoint `rpc` (a provider emulator, say), asking
/// it at most `requests_per_second`, until it holds every event.
pub(crate) async fn run_through(
    devnet: &Devnet,
    agents: &[Address],
    rpc: &str,
    requests_per_second: u32,
    database_url: Option<&str>,
) -> anyhow::Result<PonderRun> {
    let project = project();
    let ponder = project.join("node_modules/.bin/ponder");
    anyhow::ensure!(
        ponder.exists(),
        "Ponder is not installed in {}; run scripts/bench-compare",
        project.display()
    );
    anyhow::ensure!(
        Command::new("node")
            .arg("gen-abis.mjs")
            .current_dir(&project)
            .status()?
            .success(),
        "generating Ponder's ABIs"
    );
    let expected = expected_events(devnet, agents).await?;
    let _ = std::fs::remove_dir_all(project.join(".ponder"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let d = devnet.deployment();
    let started = Instant::now();
    // Tied to this process: a benchmark stopped midway leaves no Ponder running.
    let mut tied = TiedCommand::new(&ponder, Duration::from_secs(5));
    let command = tied.command();
    if let Some(url) = database_url {
        command.env("DATABASE_URL", url);
    }
    command
        .args(["start", "--schema", "public", "--port", &port.to_string()])
        .current_dir(&project)
        .env("PONDER_TELEMETRY_DISABLED", "true")
        .env("BENCH_RPC", rpc)
        .env("BENCH_MAX_RPS", requests_per_second.to_string())
        .env("BENCH_CHAIN_ID", devnet.chain_id().to_string())
        .env("BENCH_START_BLOCK", d.start_block.to_string())
        .env("BENCH_IDENTITY", format!("{:#x}", d.identity))
        .env("BENCH_REPUTATION", format!("{:#x}", d.reputation))
        .env("BENCH_VALIDATION", format!("{:#x}", d.validation))
        .env("BENCH_FACTORY", format!("{:#x}", d.factory))
        .env("BENCH_USDC", format!("{:#x}", d.usdc))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = tied.spawn()?;
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let mut peak_kib = 0u64;
    let mut last = 0;
    let outcome = loop {
        if let Some(status) = child.child().try_wait()? {
            break Err(anyhow::anyhow!("ponder exited early: {status}"));
        }
        if started.elapsed() > LIMIT {
            break Err(anyhow::anyhow!(
                "ponder held {last} of {expected} events after {LIMIT:?}"
            ));
        }
        peak_kib = peak_kib.max(crate::memory::peak_kib(&child.id().to_string()).unwrap_or(0));
        if let Some(count) = counted(&client, &base).await {
            last = count;
            if count >= expected {
                break Ok(started.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Its output is read to the end once it is stopped (SIGTERM, then SIGKILL).
    let _ = child.child().kill();
    let output = child.wait_with_output()?;
    let elapsed = outcome.map_err(|e| {
        let log = String::from_utf8_lossy(&output.stdout).to_string()
            + &String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        anyhow::anyhow!(
            "{e}; its last lines:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )
    })?;
    Ok(PonderRun {
        elapsed,
        peak_kib,
        events: expected,
    })
}
