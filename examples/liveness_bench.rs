//! Liveness benchmark (issue #33): the probe worker's schedule against 100,000 endpoints, most
//! of them dead as in the wild, and what probing costs the API beside it.
//!
//! 100,000 synthetic agents (`support/agents.rs`, scored as the indexer leaves them); their
//! ERC-8004 registration files rewritten to declare the endpoints (`support/probe_layout.rs`):
//! all on loopback by IP address, 95% dead (a port nothing listens on, 127.1.x.y, ten to a
//! host), 5% live on 20 tiny HTTP servers in this process (127.2.0.1 to .20, web pages and MCP
//! servers, `support/probe_hosts.rs`) that record every request's arrival and how many were in
//! flight at once; `LIVENESS_SILENT_PERMILLE` turns a share of the dead into silent hosts that
//! accept and never answer (the probe waits out its timeout). The hosts answer on two threads
//! of their own at nice 19, as the other machines they stand for would
//! (`LIVENESS_HOSTS_AT_NORMAL_PRIORITY` puts them back). The real `agentindex serve` binary
//! serves the database; the [`ProbeWorker`] runs in this process on the same database, on its
//! lowered thread as the indexer runs it, under the shipped limits but for the budget
//! (`LIVENESS_BUDGET`, 1,200 requests a minute, so a few minutes measure it) and private
//! addresses and plain http allowed.
//!
//! The first sync (every endpoint new) is timed apart, and a second with nothing new. Then, for
//! `LIVENESS_ROUNDS` rounds (2): the by-id load (oha at 300/s) alone, `ALONE_PASSES` (2) passes,
//! then the worker probes for its share of the probing time while the same load runs pass after
//! pass (each round's worker starts with a sync of its own, as the indexer's does every
//! `targets_sync_secs`). Sampled every 5 s: probes stored, requests the live hosts saw, this
//! process's own memory, the write-ahead log's size. `LIVENESS_MODE` runs a stand-in in the
//! worker's place (`support/probe_modes.rs`: its store traffic alone, its reads or its writes
//! alone, or its probes without the store), to tell which part of probing costs the API what.
//!
//! Prints the request rate of each 30 s window against the budget, the syncs' time, this
//! process's memory (RssAnon) at the start of probing, at the end and at its peak, the per-host
//! figures of the live (and silent) hosts (the least time between two probes of one host against
//! the interval, the most requests in flight at one host), what the probes found, the by-id p99
//! of every pass alone and while probing with the ratio of their medians, processor use, and
//! what a save of a second's outcomes and a look for due endpoints cost the store.
//!
//! Run with `scripts/bench-liveness` (or `cargo run --release --example liveness_bench --
//! [endpoints] [probe_seconds]` with `oha` in `OHA` and the release binary built).

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;
#[path = "support/liveness_report.rs"]
mod liveness_report;
#[path = "support/liveness_settings.rs"]
mod liveness_settings;
#[path = "support/lowered_runtime.rs"]
mod lowered_runtime;
#[path = "support/probe_hosts.rs"]
mod probe_hosts;
#[path = "support/probe_layout.rs"]
mod probe_layout;
#[path = "support/probe_modes.rs"]
mod probe_modes;
#[path = "support/process_use.rs"]
mod process_use;
#[path = "support/serve_process.rs"]
mod serve_process;

