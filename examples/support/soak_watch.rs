//! What the soak benchmark watches: the process's resident memory, open files and threads
//! (`/proc`), the database and its write-ahead log on disk, the lag `/status` reports, the
//! provider's requests, and the API's latency under a steady side load of lookups by id,
//! searches and reputation pages.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One sample, taken every `sample_every` blocks.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// Blocks made so far, and the chain time they span in hours.
    pub(crate) blocks: u64,
    pub(crate) chain_hours: f64,
    pub(crate) rss_mib: f64,
    /// Heap and stacks alone (`RssAnon`), without the database pages the readers map.
    pub(crate) anon_mib: f64,
    pub(crate) open_files: u64,
    pub(crate) threads: u64,
    pub(crate) db_mib: f64,
    pub(crate) wal_mib: f64,
    /// The chain's head minus the block `/status` says is indexed, or what `/status` answered
    /// instead of a chain's indexed block.
    pub(crate) lag: Result<u64, String>,
    /// Provider requests per block since the last sample.
    pub(crate) requests_per_block: f64,
    /// The side load's p99 since the last sample, and how many answers it is over.
    pub(crate) api_p99_ms: f64,
    pub(crate) api_answers: usize,
    pub(crate) api_errors: usize,
    /// Those errors by HTTP status ("no answer" when none came), as `429×3, 503`.
    pub(crate) api_error_kinds: String,
}

/// The process and files a sample reads.
pub(crate) struct Watched {
    pub(crate) pid: u32,
    pub(crate) db: PathBuf,
    pub(crate) api: String,
}

fn status_field(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn file_mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1_048_576.0)
}

impl Watched {
    /// Everything but the counters the caller keeps (blocks, requests, API latencies), the lag
    /// behind the chain's `head`.
    pub(crate) async fn sample(
        &self,
        client: &reqwest::Client,
        head: u64,
    ) -> (f64, f64, u64, u64, f64, f64, Result<u64, String>) {
        let rss = status_field(self.pid, "VmRSS:") as f64 / 1024.0;
        let anon = status_field(self.pid, "RssAnon:") as f64 / 1024.0;
        let threads = status_field(self.pid, "Threads:");
        let open_files =
            std::fs::read_dir(format!("/proc/{}/fd", self.pid)).map_or(0, |dir| dir.count() as u64);
        let wal = self.db.with_extension("db-wal");
        let lag = match client.get(format!("{}/status", self.api)).send().await {
            Ok(answer) => {
                let code = answer.status();
                let status: serde_json::Value = answer.json().await.unwrap_or_default();
                match status[0]["indexed_block"].as_u64() {
                    Some(indexed) => Ok(head.saturating_sub(indexed)),
                    None => Err(format!("/status {}", code.as_u16())),
                }
            }
            Err(_) => Err("/status no answer".to_string()),
        };
        (
            rss,
            anon,
            open_files,
            threads,
            file_mib(&self.db),
            file_mib(&wal),
            lag,
        )
    }
}

/// Latencies of the side load's answers since they were last taken, and its errors.
#[derive(Default)]
pub(crate) struct Latencies {
    answers: Vec<Duration>,
    errors: std::collections::BTreeMap<String, usize>,
}

impl Latencies {
    /// The p99 in milliseconds, the answers, the errors and their kinds since the last call;
    /// then forgets.
    pub(crate) fn take(&mut self) -> (f64, usize, usize, String) {
        let mut answers = std::mem::take(&mut self.answers);
        let errors = std::mem::take(&mut self.errors);
        answers.sort();
        let p99 = match answers.len() {
            0 => 0.0,
            n => answers[((n * 99).div_ceil(100)).saturating_sub(1)].as_secs_f64() * 1_000.0,
        };
        let kinds = errors
            .iter()
            .map(|(kind, n)| match n {
                1 => kind.clone(),
                n => format!("{kind}×{n}"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        (p99, answers.len(), errors.values().sum(), kinds)
    }
}

/// Sends `per_second` API requests a second to `api` until aborted: a lookup by id, a search and
/// a reputation page in turn, the ids taken from the API's own newest agents.
pub(crate) fn side_load(
    api: String,
    per_second: u32,
    latencies: Arc<Mutex<Latencies>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let client = reqwest::Client::new();
        let url = format!("{api}/graphql");
        let mut ids: Vec<String> = Vec::new();
        let mut tick =
            tokio::time::interval(Duration::from_secs_f64(1.0 / per_second.max(1) as f64));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for n in 0u64.. {
            tick.tick().await;
            if n % 500 == 0 {
                let newest = "{ agents(first: 100, orderBy: NEWEST) { edges { node { id } } } }";
                if let Ok(answer) = client
                    .post(&url)
                    .json(&serde_json::json!({"query": newest}))
                    .send()
                    .await
                    && let Ok(body) = answer.json::<serde_json::Value>().await
                {
                    ids = body["data"]["agents"]["edges"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e["node"]["id"].as_str().map(str::to_string))
                        .collect();
                }
            }
            let query = match (n % 3, ids.is_empty()) {
                (0, false) => format!(
                    "{{ agent(id: \"{}\") {{ id name reputation {{ score }} }} }}",
                    ids[n as usize % ids.len()]
                ),
                (1, _) => "{ agents(search: \"translates\", first: 10) { edges { node { id name } } } }".to_string(),
                _ => "{ agents(orderBy: REPUTATION, first: 20) { edges { node { id reputation { score } } } } }".to_string(),
            };
            let started = Instant::now();
            let answered = client
                .post(&url)
                .json(&serde_json::json!({"query": query}))
                .send()
                .await;
            let mut kept = latencies.lock().unwrap_or_else(|p| p.into_inner());
            match answered {
                Ok(answer) if answer.status().is_success() => kept.answers.push(started.elapsed()),
                Ok(answer) => {
                    *kept
                        .errors
                        .entry(answer.status().as_u16().to_string())
                        .or_default() += 1
                }
                Err(_) => *kept.errors.entry("no answer".to_string()).or_default() += 1,
            }
        }
    })
}
