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
//! [seconds]` with `oha` on the PATH or in `OHA`).

#[path = "support/agents.rs"]
mod agents;

use agentindex_api::ApiState;
use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use agents::{CHAIN, fill, rules};
use rand::seq::SliceRandom;
use serde_json::Value;
use sqlx::any::AnyPoolOptions;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// One load to measure.
struct Load {
    name: &'static str,
    /// Paths (with query strings) oha picks from; one path is a repeated request.
    paths: Vec<String>,
    /// Fixed requests/s, or as fast as the connections go.
    rate: Option<u32>,
}

/// `/graphql?query=…`: a GraphQL query sent in the URL.
fn in_url(query: &str) -> String {
    let mut url = url::Url::parse("http://x/graphql").expect("a fixed URL parses");
    url.query_pairs_mut().append_pair("query", query);
    format!("/graphql?{}", url.query().unwrap_or_default())
}

/// Filtered searches: every skill word with and without x402, a range of minimum scores and
/// page sizes, in random order.
fn filtered_searches(rng: &mut impl rand::Rng) -> Vec<String> {
    let mut paths = Vec::new();
    for skill in agents::WORDS {
        for x402 in ["true", "false"] {
            for min in [0, 10, 20, 25, 30, 35, 40] {
                for first in 5..=40 {
                    paths.push(in_url(&format!(
                        "{{ agents(filter: {{ skill: \"{skill}\", x402: {x402}, minReputation: {min} }}, \
                         orderBy: REPUTATION, first: {first}) {{ edges {{ node {{ id name reputation {{ score }} }} }} }} }}"
                    )));
                }
            }
        }
    }
    paths.shuffle(rng);
    paths
}

/// Full-text searches: a skill word and a tag, each page size, in random order.
fn text_searches(rng: &mut impl rand::Rng) -> Vec<String> {
    let mut paths = Vec::new();
    for word in agents::WORDS {
        for tag in 0..50 {
            for first in 5..=20 {
                paths.push(in_url(&format!(
                    "{{ agents(search: \"{word} tag{tag}\", first: {first}) {{ edges {{ node {{ id name skills {{ id }} }} }} }} }}"
                )));
            }
        }
    }
    paths.shuffle(rng);
    paths
}

/// The best-reputed agents with a tag, each tag and page size, in random order.
fn reputation_pages(rng: &mut impl rand::Rng) -> Vec<String> {
    let mut paths = Vec::new();
    let tags = agents::WORDS
        .iter()
        .map(|word| word.to_string())
        .chain((0..50).map(|n| format!("tag{n}")));
    for tag in tags {
        for first in 1..=100 {
            paths.push(in_url(&format!(
                "{{ agents(filter: {{ tags: [\"{tag}\"] }}, orderBy: REPUTATION, first: {first}) {{ edges {{ node {{ id reputation {{ score paymentCount uniquePayers }} }} }} }} }}"
            )));
        }
    }
    paths.shuffle(rng);
    paths
}

/// The agent0 TypeScript SDK's search document (`SubgraphClient.searchAgentsV2`, agent0-sdk
/// 1.7.1), as it sends it to a subgraph.
const SDK_SEARCH: &str = "query SearchAgentsV2($where: Agent_filter $first: Int! $skip: Int! $orderBy: Agent_orderBy! $orderDirection: OrderDirection!) { agents(where: $where, first: $first, skip: $skip, orderBy: $orderBy, orderDirection: $orderDirection) { id chainId agentId owner operators agentURI agentURIType agentWallet createdAt updatedAt totalFeedback lastActivity registrationFile { id agentId name description image active x402Support supportedTrusts mcpEndpoint mcpVersion a2aEndpoint a2aVersion webEndpoint emailEndpoint hasOASF oasfSkills oasfDomains ens did mcpTools mcpPrompts mcpResources a2aSkills } } }";

/// The SDK's search in the URL of the subgraph endpoint, with the variables the SDK builds for
/// `filter` (its `where`), newest first, a page of 1,000 as the SDK asks.
fn sdk_search(filter: serde_json::Value) -> String {
    let variables = serde_json::json!({
        "where": filter, "first": 1000, "skip": 0, "orderBy": "updatedAt", "orderDirection": "desc"
    });
    let mut url = url::Url::parse("http://x/").expect("a fixed URL parses");
    url.query_pairs_mut()
        .append_pair("query", SDK_SEARCH)
        .append_pair("variables", &variables.to_string());
    format!(
        "/subgraphs/name/agent0/{CHAIN}?{}",
        url.query().unwrap_or_default()
    )
}

/// SDK searches as `searchAgents` builds them: by name (`{name: "agent 1234"}`), by owner, and
/// by name with a skill and x402, over every ERC-8004 agent, in random order.
fn sdk_searches(count: usize, rng: &mut impl rand::Rng) -> Vec<String> {
    let mut paths = Vec::new();
    for n in (1_000..count).step_by(2).take(4_000) {
        paths.push(sdk_search(serde_json::json!({
            "registrationFile_not": null,
            "registrationFile_": { "name_contains_nocase": format!("agent {n}") }
        })));
        let owner = format!("{:#x}", agents::owner(n));
        paths.push(sdk_search(serde_json::json!({
            "registrationFile_not": null, "owner_in": [owner]
        })));
        let skill = agents::WORDS[n % agents::WORDS.len()];
        paths.push(sdk_search(serde_json::json!({ "and": [
            { "registrationFile_not": null,
              "registrationFile_": { "name_contains_nocase": format!("agent {}", n / 10), "x402Support": true } },
            { "or": [ { "registrationFile_": { "a2aSkills_contains": [skill] } } ] }
        ]})));
    }
    paths.shuffle(rng);
    paths
}