use agentindex_indexer::config::LivenessConfig;
use agentindex_indexer::documents::FetchPolicy;
use agentindex_indexer::engine::ProbeWorker;
use agentindex_indexer::liveness::LivenessPolicy;
use agentindex_indexer::store::{Store, Writer};
use api_loads::{Load, Measured, finish_oha, start_oha};
use liveness_report::{Report, Sample, Segment, unix_now};
use liveness_settings::Settings;
use lowered_runtime::lowered_runtime;
use probe_hosts::Host;
use probe_layout::Plan;
use probe_modes::Mode;
use process_use::{Cpu, sample_memory};
use sqlx::any::AnyPoolOptions;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Connections `oha` keeps open.
const CONNECTIONS: usize = 16;
/// Seconds between two samples while probing.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::from_env()?;
    let oha = std::env::var("OHA").unwrap_or_else(|_| "oha".into());
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("liveness.db").display());

    let started = Instant::now();
    let (store, keys) = agents::open_filled(&url, settings.agents, true).await?;
    agents::score(&store, &keys).await?;
    let plan = Plan::new(
        settings.endpoints,
        settings.live_permille,
        settings.silent_permille,
    );
    probe_layout::check_dead(&plan)?;
    // The probed hosts stand for other machines: they answer on lowered threads of their own.
    let hosts = lowered_runtime("probed-host", "LIVENESS_HOSTS_AT_NORMAL_PRIORITY")?;
    let mut live = Vec::new();
    for k in 0..settings.live_hosts {
        live.push(probe_hosts::start_live(
            hosts.handle(),
            probe_layout::live_host(k),
        )?);
    }
    let mut silent = Vec::new();
    for h in 0..plan.silent_hosts() {
        silent.push(probe_hosts::start_silent(
            hosts.handle(),
            probe_layout::silent_host(h),
        )?);
    }
    let services = plan.services(&addresses(&live), &addresses(&silent));
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await?;
    let (registrations, per_agent) = probe_layout::declare(&pool, &services).await?;
    pool.close().await;
    drop(services);
    // Closed and opened again, as the indexer would find it: the write-ahead log checkpointed.
    store.close().await;
    let store = Store::open(&url).await?;
    println!(
        "loaded {} agents, {} endpoints declared by {registrations} registration files \
         ({per_agent} each), in {:.1} s",
        settings.agents,
        settings.endpoints,
        started.elapsed().as_secs_f64()
    );

    let config = dir.path().join("serve.toml");
    std::fs::write(&config, api_loads::serve_config(&url))?;
    let server = serve_process::start(&binary, &config, "error", Stdio::null(), |_| Ok(()))?;
    let server_pid = server.child.id();
    println!("serving at {} (pid {server_pid})", server.base);
    let load = Arc::new(Load {
        name: "agent by id @300/s",
        paths: Vec::new(),
        rate: Some(300),
    });
    // Written once: the 100,000 URLs are not built again for every pass, in this process whose
    // memory is measured.
    let list = dir.path().join("urls.txt");
    api_loads::write_list(
        &server.base,
        &api_loads::by_id(&keys, &mut rand::rng()),
        &list,
    )?;
    drop(keys);
    let oha_run = OhaRun {
        oha,
        base: server.base.clone(),
        list,
        load,
    };
    // A first pass faults in the pages the load reads, so no measured pass pays for it.
    oha_run.pass(2).await?;

    let mut report = Report::new(settings.clone(), plan, registrations, per_agent);
    let writer = store.writer(4);
    report.memory_before_sync = own_memory();
    let clock = Instant::now();
    let declared = writer.sync_probes(unix_now()).await?;
    report.first_sync = clock.elapsed();
    let clock = Instant::now();
    writer.sync_probes(unix_now()).await?;
    report.resync = clock.elapsed();
    report.memory_after_sync = own_memory();
    check_declared(&store, declared, settings.endpoints).await?;
    println!(
        "first sync: {declared} endpoints in {:.2} s; again, nothing new: {:.2} s",
        report.first_sync.as_secs_f64(),
        report.resync.as_secs_f64()
    );

    let policy = policy(&settings);
    let segment = settings.probe_secs / settings.rounds as u64;
    for round in 0..settings.rounds {
        for _ in 0..settings.alone_passes {
            let server_before = Cpu::of(server_pid);
            let clock = Instant::now();
            report.alone.push(oha_run.pass(settings.load_secs).await?);
            report
                .server_alone
                .add(Cpu::of(server_pid).since(server_before), clock);
        }
        println!("round {}: probing for {segment} s", round + 1);
        let probing = Probing {
            store: &store,
            writer: &writer,
            policy: &policy,
            settings: &settings,
            live: &live,
            oha_run: &oha_run,
            server_pid,
            wal: dir.path().join("liveness.db-wal"),
        };
        let measured = probing.segment(Duration::from_secs(segment)).await?;
        report.segments.push(measured);
    }
    report.store_costs(&store, &writer, &policy).await?;
    report.print(&live, &silent);
    drop(server);
    Ok(())
}

/// The addresses of `hosts`.
fn addresses(hosts: &[Host]) -> Vec<std::net::SocketAddr> {
    hosts.iter().map(|h| h.address).collect()
}

/// This process's own memory (RssAnon), in KiB.
fn own_memory() -> u64 {
    process_use::memory_kib(std::process::id(), "RssAnon:").unwrap_or(0)
}

/// The shipped `[liveness]` limits but the budget (and what `LIVENESS_*` changes), with
/// loopback and plain http opened as `[documents]` would open them for a local run.
fn policy(settings: &Settings) -> LivenessPolicy {
    let liveness = LivenessConfig {
        requests_per_minute: settings.budget,
        min_interval_per_host_ms: settings.interval.as_millis() as u64,
        concurrency: settings.concurrency,
        timeout_secs: settings.timeout_secs,
        targets_sync_secs: settings.sync_every.as_secs(),
        contact_url: "https://operator.example/about-probes".into(),
        ..LivenessConfig::default()
    };
    let documents = FetchPolicy {
        allow_private: true,
        allow_http: true,
        ..FetchPolicy::default()
    };
    LivenessPolicy::from_parts(&liveness, documents)
}

