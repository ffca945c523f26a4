//! Masumi benchmark (issue #35): the Cardano follower syncing Masumi's registry and payment
//! contract from the Blockfrost emulator (`tools/cardano/`, a chain built with pycardano; no
//! Cardano node runs here), 10,000 registry entries and 100,000 escrow payments by default, at
//! the provider's request budget.
//!
//! The emulator builds the chain in bulk (agents minted ten to a transaction under registry V2,
//! in the three metadata shapes; payments locked and settled in batches: 80% released, 10%
//! refunded, 10% disputed) and enforces the budget itself, answering 429 past it, as Blockfrost
//! does. The real `agentindex index --exit-when-synced --no-documents` binary then syncs from an
//! empty database with `requests_per_second` and `burst` set to that budget. Reported: the
//! chain's size, the requests by route, the 429s the provider had to send, wall time, peak
//! resident memory, and what was indexed (every agent and escrow, each outcome). The baseline is
//! measured in the same run: the least time the budget allows for the requests made (requests
//! over the budget); the ratio says how close to the budget the sync ran.
//!
//! Run with `scripts/bench-masumi` (or `cargo run --release --example masumi_bench -- [agents]
//! [payments]` with the release binary built and the tools installed). `MASUMI_BUDGET` sets the
//! budget in requests a second (500: a self-hosted or paid Blockfrost-compatible endpoint; the
//! free plan's 10 would take hours at this size).

#[path = "support/process_use.rs"]
mod process_use;

