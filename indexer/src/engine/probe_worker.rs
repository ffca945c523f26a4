//! The probe worker: a loop over [`ProbeWorker::step`], which brings the endpoints to probe in
//! line with what agents declare (every `targets_sync_secs`), probes those due (hosts
//! concurrently, each host's endpoints one after another), and hands the outcomes to the
//! store's writer with when each endpoint is due again. It never blocks a follower, and the
//! engine stops it whenever it stops. It lives beside the engine because it joins two layers:
//! the probes (`liveness`) and the store they are written to.

use crate::liveness::schedule::next_probe;
use crate::liveness::{LivenessPolicy, Prober, Status};
use crate::metrics::metrics;
use crate::store::{DueProbe, ProbeResult, Store, StoreError, StoreRead, Writer};
use futures::StreamExt;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;
use tokio::time::Instant;

/// Pause when nothing is due.
const IDLE_PAUSE: Duration = Duration::from_secs(1);
/// Pause after a step failed.
const ERROR_PAUSE: Duration = Duration::from_secs(5);

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbesOutcome {
    /// Endpoints declared after the step's sync (when it synced).
    pub declared: Option<u64>,
    /// Endpoints probed.
    pub probed: usize,
    /// Of which found up.
    pub up: usize,
}

/// Probes the endpoints agents declare.
#[derive(Debug)]
pub struct ProbeWorker {
    store: Store,
    writer: Writer,
    prober: Prober,
    policy: LivenessPolicy,
    /// Endpoints probed per step at most.
    per_step: i64,
    sync_every: Duration,
    last_sync: Option<Instant>,
}

impl ProbeWorker {
    /// A worker under `policy`, syncing the endpoints to probe every `sync_every`.
    pub fn new(
        policy: LivenessPolicy,
        sync_every: Duration,
        store: Store,
        writer: Writer,
    ) -> Result<Self, crate::documents::FetchError> {
        Ok(Self {
            prober: Prober::new(&policy)?,
            // Enough for every host slot to have a few endpoints, and at most a tenth of a
            // minute's budget, so outcomes are saved at least every few seconds.
            per_step: (policy.concurrency as i64 * 4)
                .min(i64::from(policy.requests_per_minute / 10).max(1))
                .max(1),
            policy,
            sync_every,
            last_sync: None,
            store,
            writer,
        })
    }

    /// One round: sync the endpoints when it is time, probe what is due, save the outcomes.
    pub async fn step(&mut self) -> Result<ProbesOutcome, StoreError> {
        let mut declared = None;
        if self
            .last_sync
            .is_none_or(|at| at.elapsed() >= self.sync_every)
        {
            declared = Some(self.writer.sync_probes(unix_now()).await?);
            self.last_sync = Some(Instant::now());
        }
        let due = self.store.due_probes(unix_now(), self.per_step).await?;
        if due.is_empty() {
            return Ok(ProbesOutcome {
                declared,
                probed: 0,
                up: 0,
            });
        }
        let mut by_host: BTreeMap<String, Vec<DueProbe>> = BTreeMap::new();
        for probe in due {
            let host = url::Url::parse(&probe.target.url)
                .ok()
                .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
                .unwrap_or_default();
            by_host.entry(host).or_default().push(probe);
        }
        let results: Vec<ProbeResult> = futures::stream::iter(by_host.into_values())
            .map(|probes| self.probe_host(probes))
            .buffer_unordered(self.policy.concurrency)
            .flat_map(futures::stream::iter)
            .collect()
            .await;
        let probed = results.len();
        let up = results
            .iter()
            .filter(|r| r.outcome.status == Status::Up)
            .count();
        let retention = self.policy.retention.as_secs() as i64;
        self.writer
            .save_probes(results, unix_now(), retention)
            .await?;
        tracing::debug!(target: "agentindex::liveness", probed, up, "endpoints probed");
        Ok(ProbesOutcome {
            declared,
            probed,
            up,
        })
    }

    /// Probes one host's endpoints one after another.
    async fn probe_host(&self, probes: Vec<DueProbe>) -> Vec<ProbeResult> {
        let mut results = Vec::with_capacity(probes.len());
        for due in probes {
            let outcome = self.prober.probe(&due.target).await;
            let checked_at = unix_now();
            let failures = if outcome.status == Status::Up {
                0
            } else {
                due.failures + 1
            };
            let reason = outcome.reason.map_or("", |r| r.as_str());
            metrics().probe(outcome.kind.as_str(), outcome.status.as_str(), reason);
            let next_probe_at = next_probe(
                checked_at,
                outcome.status,
                failures,
                &self.policy,
                rand::random::<f64>(),
            );
            results.push(ProbeResult {
                outcome,
                checked_at,
                failures,
                next_probe_at,
            });
        }
        results
    }

    /// Steps until `stop` says so; a failed step is logged and tried again later.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        loop {
            if *stop.borrow() {
                return;
            }
            // Probes may wait on slow hosts; stopping does not wait for them (what a dropped
            // step probed is probed again).
            let pause = tokio::select! {
                outcome = self.step() => match outcome {
                    Ok(ProbesOutcome { probed: 0, .. }) => IDLE_PAUSE,
                    Ok(_) => Duration::ZERO,
                    Err(error) => {
                        tracing::warn!(target: "agentindex::liveness", %error, "probing endpoints");
                        ERROR_PAUSE
                    }
                },
                _ = stop.wait_for(|stopped| *stopped) => return,
            };
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => return,
                () = tokio::time::sleep(pause) => {}
            }
        }
    }
}

/// Seconds since the Unix epoch.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