/// Checks the sync declared every endpoint and nothing off loopback: the synthetic agents'
/// https://agents.example/… endpoints must never be probed.
async fn check_declared(store: &Store, declared: u64, endpoints: usize) -> anyhow::Result<()> {
    let elsewhere: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM probe_endpoints WHERE url NOT LIKE 'http://127.%'",
    )
    .fetch_one(store.reader())
    .await?;
    anyhow::ensure!(elsewhere == 0, "{elsewhere} endpoints are off loopback");
    anyhow::ensure!(
        declared as usize == endpoints,
        "the sync declared {declared} endpoints, not {endpoints}"
    );
    Ok(())
}

/// The by-id load, run by oha.
struct OhaRun {
    oha: String,
    base: String,
    list: PathBuf,
    load: Arc<Load>,
}

impl OhaRun {
    /// One pass of `seconds` over the list written, oha waited for on a blocking thread.
    async fn pass(&self, seconds: usize) -> anyhow::Result<Measured> {
        let (oha, base, list, load) = (
            self.oha.clone(),
            self.base.clone(),
            self.list.clone(),
            self.load.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let child = start_oha(
                &oha,
                &base,
                Path::new(&list),
                &load,
                &load.paths,
                seconds,
                CONNECTIONS,
                None,
            )?;
            finish_oha(load.name, child)
        })
        .await?
    }
}

/// What one probing segment needs.
struct Probing<'a> {
    store: &'a Store,
    writer: &'a Writer,
    policy: &'a LivenessPolicy,
    settings: &'a Settings,
    live: &'a [Host],
    oha_run: &'a OhaRun,
    server_pid: u32,
    /// The database's write-ahead log.
    wal: PathBuf,
}

impl Probing<'_> {
    /// Starts what probes (`LIVENESS_MODE`: the worker, or a stand-in), until `stopped`.
    fn start(
        &self,
        stopped: tokio::sync::watch::Receiver<bool>,
    ) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<()>>> {
        let (store, writer, policy) =
            (self.store.clone(), self.writer.clone(), self.policy.clone());
        Ok(match self.settings.mode {
            Mode::Worker => {
                // On its lowered thread, as the indexer runs it.
                let worker = ProbeWorker::new(policy, self.settings.sync_every, store, writer)?;
                tokio::spawn(async move { Ok(worker.run_lowered(stopped).await?) })
            }
            Mode::Store | Mode::Reads | Mode::Writes => {
                let enough = i64::from(self.settings.budget) * self.settings.probe_secs as i64 / 30;
                tokio::spawn(probe_modes::store_only(
                    store,
                    writer,
                    policy,
                    (self.settings.mode, self.settings.budget, enough),
                    stopped,
                ))
            }
            Mode::Probes => {
                // Twice what the budget allows over the whole run: never short of work.
                let enough = i64::from(self.settings.budget) * self.settings.probe_secs as i64 / 30;
                tokio::spawn(probe_modes::probes_only(store, policy, enough, stopped))
            }
        })
    }

    /// Runs what probes for `length` while the by-id load runs pass after pass, sampling every
    /// [`SAMPLE_EVERY`].
    async fn segment(&self, length: Duration) -> anyhow::Result<Segment> {
        let own = std::process::id();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let sampling = Arc::new(AtomicBool::new(false));
        let memory = sample_memory(own, sampling.clone());
        let (own_before, server_before) = (Cpu::of(own), Cpu::of(self.server_pid));
        let begun = Instant::now();
        let logs: Vec<_> = self.live.iter().map(|h| h.log.clone()).collect();
        let first = Sample::take(self.store, &logs, &self.wal, begun).await?;
        let running = self.start(stopped)?;
        let sampler = {
            let (store, wal) = (self.store.clone(), self.wal.clone());
            tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut next = begun + SAMPLE_EVERY;
                while next <= begun + length {
                    tokio::time::sleep_until(next.into()).await;
                    samples.push(Sample::take(&store, &logs, &wal, begun).await?);
                    next += SAMPLE_EVERY;
                }
                anyhow::Ok(samples)
            })
        };
        let mut passes = Vec::new();
        let load = Duration::from_secs(self.settings.load_secs as u64);
        while begun.elapsed() + load <= length {
            passes.push(self.oha_run.pass(self.settings.load_secs).await?);
        }
        tokio::time::sleep_until((begun + length).into()).await;
        let mut samples = vec![first];
        samples.extend(sampler.await??);
        let _ = stop.send(true);
        running.await??;
        let seconds = begun.elapsed();
        sampling.store(true, Ordering::Relaxed);
        Ok(Segment {
            samples,
            passes,
            peaks: memory.await?,
            own_cpu: Cpu::of(own).since(own_before),
            server_cpu: Cpu::of(self.server_pid).since(server_before),
            seconds,
        })
    }
}
