//! The agent0 SDK's default page benchmark: 100,000 agents (50,000 ERC-8004 agents with
//! registration files, `support/agents.rs`, and the event of each registration, which a
//! registration file's id is read from) served by the real `agentindex serve`, and the
//! pages `searchAgents({})` asks for on the subgraph endpoint (`SearchAgentsV2`, every agent
//! with a registration file, 1,000 a page) timed one request at a time: newest `updatedAt`
//! first as the SDK asks, and by `createdAt` for comparison; beside them the SDK's narrower
//! searches (by name, by owner, by name with a skill and x402) and a bare `/healthz`, measured
//! in the same run. The response cache is kept from answering (it holds nothing), so every
//! request is read from the database. Prints p50 and p99 of each, and each p50 as a multiple of
//! the by-name search's.
//!
//! Run with `scripts/bench-sdk-page` (or `cargo run --release --example sdk_page_bench --
//! [agents] [requests]` after building `agentindex`; `AGENTINDEX_BIN` names another build of
//! the server, or several separated by commas: each serves the same database in turn, and
//! every one must answer every load with the same bytes as the first). `BENCH_POSTGRES=1`
//! fills a PostgreSQL database (on a server started for the run) instead of SQLite;
//! `SDK_PAGE_BENCH_DB` names the database to fill and keep (a `sqlite://` or `postgres://` URL,
//! to look at plans afterwards); a kept database that already holds the agents is served again
//! as it is.

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;
#[allow(dead_code)]
#[path = "../tests/support/postgres.rs"]
mod postgres;
#[path = "support/serve_process.rs"]
mod serve_process;

use agentindex_indexer::store::Dialect;
use serde_json::{Value, json};
use sqlx::any::AnyPoolOptions;
use sqlx::{Any, QueryBuilder};
use std::process::Stdio;
use std::time::Instant;

/// Requests sent to each load before it is measured (faulting in the pages they read).
const WARM_UP: usize = 2;

/// One kind of request: the paths it sends, one after another, round the list.
struct Load {
    name: &'static str,
    paths: Vec<String>,
}

/// What one load measured, in milliseconds.
struct Measured {
    name: &'static str,
    p50: f64,
    p99: f64,
    /// Agents in the last answer (none for `/healthz`).
    agents: usize,
    /// The last answer's body.
    body: Vec<u8>,
}

/// The SDK's search document in the subgraph endpoint's URL with `filter` as its `where`, a
/// page of 1,000 by `order`, newest first.
fn sdk_page(filter: Value, order: &str) -> String {
    let variables = json!({
        "where": filter, "first": 1000, "skip": 0, "orderBy": order, "orderDirection": "desc"
    });
    let mut url = url::Url::parse("http://x/").expect("a fixed URL parses");
    url.query_pairs_mut()
        .append_pair("query", api_loads::SDK_SEARCH)
        .append_pair("variables", &variables.to_string());
    format!(
        "/subgraphs/name/agent0/{}?{}",
        agents::CHAIN,
        url.query().unwrap_or_default()
    )
}

/// The loads, `requests` distinct paths each for the narrower searches (ERC-8004 agents are the
/// even ones of `count`).
fn loads(count: usize, requests: usize) -> Vec<Load> {
    let files = || json!({ "registrationFile_not": null });
    let agent = |k: usize| (1_000 + 2 * 997 * k) % count.max(2) / 2 * 2;
    let distinct = |path: &dyn Fn(usize) -> String| (0..requests + WARM_UP).map(path).collect();
    vec![
        Load {
            name: "bare GET /healthz",
            paths: vec!["/healthz".into()],
        },
        Load {
            name: "SDK search by name (baseline)",
            paths: distinct(&|k| {
                api_loads::sdk_search(json!({
                    "registrationFile_not": null,
                    "registrationFile_": { "name_contains_nocase": format!("agent {}", agent(k)) }
                }))
            }),
        },
        Load {
            name: "SDK search by owner",
            paths: distinct(&|k| {
                let owner = format!("{:#x}", agents::owner(agent(k)));
                api_loads::sdk_search(json!({ "registrationFile_not": null, "owner_in": [owner] }))
            }),
        },
        Load {
            name: "SDK search name+skill+x402",
            paths: distinct(&|k| {
                let n = agent(k);
                let skill = agents::WORDS[n % agents::WORDS.len()];
                api_loads::sdk_search(json!({ "and": [
                    { "registrationFile_not": null,
                      "registrationFile_": { "name_contains_nocase": format!("agent {}", n / 10), "x402Support": true } },
                    { "or": [ { "registrationFile_": { "a2aSkills_contains": [skill] } } ] }
                ]}))
            }),
        },
        Load {
            name: "SDK default page, updatedAt desc",
            paths: vec![sdk_page(files(), "updatedAt")],
        },
        Load {
            name: "SDK default page, createdAt desc",
            paths: vec![sdk_page(files(), "createdAt")],
        },
    ]
}

