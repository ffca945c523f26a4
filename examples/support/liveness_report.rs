//! What the liveness benchmark samples while probing, and its report: the request rate per
//! 30 s window against the budget, memory and the write-ahead log, per-host limits, what the
//! probes found, the by-id p99 alone and while probing, processor use, and what the store's
//! part of a probe costs.

#![allow(dead_code)]

use super::api_loads::Measured;
use super::liveness_settings::Settings;
use super::probe_hosts::{self, Host, HostLog};
use super::probe_layout::Plan;
use super::probe_modes::{Mode, refusals};
use super::process_use::{Cpu, Peaks, memory_kib};
use agentindex_indexer::liveness::LivenessPolicy;
use agentindex_indexer::store::{Store, StoreRead, Writer};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds a window of the probe rate spans.
const WINDOW_SECS: u64 = 30;

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// What was counted at one moment of a probing segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// Since the segment began.
    pub(crate) at: Duration,
    /// Probe outcomes stored (every run so far).
    pub(crate) results: i64,
    /// Of which of live endpoints.
    pub(crate) live_results: i64,
    /// Requests the live hosts saw (every run so far).
    pub(crate) live_requests: usize,
    /// This process's own memory (RssAnon), KiB.
    pub(crate) memory: u64,
    /// The write-ahead log's size, bytes.
    pub(crate) wal: u64,
}

impl Sample {
    /// A sample now, of a segment begun at `begun`: the store's counts, the live hosts' `logs`,
    /// the size of the write-ahead log at `wal`.
    pub(crate) async fn take(
        store: &Store,
        logs: &[Arc<HostLog>],
        wal: &Path,
        begun: Instant,
    ) -> anyhow::Result<Sample> {
        let (results, live_results): (i64, i64) = sqlx::query_as(
            "SELECT count(*), coalesce(sum(CASE WHEN url LIKE 'http://127.2.%' THEN 1 ELSE 0 END), 0)
             FROM probe_results",
        )
        .fetch_one(store.reader())
        .await?;
        Ok(Sample {
            at: begun.elapsed(),
            results,
            live_results,
            live_requests: logs.iter().map(|log| log.count()).sum(),
            memory: memory_kib(std::process::id(), "RssAnon:").unwrap_or(0),
            wal: std::fs::metadata(wal).map_or(0, |m| m.len()),
        })
    }

    /// Requests sent so far: one per probe of an endpoint that is not live (a refused or a
    /// timed-out request), and every request the live hosts saw.
    fn requests(&self) -> i64 {
        self.results - self.live_results + self.live_requests as i64
    }
}

/// One probing segment: the worker running while the by-id load runs pass after pass.
pub(crate) struct Segment {
    pub(crate) samples: Vec<Sample>,
    pub(crate) passes: Vec<Measured>,
    /// This process's memory peaks while it ran.
    pub(crate) peaks: Peaks,
    /// This process's processor time (the worker, its store, the hosts, the sampling).
    pub(crate) own_cpu: Cpu,
    pub(crate) server_cpu: Cpu,
    pub(crate) seconds: Duration,
}

impl Segment {
    /// Per window of [`WINDOW_SECS`] (the last may be shorter): its span in seconds, the
    /// requests and the probes in it.
    fn windows(&self) -> Vec<(u64, u64, i64, i64)> {
        let mut windows = Vec::new();
        let mut start = self.samples[0];
        for sample in &self.samples[1..] {
            let span = (sample.at - start.at).as_secs_f64().round() as u64;
            let last = std::ptr::eq(sample, self.samples.last().expect("samples"));
            if span >= WINDOW_SECS || (last && span > 0) {
                let from = start.at.as_secs_f64().round() as u64;
                windows.push((
                    from,
                    from + span,
                    sample.requests() - start.requests(),
                    sample.results - start.results,
                ));
                start = *sample;
            }
        }
        windows
    }
}

/// Processor time over some seconds.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CpuSpan {
    cpu: f64,
    seconds: f64,
}

impl CpuSpan {
    /// Adds `cpu` taken since `started`.
    pub(crate) fn add(&mut self, cpu: Cpu, started: Instant) {
        self.cpu += cpu.total;
        self.seconds += started.elapsed().as_secs_f64();
    }

    fn cores(&self) -> f64 {
        self.cpu / self.seconds.max(f64::EPSILON)
    }
}

/// Everything measured.
pub(crate) struct Report {
    settings: Settings,
    plan: Plan,
    registrations: usize,
    per_agent: usize,
    pub(crate) memory_before_sync: u64,
    pub(crate) memory_after_sync: u64,
    pub(crate) first_sync: Duration,
    pub(crate) resync: Duration,
    pub(crate) alone: Vec<Measured>,
    pub(crate) server_alone: CpuSpan,
    pub(crate) segments: Vec<Segment>,
    /// Endpoints by class, status and reason, after probing.
    found: Vec<(String, String, String, i64)>,
    /// Milliseconds of each look for due endpoints and of each save of a second's outcomes.
    due_ms: Vec<f64>,
    save_ms: Vec<f64>,
}

