//! The API benchmarks' loads: GraphQL questions of each kind over the synthetic agents of
//! `agents.rs` (which the including bench declares as `agents`), thousands of distinct URLs per
//! kind so the response cache rarely answers, and `oha` (crates.io) to send them and report
//! throughput and latency.

#![allow(dead_code)]

use super::agents;
use agentindex_contracts::tied::{TiedChild, TiedCommand};
use rand::seq::SliceRandom;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// One load to measure.
pub(crate) struct Load {
    pub(crate) name: &'static str,
    /// Paths (with query strings) oha picks from; one path is a repeated request.
    pub(crate) paths: Vec<String>,
    /// Fixed requests/s, or as fast as the connections go.
    pub(crate) rate: Option<u32>,
}

/// `/graphql?query=…`: a GraphQL query sent in the URL.
pub(crate) fn in_url(query: &str) -> String {
    let mut url = url::Url::parse("http://x/graphql").expect("a fixed URL parses");
    url.query_pairs_mut().append_pair("query", query);
    format!("/graphql?{}", url.query().unwrap_or_default())
}

/// Filtered searches: every skill word with and without x402, a range of minimum scores and
/// page sizes, in random order.
pub(crate) fn filtered_searches(rng: &mut impl rand::Rng) -> Vec<String> {
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
pub(crate) fn text_searches(rng: &mut impl rand::Rng) -> Vec<String> {
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
pub(crate) fn reputation_pages(rng: &mut impl rand::Rng) -> Vec<String> {
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
pub(crate) const SDK_SEARCH: &str = "query SearchAgentsV2($where: Agent_filter $first: Int! $skip: Int! $orderBy: Agent_orderBy! $orderDirection: OrderDirection!) { agents(where: $where, first: $first, skip: $skip, orderBy: $orderBy, orderDirection: $orderDirection) { id chainId agentId owner operators agentURI agentURIType agentWallet createdAt updatedAt totalFeedback lastActivity registrationFile { id agentId name description image active x402Support supportedTrusts mcpEndpoint mcpVersion a2aEndpoint a2aVersion webEndpoint emailEndpoint hasOASF oasfSkills oasfDomains ens did mcpTools mcpPrompts mcpResources a2aSkills } } }";

/// The SDK's search in the URL of the subgraph endpoint, with the variables the SDK builds for
/// `filter` (its `where`), newest first, a page of 1,000 as the SDK asks.
pub(crate) fn sdk_search(filter: serde_json::Value) -> String {
    let variables = serde_json::json!({
        "where": filter, "first": 1000, "skip": 0, "orderBy": "updatedAt", "orderDirection": "desc"
    });
    let mut url = url::Url::parse("http://x/").expect("a fixed URL parses");
    url.query_pairs_mut()
        .append_pair("query", SDK_SEARCH)
        .append_pair("variables", &variables.to_string());
    format!(
        "/subgraphs/name/agent0/{}?{}",
        agents::CHAIN,
        url.query().unwrap_or_default()
    )
}

/// SDK searches as `searchAgents` builds them: by name (`{name: "agent 1234"}`), by owner, and
/// by name with a skill and x402, over every ERC-8004 agent, in random order.
pub(crate) fn sdk_searches(count: usize, rng: &mut impl rand::Rng) -> Vec<String> {
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

/// The configuration the benchmarks serve `database_url` with: any free loopback port, and
/// rate limits (of requests and of the server's time) no load reaches.
pub(crate) fn serve_config(database_url: &str) -> String {
    serve_config_with(
        database_url,
        "requests_per_minute_per_client = 100000000\nclient_burst = 1000000\n\
         server_ms_per_second_per_client = 1000000\nserver_ms_burst_per_client = 1000000000\n\
         low_priority_after_ms_per_client = 1000000000\nlow_priority_above_complexity = 1000000000",
    )
}

/// [`serve_config`] with `api` (lines of `[api]`) in place of its rate limits.
pub(crate) fn serve_config_with(database_url: &str, api: &str) -> String {
    format!(
        r#"
[database]
url = "{database_url}"

[api]
listen = "127.0.0.1:0"
{api}

[[chains]]
name = "bench"
chain_id = {}
rpc = ["http://127.0.0.1:9"]
"#,
        agents::CHAIN
    )
}

/// The API serving `store` in this process, under [`serve_config`] for `database_url`.
pub(crate) struct InProcess {
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    stop: tokio::sync::watch::Sender<bool>,
    serving: tokio::task::JoinHandle<Result<(), agentindex_api::ServeError>>,
}

impl InProcess {
    /// Starts serving on a free loopback port.
    pub(crate) async fn start(
        store: &agentindex_indexer::store::Store,
        database_url: &str,
    ) -> anyhow::Result<Self> {
        let config = agentindex_indexer::config::Config::from_toml_and_env(
            &serve_config(database_url),
            Path::new("bench.toml"),
            Vec::new(),
        )?;
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
        let serving = tokio::spawn(agentindex_api::serve(
            agentindex_api::ApiState::new(store.clone(), &config),
            "127.0.0.1:0".parse()?,
            shutdown,
            move |address| {
                let _ = bound_tx.send(address);
            },
        ));
        let base = format!("http://{}", bound_rx.await?);
        Ok(Self {
            base,
            stop,
            serving,
        })
    }

    /// Stops serving and checks the server ended cleanly.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        self.stop.send(true)?;
        self.serving.await??;
        Ok(())
    }
}

/// Lookups of single agents by id, one per agent of `keys`, in random order.
pub(crate) fn by_id(keys: &[String], rng: &mut impl rand::Rng) -> Vec<String> {
    let mut paths: Vec<String> = keys
        .iter()
        .map(|key| {
            in_url(&format!(
                "{{ agent(id: \"{key}\") {{ id name owner reputation {{ score paymentCount }} }} }}"
            ))
        })
        .collect();
    paths.shuffle(rng);
    paths
}

/// A bench's arguments: the number of agents (100,000) and seconds per load (10), then `oha`
/// from `OHA` (else the PATH).
pub(crate) fn bench_args() -> anyhow::Result<(usize, usize, String)> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let count = args.next().transpose()?.unwrap_or(100_000);
    let seconds = args.next().transpose()?.unwrap_or(10);
    let oha = std::env::var("OHA").unwrap_or_else(|_| "oha".into());
    Ok((count, seconds, oha))
}

/// What one `oha` run measured.
pub(crate) struct Measured {
    pub(crate) requests_per_second: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
}

/// Starts `oha` for `seconds` on `paths` under `base` (one path, or a list it draws from, written
/// to `list`; none: the list [`write_list`] wrote there already) at the load's rate, with
/// `connections` connections, keeping every request's timing (oha's SQLite file; see
/// [`durations_ms`]) in `timeline`, or else in a file of `OHA_TIMELINES=folder` if set.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start_oha(
    oha: &str,
    base: &str,
    list: &Path,
    load: &Load,
    paths: &[String],
    seconds: usize,
    connections: usize,
    timeline: Option<&Path>,
) -> anyhow::Result<TiedChild> {
    let timeline = timeline.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("OHA_TIMELINES").map(|folder| timeline_file(folder.as_ref(), load))
    });
    // Tied to this process: a benchmark stopped midway leaves no load running.
    let mut tied = TiedCommand::new(oha, std::time::Duration::from_secs(1));
    let command = tied.command();
    command.args([
        "--no-tui",
        "--output-format",
        "json",
        "-z",
        &format!("{seconds}s"),
        "-c",
        &connections.to_string(),
    ]);
    if let Some(rate) = load.rate {
        command.args(["-q", &rate.to_string()]);
    }
    if let Some(file) = timeline {
        command.arg("--db-url").arg(file);
    }
    if let [path] = paths {
        command.arg(format!("{base}{path}"));
    } else {
        if !paths.is_empty() {
            write_list(base, paths, list)?;
        }
        command.arg("--urls-from-file").arg(list);
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    tied.spawn()
        .map_err(|e| anyhow::anyhow!("cannot run oha ({oha}): {e}"))
}

