//! The probe worker: brings the endpoints to probe in line with what agents declare (every
//! `targets_sync_secs`), and keeps probing those due, a pipeline of at most `concurrency` probes
//! in flight: never two on one host at once nor one sooner than the host's interval after the
//! last one ended, every request within the global budget. Due endpoints are read a page at a
//! time, and outcomes handed to the store's writer with when each endpoint is due again in
//! batches (every [`SAVE_EVERY`]), so a slow host never holds back the others' results and the
//! API's readers see few commits. It never blocks a follower, runs on a lowered thread of its
//! own under the engine, and the engine stops it whenever it stops. It lives beside the engine because it joins two layers: the probes
//! (`liveness`) and the store they are written to.

use crate::liveness::schedule::next_probe;
use crate::liveness::{LivenessPolicy, Outcome, Prober, Status};
use crate::metrics::metrics;
use crate::store::{ChainContexts, DueProbe, ProbeResult, Store, StoreError, StoreRead, Writer};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;
use tokio::time::Instant;

/// Outcomes are saved at least this often while probes go on (each save is a commit the
/// API's readers see: fewer is kinder to them).
const SAVE_EVERY: Duration = Duration::from_secs(15);
/// The store is asked for due endpoints at most this often within a step.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// How long the worker waits, when nothing can start, before looking again.
const IDLE_TICK: Duration = Duration::from_millis(200);
/// Outcomes saved at once at most.
const SAVE_BATCH: usize = 256;
/// How long one [`ProbeWorker::step`] starts new probes for.
const STEP_FOR: Duration = Duration::from_secs(10);
/// Pause when nothing is due.
const IDLE_PAUSE: Duration = Duration::from_secs(1);
/// Pause after a step failed.
const ERROR_PAUSE: Duration = Duration::from_secs(5);
/// Endpoints read per look for due ones, for every probe slot: enough that busy hosts do not
/// starve the slots.
const CANDIDATES_PER_SLOT: i64 = 32;

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
    sync_every: Duration,
    last_sync: Option<Instant>,
    /// When each host was last asked (kept for one interval, then forgotten).
    hosts_asked: HashMap<String, Instant>,
    /// The chains whose rules weigh availability: their agents are rescored when their
    /// liveness changes.
    rescored: Option<Arc<ChainContexts>>,
}