use agentindex_contracts::tied::TiedCommand;
use anyhow::Context;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let agents: u64 = args.get(1).map_or(Ok(10_000), |a| a.parse())?;
    let payments: u64 = args.get(2).map_or(Ok(100_000), |a| a.parse())?;
    let budget: u64 = std::env::var("MASUMI_BUDGET").map_or(Ok(500), |b| b.parse())?;
    anyhow::ensure!(
        agents > 0 && payments.is_multiple_of(agents),
        "payments must be a multiple of agents"
    );
    let binary = std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| {
        repo()
            .join("target/release/agentindex")
            .display()
            .to_string()
    });

    // The emulator, tied to this process through its stdin: it exits when the pipe closes.
    let mut emulator = std::process::Command::new(repo().join("tools/.venv/bin/python"))
        .arg(repo().join("tools/cardano/blockfrost_emulator.py"))
        .args(["--network", "preprod", "--project-id", "bench"])
        .args([
            "--rate",
            &budget.to_string(),
            "--burst",
            &budget.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting the Blockfrost emulator (run scripts/install-tools)")?;
    let _stdin = emulator.stdin.take();
    let mut port = String::new();
    BufReader::new(emulator.stdout.take().context("its stdout")?).read_line(&mut port)?;
    let base = format!("http://127.0.0.1:{}", port.trim());
    let client = reqwest::Client::new();
    let control = |path: &str, body: Value| {
        let request = client.post(format!("{base}/_emulator/{path}")).json(&body);
        async move {
            let answer: Value = request.send().await?.error_for_status()?.json().await?;
            anyhow::Ok(answer)
        }
    };

    let building = Instant::now();
    let built = control(
        "bulk",
        json!({"agents": agents, "payments_per_agent": payments / agents, "txs_per_block": 100}),
    )
    .await?;
    let build_time = building.elapsed();
    let info: Value = client
        .get(format!("{base}/_emulator/info"))
        .send()
        .await?
        .json()
        .await?;
    control("stats/reset", json!({})).await?;

    let dir = tempfile::tempdir()?;
    let db = dir.path().join("masumi.db");
    let config = dir.path().join("masumi.toml");
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"sqlite://{db}\"\n[[cardano]]\nnetwork = \"preprod\"\nblockfrost_url = \"{base}\"\nproject_id = \"bench\"\nrequests_per_second = {budget}\nburst = {budget}\npoll_interval_ms = 100\n[cardano.masumi]\nregistry_v1 = \"{v1}\"\nregistry_v2 = \"{v2}\"\nescrow_v1 = \"{e1}\"\nescrow_v2 = \"{e2}\"\n",
            db = db.display(),
            v1 = info["policy_ids"]["v1"].as_str().context("v1 policy")?,
            v2 = info["policy_ids"]["v2"].as_str().context("v2 policy")?,
            e1 = info["escrow"]["v1"]["address"]
                .as_str()
                .context("v1 escrow")?,
            e2 = info["escrow"]["v2"]["address"]
                .as_str()
                .context("v2 escrow")?,
        ),
    )?;

    let started = Instant::now();
    let mut tied = TiedCommand::new(&binary, Duration::from_secs(5));
    tied.command()
        .args(["index", "--exit-when-synced", "--no-documents", "--config"])
        .arg(&config)
        .env(
            "RUST_LOG",
            std::env::var("BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        );
    let mut child = tied.spawn()?;
    let pid = child.id();
    let mut peak_kib = 0;
    let status = loop {
        if let Some(status) = child.child().try_wait()? {
            break status;
        }
        peak_kib = peak_kib.max(process_use::memory_kib(pid, "VmHWM:").unwrap_or(0));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let sync_time = started.elapsed();
    anyhow::ensure!(status.success(), "{binary} index failed: {status}");
    let stats: Value = client
        .get(format!("{base}/_emulator/stats"))
        .send()
        .await?
        .json()
        .await?;

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await?;
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { anyhow::Ok(sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await?) }
    };
    let indexed_agents = count("SELECT count(*) FROM agents WHERE source = 'masumi'").await?;
    let escrows = count("SELECT count(*) FROM masumi_payments").await?;
    let released = count("SELECT count(*) FROM masumi_payments WHERE outcome = 'released'").await?;
    let refunded = count("SELECT count(*) FROM masumi_payments WHERE outcome = 'refunded'").await?;
    let disputed = count("SELECT count(*) FROM masumi_payments WHERE outcome = 'disputed'").await?;
    let scored = count("SELECT count(*) FROM agent_reputation WHERE payment_count > 0").await?;
    pool.close().await;
    anyhow::ensure!(
        indexed_agents as u64 == agents,
        "{indexed_agents} agents indexed of {agents}"
    );
    anyhow::ensure!(
        escrows as u64 == payments,
        "{escrows} escrows indexed of {payments}"
    );

    let requests = stats["requests"].as_u64().unwrap_or(0);
    let floor = requests as f64 / budget as f64;
    let seconds = sync_time.as_secs_f64();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "### Masumi on Cardano: {agents} registry entries, {payments} escrow payments\n"
    )?;
    writeln!(
        out,
        "Chain (built by the emulator with pycardano in {:.0} s): {} blocks, {} transactions.\n",
        build_time.as_secs_f64(),
        built["blocks"],
        built["txs"],
    )?;
    writeln!(out, "| | figure |\n|---|---|")?;
    writeln!(out, "| provider budget | {budget} requests/s |")?;
    writeln!(out, "| requests | {requests} |")?;
    writeln!(
        out,
        "| answered 429 (over the budget) | {} |",
        stats["errors_served"]["429"].as_u64().unwrap_or(0)
    )?;
    writeln!(out, "| sync time | {seconds:.1} s |")?;
    writeln!(
        out,
        "| least time the budget allows (baseline) | {floor:.1} s |"
    )?;
    writeln!(
        out,
        "| ratio sync / baseline | {:.2}x |",
        seconds / floor.max(f64::EPSILON)
    )?;
    writeln!(out, "| agents indexed | {indexed_agents} |")?;
    writeln!(
        out,
        "| escrows indexed | {escrows} ({released} released, {refunded} refunded, {disputed} disputed) |"
    )?;
    writeln!(out, "| agents scored with payments | {scored} |")?;
    writeln!(out, "| peak resident memory | {} MiB |", peak_kib / 1024)?;
    writeln!(out, "\nRequests by route:\n")?;
    writeln!(out, "| route | requests |\n|---|---|")?;
    if let Some(routes) = stats["by_route"].as_object() {
        let mut routes: Vec<_> = routes.iter().collect();
        routes.sort_by_key(|(_, n)| std::cmp::Reverse(n.as_u64().unwrap_or(0)));
        for (route, n) in routes {
            writeln!(out, "| `{route}` | {n} |")?;
        }
    }
    drop(_stdin);
    let _ = emulator.wait();
    Ok(())
}