/// Where a pass of `load` keeps every request's timing in `folder`: oha's SQLite file, named
/// by the load and the time the pass started.
pub(crate) fn timeline_file(folder: &Path, load: &Load) -> std::path::PathBuf {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let name: String = load
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    folder.join(format!("{started}-{name}.db"))
}

/// Writes `paths` under `base` to `list`, one URL a line, for `oha --urls-from-file`.
pub(crate) fn write_list(base: &str, paths: &[String], list: &Path) -> anyhow::Result<()> {
    let mut text = String::new();
    for path in paths {
        text.push_str(base);
        text.push_str(path);
        text.push('\n');
    }
    std::fs::write(list, text)?;
    Ok(())
}

/// Waits for an `oha` started by [`start_oha`] and reads its report; every answer must be 200.
pub(crate) fn finish_oha(name: &str, child: TiedChild) -> anyhow::Result<Measured> {
    let output = child.wait_with_output()?;
    anyhow::ensure!(
        output.status.success(),
        "oha failed for {name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout)?;
    let statuses = &report["statusCodeDistribution"];
    anyhow::ensure!(
        statuses
            .as_object()
            .is_some_and(|s| !s.is_empty() && s.keys().all(|k| k == "200")),
        "{name}: answers other than 200: {statuses}"
    );
    // Requests that got no answer at all (refused, reset, timed out) are not status codes;
    // those still in flight when the run's time is up are cut off by oha, not failed.
    let errors = &report["errorDistribution"];
    let unanswered = errors.as_object().is_some_and(|e| {
        e.keys()
            .any(|error| !error.contains("aborted due to deadline"))
    });
    anyhow::ensure!(!unanswered, "{name}: requests without an answer: {errors}");
    let ms = |p: &str| report["latencyPercentiles"][p].as_f64().unwrap_or(f64::NAN) * 1e3;
    Ok(Measured {
        requests_per_second: report["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
        p50_ms: ms("p50"),
        p99_ms: ms("p99"),
    })
}

/// Every answered request's time in milliseconds, from the timeline oha kept in `file` (see
/// [`start_oha`]).
pub(crate) async fn durations_ms(file: &Path) -> anyhow::Result<Vec<f64>> {
    use sqlx::Connection;
    let url = format!("sqlite://{}?mode=ro", file.display());
    let mut conn = sqlx::SqliteConnection::connect(&url)
        .await
        .map_err(|e| anyhow::anyhow!("oha's timeline {}: {e}", file.display()))?;
    let seconds: Vec<f64> = sqlx::query_scalar("SELECT duration FROM oha WHERE status = 200")
        .fetch_all(&mut conn)
        .await?;
    conn.close().await?;
    Ok(seconds.into_iter().map(|s| s * 1e3).collect())
}

/// The `fraction` percentile of `values` by nearest rank (0.99: the value 99% of them are at
/// or under); NaN for none.
pub(crate) fn percentile(values: &[f64], fraction: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