/// Runs `oha` for `seconds` on `paths` (one, or a list it draws from) at the load's rate.
fn run_oha(
    oha: &str,
    base: &str,
    dir: &std::path::Path,
    load: &Load,
    paths: &[String],
    seconds: usize,
) -> anyhow::Result<std::process::Output> {
    let mut command = Command::new(oha);
    command.args([
        "--no-tui",
        "--output-format",
        "json",
        "-z",
        &format!("{seconds}s"),
        "-c",
        if load.rate.is_some() { "32" } else { "16" },
    ]);
    if let Some(rate) = load.rate {
        command.args(["-q", &rate.to_string()]);
    }
    if let [path] = paths {
        command.arg(format!("{base}{path}"));
    } else {
        let list = dir.join("urls.txt");
        let mut text = String::new();
        for path in paths {
            text.push_str(base);
            text.push_str(path);
            text.push('\n');
        }
        std::fs::write(&list, text)?;
        command.arg("--urls-from-file").arg(&list);
    }
    let output = command.output()?;
    anyhow::ensure!(
        output.status.success(),
        "oha failed for {}: {}",
        load.name,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(output)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let count = args.next().transpose()?.unwrap_or(100_000);
    let seconds = args.next().transpose()?.unwrap_or(10);
    let oha = std::env::var("OHA").unwrap_or_else(|_| "oha".into());

    // `API_BENCH_DB` keeps the loaded database at that path (to look at plans afterwards).
    let dir = tempfile::tempdir()?;
    let db = std::env::var_os("API_BENCH_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("api.db"));
    let url = format!("sqlite://{}", db.display());
    let store = Store::open(&url).await?;
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await?;
    let started = Instant::now();
    let keys = fill(&pool, count, true).await?;
    pool.close().await;
    store
        .writer(4)
        .rescore(Arc::new(agents::chain_context(rules())), keys.clone())
        .await?;
    println!(
        "loaded {count} agents with profiles, skills, search rows and scores in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let toml = format!(
        r#"
[database]
url = "{url}"

[api]
requests_per_minute_per_client = 100000000
client_burst = 1000000

[[chains]]
name = "bench"
chain_id = {CHAIN}
rpc = ["http://127.0.0.1:9"]
"#
    );
    let config = Config::from_toml_and_env(&toml, std::path::Path::new("bench.toml"), Vec::new())?;
    let (stop, shutdown) = watch::channel(false);
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let serving = tokio::spawn(agentindex_api::serve(
        ApiState::new(store.clone(), &config),
        "127.0.0.1:0".parse()?,
        shutdown,
        move |address| {
            let _ = bound_tx.send(address);
        },
    ));
    let base = format!("http://{}", bound_rx.await?);

    let mut rng = rand::rng();
    let mut ids: Vec<String> = keys
        .iter()
        .map(|key| {
            in_url(&format!(
                "{{ agent(id: \"{key}\") {{ id name owner reputation {{ score paymentCount }} }} }}"
            ))
        })
        .collect();
    ids.shuffle(&mut rng);
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
            paths: filtered_searches(&mut rng),
            rate: Some(500),
        },
        Load {
            name: "full-text search @500/s",
            paths: text_searches(&mut rng),
            rate: Some(500),
        },
        Load {
            name: "reputation order @500/s",
            paths: reputation_pages(&mut rng),
            rate: Some(500),
        },
        Load {
            name: "agent0 SDK search @500/s",
            paths: sdk_searches(count, &mut rng),
            rate: Some(500),
        },
        Load {
            name: "one search repeated (cached)",
            paths: vec![repeated],
            rate: None,
        },
    ];
    let mut results = Vec::new();
    // `API_BENCH_ONLY=text` measures only the loads whose name contains it (and the baseline).
    let only = std::env::var("API_BENCH_ONLY").unwrap_or_default();
    for load in loads
        .iter()
        .enumerate()
        .filter(|(i, load)| *i == 0 || load.name.contains(&only))
        .map(|(_, load)| load)
    {
        // A varied load first runs two seconds on a fifth of its queries (faulting in the
        // pages it reads), then is measured on the rest, which the warm-up has not cached.
        let measured = match load.paths.as_slice() {
            [_] => &load.paths[..],
            paths => {
                let (warm, rest) = paths.split_at(paths.len() / 5);
                run_oha(&oha, &base, dir.path(), load, warm, 2)?;
                rest
            }
        };
        let output = run_oha(&oha, &base, dir.path(), load, measured, seconds)?;
        let report: Value = serde_json::from_slice(&output.stdout)?;
        let statuses = &report["statusCodeDistribution"];
        anyhow::ensure!(
            statuses
                .as_object()
                .is_some_and(|s| s.keys().all(|k| k == "200")),
            "{}: answers other than 200: {statuses}",
            load.name
        );
        let ms = |p: &str| report["latencyPercentiles"][p].as_f64().unwrap_or(f64::NAN) * 1e3;
        results.push((
            load.name,
            report["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
            ms("p50"),
            ms("p99"),
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
    stop.send(true)?;
    serving.await??;
    Ok(())
}