impl Report {
    pub(crate) fn new(
        settings: Settings,
        plan: Plan,
        registrations: usize,
        per_agent: usize,
    ) -> Self {
        Self {
            settings,
            plan,
            registrations,
            per_agent,
            memory_before_sync: 0,
            memory_after_sync: 0,
            first_sync: Duration::ZERO,
            resync: Duration::ZERO,
            alone: Vec::new(),
            server_alone: CpuSpan::default(),
            segments: Vec::new(),
            found: Vec::new(),
            due_ms: Vec::new(),
            save_ms: Vec::new(),
        }
    }

    /// Reads what the probes found, then times the store's part of probing: the worker's look
    /// for due endpoints (as many as it reads each time a slot frees) and a save of a second's
    /// outcomes at the budget (made-up refusals of endpoints still due, saved as the worker
    /// saves them). Run after probing: those saves change what the store holds.
    pub(crate) async fn store_costs(
        &mut self,
        store: &Store,
        writer: &Writer,
        policy: &LivenessPolicy,
    ) -> anyhow::Result<()> {
        self.found = sqlx::query_as(
            "SELECT CASE WHEN url LIKE 'http://127.2.%' THEN 'live'
                         WHEN url LIKE 'http://127.3.%' THEN 'silent' ELSE 'dead' END,
                    status, coalesce(reason, ''), count(*)
             FROM probe_endpoints GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        )
        .fetch_all(store.reader())
        .await?;
        let candidates = 32 * self.settings.concurrency as i64;
        let per_second = i64::from(self.settings.budget / 60).max(1);
        let retention = policy.retention.as_secs() as i64;
        for _ in 0..5 {
            let clock = Instant::now();
            store.due_probes(unix_now(), candidates).await?;
            self.due_ms.push(clock.elapsed().as_secs_f64() * 1e3);
            let results = refusals(store, per_second).await?;
            let now = unix_now();
            let clock = Instant::now();
            writer.save_probes(results, now, retention).await?;
            self.save_ms.push(clock.elapsed().as_secs_f64() * 1e3);
        }
        Ok(())
    }