/// Sends `load` one request at a time: [`WARM_UP`] requests, then `requests` timed, each
/// answered 200 (and, on the subgraph endpoint, with data and no errors).
async fn measure(
    client: &reqwest::Client,
    base: &str,
    load: &Load,
    requests: usize,
) -> anyhow::Result<Measured> {
    let mut times = Vec::with_capacity(requests);
    let mut agents = 0;
    let mut last = Vec::new();
    for k in 0..WARM_UP + requests {
        let path = &load.paths[k % load.paths.len()];
        let started = Instant::now();
        let response = client.get(format!("{base}{path}")).send().await?;
        let status = response.status();
        let body = response.bytes().await?;
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        anyhow::ensure!(status == 200, "{}: answered {status}", load.name);
        if path.starts_with("/subgraphs/") {
            let answer: Value = serde_json::from_slice(&body)?;
            let Some(page) = answer["data"]["agents"].as_array() else {
                anyhow::bail!("{}: no agents in {answer}", load.name);
            };
            agents = page.len();
        }
        if k >= WARM_UP {
            times.push(elapsed);
        }
        last = body.to_vec();
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((p * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1];
    Ok(Measured {
        name: load.name,
        p50: at(0.50),
        p99: at(0.99),
        agents,
        body: last,
    })
}

/// Prints what each load measured against `binary`, and each p50 as a multiple of the by-name
/// search's.
fn print_results(binary: &str, requests: usize, results: &[Measured]) {
    println!("served by {binary}");
    let baseline = results[1].p50;
    println!(
        "{:<36} {:>8} {:>8} {:>10} {:>10} {:>12}",
        "load", "requests", "agents", "p50 ms", "p99 ms", "p50 vs name"
    );
    for m in results {
        println!(
            "{:<36} {requests:>8} {:>8} {:>10.2} {:>10.2} {:>11.2}x",
            m.name,
            m.agents,
            m.p50,
            m.p99,
            m.p50 / baseline
        );
    }
}

/// Writes the event of every identity registration that has none, and returns how many it
/// wrote: `support/agents.rs` writes one event a block (at log 0) and each registration at a
/// log of its own. A registration file's id is its registration's transaction hash and URI;
/// without the event SQLite answers the hash empty, and PostgreSQL the whole file null.
async fn registration_events(url: &str) -> anyhow::Result<u64> {
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await?;
    let mut conn = pool.acquire().await?;
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp,
           tx_hash, address, source, topics, data)
         SELECT r.chain_id, r.block_number, r.log_index, ",
    );
    q.push_bind(vec![0u8; 32])
        .push(", r.timestamp, ")
        .push_bind(vec![0xabu8; 32])
        .push(", ")
        .push_bind(vec![0u8; 20])
        .push(", 'bench', ")
        .push_bind(Vec::<u8>::new())
        .push(", ")
        .push_bind(Vec::<u8>::new())
        .push(
            " FROM identity_registrations r WHERE NOT EXISTS (SELECT 1 FROM events e
               WHERE e.chain_id = r.chain_id AND e.block_number = r.block_number
                 AND e.log_index = r.log_index)",
        );
    let written = Dialect::of(&conn)
        .portable(q)
        .build()
        .execute(&mut *conn)
        .await?
        .rows_affected();
    drop(conn);
    pool.close().await;
    Ok(written)
}

/// The agents a kept database (`SDK_PAGE_BENCH_DB`) already holds from an earlier run, served
/// again without filling it; 0 for a new one (or one the query cannot read).
async fn already_filled(url: &str) -> i64 {
    agentindex_indexer::store::install_drivers();
    let Ok(pool) = AnyPoolOptions::new().max_connections(1).connect(url).await else {
        return 0;
    };
    let count = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM agents")
        .fetch_one(&pool)
        .await
        .unwrap_or(0);
    pool.close().await;
    count
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let count = args.next().transpose()?.unwrap_or(100_000);
    let requests = args.next().transpose()?.unwrap_or(20).max(1);
    let binaries =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let dir = tempfile::tempdir()?;
    let url = match std::env::var("SDK_PAGE_BENCH_DB") {
        Ok(url) => url,
        Err(_) if std::env::var_os("BENCH_POSTGRES").is_some() => {
            postgres::server().fresh_database()
        }
        Err(_) => format!("sqlite://{}", dir.path().join("sdk.db").display()),
    };
    let started = Instant::now();
    let filled = already_filled(&url).await;
    if filled > 0 {
        anyhow::ensure!(
            filled == count as i64,
            "{url} holds {filled} agents, not {count}: name a new database to fill"
        );
    } else {
        let (store, _keys) = agents::open_filled(&url, count, true).await?;
        store.close().await;
    }
    let events = registration_events(&url).await?;
    if (filled == 0 || events > 0) && url.starts_with("postgres") {
        // The statistics the writer's ANALYZEs leave behind on an index it wrote.
        let pool = AnyPoolOptions::new()
            .max_connections(1)
            .connect(&url)
            .await?;
        sqlx::query("VACUUM ANALYZE").execute(&pool).await?;
        pool.close().await;
    }
    println!(
        "loaded {count} agents with registration files into {} in {:.1} s",
        url.split(':').next().unwrap_or_default(),
        started.elapsed().as_secs_f64()
    );

    // The shipped server with no rate limit the loads reach and a response cache too small
    // to keep any answer.
    let config = dir.path().join("serve.toml");
    let toml = api_loads::serve_config(&url) + "\n[api.caches]\nresponse_cache_bytes = 1\n";
    std::fs::write(&config, toml)?;
    let client = reqwest::Client::new();
    // Each build in turn, on the same database; every one answers every load with the same
    // bytes.
    let mut first: Option<Vec<Measured>> = None;
    for binary in binaries.split(',') {
        let server = serve_process::start(binary, &config, "error", Stdio::null(), |_| Ok(()))?;
        let mut results = Vec::new();
        for load in loads(count, requests) {
            results.push(measure(&client, &server.base, &load, requests).await?);
        }
        drop(server);
        print_results(binary, requests, &results);
        match &first {
            Some(first) => {
                for (theirs, ours) in first.iter().zip(&results) {
                    anyhow::ensure!(
                        theirs.body == ours.body,
                        "{binary} answers `{}` with other bytes than the first build",
                        ours.name
                    );
                }
            }
            None => first = Some(results),
        }
    }
    Ok(())
}