/// A probe's result with the host it kept busy.
type Done = (String, ProbeResult);

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
            policy,
            sync_every,
            last_sync: None,
            hosts_asked: HashMap::new(),
            rescored: None,
            store,
            writer,
        })
    }

    /// The same, rescoring the agents whose liveness changed on the chains of `contexts` whose
    /// rules weigh availability (`[reputation.weights] availability`).
    pub fn rescoring(mut self, contexts: Arc<ChainContexts>) -> Self {
        let weighs = contexts
            .values()
            .any(|c| c.rules.weights.availability > 0.0);
        self.rescored = weighs.then_some(contexts);
        self
    }

    /// One round: sync the endpoints when it is time, then probe what is due (for at most
    /// [`STEP_FOR`] of new probes, then the ones in flight finish), saving as it goes.
    pub async fn step(&mut self) -> Result<ProbesOutcome, StoreError> {
        let mut declared = None;
        if self
            .last_sync
            .is_none_or(|at| at.elapsed() >= self.sync_every)
        {
            // Tried once per interval whatever it gives: a sync that fails does not hold back
            // probing what is already declared.
            self.last_sync = Some(Instant::now());
            match self.writer.sync_probes(unix_now()).await {
                Ok(count) => declared = Some(count),
                Err(error) => {
                    tracing::warn!(target: "agentindex::liveness", %error, "syncing the endpoints to probe");
                }
            }
        }
        let (prober, policy) = (self.prober.clone(), self.policy.clone());
        prober.forget_idle_hosts();
        let started = Instant::now();
        let interval = self.policy.fetch.per_host_min_interval.unwrap_or_default();
        let slots = self.policy.concurrency;
        let mut in_flight = FuturesUnordered::new();
        let mut busy_hosts: HashSet<String> = HashSet::new();
        // Probed, or being probed, and not saved yet: their schedule in the store is stale.
        let mut unsaved: HashSet<(crate::liveness::Kind, String)> = HashSet::new();
        let mut done: Vec<ProbeResult> = Vec::new();
        let mut last_save = Instant::now();
        let (mut probed, mut up) = (0, 0);
        // Endpoints due, read a page at a time and started from as slots and hosts allow; the
        // store is asked again only when the page is used up, at most every LOOK_EVERY.
        let mut candidates: Vec<DueProbe> = Vec::new();
        let mut last_look: Option<Instant> = None;
        let mut dry = false;
        loop {
            let looking = started.elapsed() < STEP_FOR;
            if looking
                && candidates.is_empty()
                && last_look.is_none_or(|at| at.elapsed() >= LOOK_EVERY)
            {
                last_look = Some(Instant::now());
                candidates = self
                    .store
                    .due_probes(unix_now(), CANDIDATES_PER_SLOT * slots as i64)
                    .await?
                    .into_iter()
                    .filter(|d| !unsaved.contains(&(d.target.kind, d.target.url.clone())))
                    .collect();
                dry = candidates.is_empty();
            }
            if looking && in_flight.len() < slots {
                let now = Instant::now();
                self.hosts_asked
                    .retain(|_, at| now.duration_since(*at) < interval);
                let mut waiting = Vec::with_capacity(candidates.len());
                for due in std::mem::take(&mut candidates) {
                    let host = host_of(&due.target.url);
                    let free = !busy_hosts.contains(&host) && !self.hosts_asked.contains_key(&host);
                    if in_flight.len() >= slots || !free {
                        waiting.push(due);
                        continue;
                    }
                    busy_hosts.insert(host.clone());
                    unsaved.insert((due.target.kind, due.target.url.clone()));
                    in_flight.push(probe(&prober, &policy, host, due));
                }
                candidates = waiting;
            }
            if in_flight.is_empty() && (dry || !looking) {
                break;
            }
            // Wake for the next save when outcomes wait for one, else on the idle tick.
            let tick = if done.is_empty() {
                IDLE_TICK
            } else {
                SAVE_EVERY
                    .saturating_sub(last_save.elapsed())
                    .min(IDLE_TICK)
            }
            .max(Duration::from_millis(10));
            tokio::select! {
                finished = in_flight.next(), if !in_flight.is_empty() => {
                    if let Some((host, result)) = finished {
                        // The host's interval runs from the end of its probe, so the next
                        // probe's first request is a whole interval after this one's last.
                        self.hosts_asked.insert(host.clone(), Instant::now());
                        busy_hosts.remove(&host);
                        probed += 1;
                        up += usize::from(result.outcome.status == Status::Up);
                        done.push(result);
                    }
                }
                // Nothing to start until a host's interval passes or new endpoints come due.
                () = tokio::time::sleep(tick) => {}
            }
            if done.len() >= SAVE_BATCH || (!done.is_empty() && last_save.elapsed() >= SAVE_EVERY) {
                self.save(&mut done, &mut unsaved).await?;
                last_save = Instant::now();
            }
        }
        self.save(&mut done, &mut unsaved).await?;
        if probed > 0 {
            tracing::debug!(target: "agentindex::liveness", probed, up, "endpoints probed");
        }
        Ok(ProbesOutcome {
            declared,
            probed,
            up,
        })
    }

    /// Hands `done` to the writer; their endpoints may be picked again.
    async fn save(
        &self,
        done: &mut Vec<ProbeResult>,
        unsaved: &mut HashSet<(crate::liveness::Kind, String)>,
    ) -> Result<(), StoreError> {
        if done.is_empty() {
            return Ok(());
        }
        let results = std::mem::take(done);
        let retention = self.policy.retention.as_secs() as i64;
        for result in &results {
            unsaved.remove(&(result.outcome.kind, result.outcome.url.clone()));
        }
        let agents = self
            .writer
            .save_probes(results, unix_now(), retention)
            .await?;
        let Some(contexts) = &self.rescored else {
            return Ok(());
        };
        let mut by_chain: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for agent in agents {
            if let Some(chain) = agent.split(':').next().and_then(|c| c.parse().ok()) {
                by_chain.entry(chain).or_default().push(agent);
            }
        }
        for (chain, keys) in by_chain {
            if let Some(context) = contexts.get(&chain)
                && context.rules.weights.availability > 0.0
            {
                self.writer.rescore(context.clone(), keys).await?;
            }
        }
        Ok(())
    }

    /// [`run`](Self::run) on a thread of its own at the lowest priority
    /// ([`crate::priority`]): probing is work nobody waits on, so the API's requests and the
    /// followers get a core first. The task returned ends when the worker does, and carries its
    /// panic.
    pub fn run_lowered(self, stop: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        let runtime = tokio::runtime::Handle::current();
        let (done, finished) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("probe-worker".into())
            .spawn(move || {
                crate::priority::lower_this_thread("the probe worker's thread");
                let run = AssertUnwindSafe(|| runtime.block_on(self.run(stop)));
                let _ = done.send(std::panic::catch_unwind(run));
            });
        tokio::spawn(async move {
            if let Err(error) = spawned {
                tracing::warn!(target: "agentindex::liveness", %error, "probing is off: its thread did not start");
                return;
            }
            if let Ok(Err(panic)) = finished.await {
                std::panic::resume_unwind(panic);
            }
        })
    }

    /// Steps until `stop` says so; a failed step is logged and tried again later.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        loop {
            if *stop.borrow() {
                return;
            }
            // Probes may wait on slow hosts; stopping does not wait for them (what a dropped
            // step probed and did not save is probed again).
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

/// Probes one endpoint and says when it is due again.
async fn probe(prober: &Prober, policy: &LivenessPolicy, host: String, due: DueProbe) -> Done {
    let outcome: Outcome = prober.probe(&due.target).await;
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
        policy,
        rand::random::<f64>(),
    );
    let result = ProbeResult {
        outcome,
        checked_at,
        failures,
        next_probe_at,
    };
    (host, result)
}

/// The host of `url`, lower-case (empty when it has none).
fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default()
}

/// Seconds since the Unix epoch.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