    pub(crate) fn print(&self, live: &[Host], silent: &[Host]) {
        let s = &self.settings;
        let plan = &self.plan;
        println!(
            "\n{} endpoints declared by {} registration files ({} each): {} dead (port {} of {} \
             hosts 127.1.x.y), {} live on {} hosts (127.2.0.1 up), {} silent on {} hosts \
             (127.3.x.y); {} MCP, the rest web",
            plan.endpoints,
            self.registrations,
            self.per_agent,
            plan.dead,
            super::probe_layout::DEAD_PORT,
            plan.dead_hosts(),
            plan.live,
            live.len(),
            plan.silent,
            silent.len(),
            plan.mcp,
        );
        if s.mode != Mode::Worker {
            println!(
                "LIVENESS_MODE: {:?} (a stand-in for the worker; the rates below count what it \
                 stored and what the live hosts saw)",
                s.mode
            );
        }
        println!(
            "budget {} requests/min, {} ms per host, {} probes at once, timeout {} s, sync every \
             {} s; {} rounds of {} s probing",
            s.budget,
            s.interval.as_millis(),
            s.concurrency,
            s.timeout_secs,
            s.sync_every.as_secs(),
            s.rounds,
            s.probe_secs / s.rounds as u64,
        );
        println!(
            "\nfirst sync (every endpoint new) {:.2} s; a sync with nothing new {:.2} s",
            self.first_sync.as_secs_f64(),
            self.resync.as_secs_f64()
        );

        println!(
            "\n{:<8} {:>10} {:>14} {:>8} {:>12}",
            "round", "window", "requests/min", "ratio", "probes/min"
        );
        let budget = f64::from(s.budget);
        let (mut requests, mut probes, mut seconds) = (0, 0, 0);
        for (n, segment) in self.segments.iter().enumerate() {
            for (from, to, sent, probed) in segment.windows() {
                let per_minute = |count: i64| count as f64 * 60.0 / (to - from) as f64;
                println!(
                    "{:<8} {:>10} {:>14.0} {:>7.2}x {:>12.0}",
                    n + 1,
                    format!("{from}-{to} s"),
                    per_minute(sent),
                    per_minute(sent) / budget,
                    per_minute(probed)
                );
                (requests, probes, seconds) =
                    (requests + sent, probes + probed, seconds + to - from);
            }
        }
        let per_minute = |count: i64| count as f64 * 60.0 / seconds.max(1) as f64;
        println!(
            "{:<8} {:>10} {:>14.0} {:>7.2}x {:>12.0}",
            "all",
            format!("{seconds} s"),
            per_minute(requests),
            per_minute(requests) / budget,
            per_minute(probes)
        );
        println!(
            "(requests: one per probe of a dead or silent endpoint, and every request the live hosts saw)"
        );

        let mib = |kib: u64| kib as f64 / 1024.0;
        let start = self.segments.first().map_or(0, |s| s.samples[0].memory);
        let end = self
            .segments
            .last()
            .and_then(|s| s.samples.last())
            .map_or(0, |s| s.memory);
        let peak = self
            .segments
            .iter()
            .map(|s| s.peaks.anonymous)
            .max()
            .unwrap_or(0);
        println!(
            "\nthis process's own memory (RssAnon: the worker, its store's connections, the hosts), \
             MiB:\n  before the first sync {:.1}, after it {:.1}; probing: at the start {:.1}, \
             at the end {:.1}, peak {:.1}",
            mib(self.memory_before_sync),
            mib(self.memory_after_sync),
            mib(start),
            mib(end),
            mib(peak)
        );
        let series: Vec<String> = self
            .segments
            .iter()
            .flat_map(|s| s.samples.iter().map(|x| format!("{:.0}", mib(x.memory))))
            .collect();
        println!("  every 5 s: {}", series.join(" "));
        let wal: Vec<String> = self
            .segments
            .iter()
            .flat_map(|s| {
                s.samples
                    .iter()
                    .map(|x| format!("{:.0}", x.wal as f64 / 1048576.0))
            })
            .collect();
        println!("the write-ahead log, MiB, every 5 s: {}", wal.join(" "));

        for (what, hosts) in [("live", live), ("silent", silent)] {
            if hosts.is_empty() {
                continue;
            }
            let figures = probe_hosts::per_host(hosts, s.interval);
            let seconds = |gap: Option<Duration>| {
                gap.map_or("none".into(), |g| format!("{:.4} s", g.as_secs_f64()))
            };
            println!(
                "\n{what} hosts: {} requests, {} probes over {} hosts; between two probes of one \
                 host at least {} (interval {:.3} s), {} gaps under it, {} more than 1% under; \
                 between any two requests at least {}; most requests in flight at one host {}",
                figures.requests,
                figures.probes,
                hosts.len(),
                seconds(figures.smallest_probe_gap),
                s.interval.as_secs_f64(),
                figures.probe_gaps_under,
                figures.probe_gaps_well_under,
                seconds(figures.smallest_gap),
                figures.most_in_flight
            );
        }

        println!("\nendpoints after probing (class, status, reason, count):");
        for (class, status, reason, count) in &self.found {
            println!("  {class:<7} {status:<9} {reason:<12} {count:>8}");
        }

        let probing: Vec<&Measured> = self.segments.iter().flat_map(|s| &s.passes).collect();
        let list = |passes: &[&Measured]| {
            passes
                .iter()
                .map(|m| format!("{:.2}", m.p99_ms))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let p99 =
            |passes: &[&Measured]| median(&passes.iter().map(|m| m.p99_ms).collect::<Vec<_>>());
        let p50 =
            |passes: &[&Measured]| median(&passes.iter().map(|m| m.p50_ms).collect::<Vec<_>>());
        let alone: Vec<&Measured> = self.alone.iter().collect();
        println!(
            "\nagent by id @300/s, p99 of each pass, ms\n  alone:   {}\n  probing: {}\n  \
             median p99 {:.2} ms alone, {:.2} ms probing: {:.2}x (p50 {:.2} and {:.2} ms)",
            list(&alone),
            list(&probing),
            p99(&alone),
            p99(&probing),
            p99(&probing) / p99(&alone),
            p50(&alone),
            p50(&probing),
        );
        println!("  (each round's first probing pass overlaps the worker's sync)");

        let own = self
            .segments
            .iter()
            .fold(CpuSpan::default(), |span, s| CpuSpan {
                cpu: span.cpu + s.own_cpu.total,
                seconds: span.seconds + s.seconds.as_secs_f64(),
            });
        let server = self
            .segments
            .iter()
            .fold(CpuSpan::default(), |span, s| CpuSpan {
                cpu: span.cpu + s.server_cpu.total,
                seconds: span.seconds + s.seconds.as_secs_f64(),
            });
        println!(
            "\nprocessor use, cores: this process while probing {:.2}; the server alone {:.2}, \
             while probing {:.2}",
            own.cores(),
            self.server_alone.cores(),
            server.cores()
        );
        println!(
            "store, ms (median of 5): a look for {} due endpoints {:.1}; a save of {} outcomes \
             (a second's at the budget) {:.1}",
            32 * s.concurrency,
            median(&self.due_ms),
            (s.budget / 60).max(1),
            median(&self.save_ms)
        );
    }
}

/// The median of `values` (the mean of the middle two of an even count).
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}
