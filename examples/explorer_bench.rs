//! Explorer benchmark: 100,000 agents (with profiles, skills, search rows, payments and scores)
//! served by the API in this process, and the explorer's pages loaded in Debian's headless
//! Chromium (`tools/explorer/pageload.mjs`, playwright-core) from a warm server: the search
//! page, a filtered and a full-text search, an agent's page and the ecosystem page, each
//! timed from navigation until its data is shown, beside a bare navigation to `/healthz` in the
//! same browser and run. Prints the bytes the explorer and GraphiQL embed in the binary too.
//!
//! Run with `scripts/bench-explorer` (or `cargo run --release --example explorer_bench --
//! [agents] [rounds]` after `scripts/install-tools`).

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;

use agentindex_api::explorer;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Slowest a page may take to show its data, from the issue that asked for the explorer.
const TARGET_MS: f64 = 500.0;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let count = args.next().transpose()?.unwrap_or(100_000);
    let rounds = args.next().transpose()?.unwrap_or(20);

    // `EXPLORER_BENCH_DB` keeps the loaded database at that path (to look at plans afterwards).
    let dir = tempfile::tempdir()?;
    let db = std::env::var_os("EXPLORER_BENCH_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("explorer.db"));
    let url = format!("sqlite://{}", db.display());
    let started = Instant::now();
    let (store, keys) = agents::open_filled(&url, count, true).await?;
    agents::score(&store, &keys).await?;
    println!(
        "loaded {count} agents with profiles, skills, search rows and scores in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let own = explorer::own_bytes();
    let vendor = explorer::vendor_bytes();
    println!(
        "embedded: the explorer's own files {:.1} KB, GraphiQL and graphql-ws (gzipped) {:.1} KB, together {:.1} KB of the 1,000 KB budget",
        own as f64 / 1e3,
        vendor as f64 / 1e3,
        (own + vendor) as f64 / 1e3
    );

    let server = api_loads::InProcess::start(&store, &url).await?;
    let base = server.base.clone();

    // The agent shown is a paid one from the middle of the index.
    let agent = &keys[keys.len() / 2];
    let measured = tokio::task::spawn_blocking({
        let input = json!({ "base": base, "agent": agent, "rounds": rounds });
        move || page_loads(&input)
    })
    .await??;

    let baseline = &measured["baseline"];
    let bare = baseline["median_ms"].as_f64().unwrap_or(f64::NAN);
    println!(
        "{:<40} {:>9} {:>9} {:>9} {:>9} {:>12}",
        "page (warm server)", "first ms", "p50 ms", "p95 ms", "max ms", "p50 / bare"
    );
    println!(
        "{:<40} {:>9} {:>9.1} {:>9.1} {:>9.1} {:>12}",
        "bare navigation to /healthz (baseline)",
        "",
        bare,
        baseline["p95_ms"].as_f64().unwrap_or(f64::NAN),
        baseline["max_ms"].as_f64().unwrap_or(f64::NAN),
        "1.0x"
    );
    let mut slowest: f64 = 0.0;
    for page in measured["pages"].as_array().into_iter().flatten() {
        let number = |key: &str| page[key].as_f64().unwrap_or(f64::NAN);
        slowest = slowest.max(number("p95_ms")).max(number("first_ms"));
        println!(
            "{:<40} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>11.1}x",
            page["name"].as_str().unwrap_or("?"),
            number("first_ms"),
            number("median_ms"),
            number("p95_ms"),
            number("max_ms"),
            number("median_ms") / bare
        );
    }
    println!(
        "slowest page (first load or p95): {slowest:.1} ms; target under {TARGET_MS:.0} ms: {}",
        if slowest < TARGET_MS {
            "met"
        } else {
            "NOT met"
        }
    );

    server.stop().await?;
    Ok(())
}

/// Runs `tools/explorer/pageload.mjs` with `input` and returns what it measured.
fn page_loads(input: &Value) -> anyhow::Result<Value> {
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let mut child = Command::new("node")
        .arg("explorer/pageload.mjs")
        .current_dir(&tools)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| anyhow::anyhow!("starting node (run scripts/install-tools): {e}"))?;
    child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("node's stdin"))?
        .write_all(input.to_string().as_bytes())?;
    let output = child.wait_with_output()?;
    anyhow::ensure!(output.status.success(), "pageload.mjs failed");
    Ok(serde_json::from_slice(&output.stdout)?)
}
