//! What runs while the liveness benchmark "probes" (`LIVENESS_MODE`): the probe worker itself
//! (`worker`, the default), or one of two stand-ins that tell apart what probing costs the API.
//! `store` sends the store what the worker sends it at the budget and nothing to any host: a
//! look for due endpoints per probe (the worker's, each time a slot frees) and a save of a
//! second's outcomes every second (made-up refusals of endpoints still due); `reads` only those
//! looks, `writes` only those saves (of endpoints read once at the start). `probes` probes as
//! the worker does (the same [`Prober`] and budget, as many at once, each host spaced by the
//! interval) the endpoints due when it starts, and stores nothing.

#![allow(dead_code)]

use agentindex_indexer::liveness::{LivenessPolicy, Outcome, Prober, Reason, Status};
use agentindex_indexer::store::{DueProbe, ProbeResult, Store, StoreRead, Writer};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// What runs while probing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Worker,
    Store,
    Reads,
    Writes,
    Probes,
}

impl Mode {
    /// `LIVENESS_MODE`: `worker` (the default), `store`, `reads`, `writes` or `probes`.
    pub(crate) fn from_env() -> anyhow::Result<Self> {
        match std::env::var("LIVENESS_MODE").as_deref() {
            Err(_) | Ok("worker") => Ok(Mode::Worker),
            Ok("store") => Ok(Mode::Store),
            Ok("reads") => Ok(Mode::Reads),
            Ok("writes") => Ok(Mode::Writes),
            Ok("probes") => Ok(Mode::Probes),
            Ok(other) => {
                anyhow::bail!("LIVENESS_MODE={other:?}: worker, store, reads, writes or probes")
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

/// Made-up refusals of `count` endpoints still due, ready to save as the worker saves outcomes.
pub(crate) async fn refusals(store: &Store, count: i64) -> anyhow::Result<Vec<ProbeResult>> {
    let now = unix_now();
    Ok(refused(store.due_probes(now, count).await?, now))
}

/// Made-up refusals of `due` at `now`.
fn refused(due: Vec<DueProbe>, now: i64) -> Vec<ProbeResult> {
    due.into_iter()
        .map(|due| ProbeResult {
            outcome: Outcome {
                kind: due.target.kind,
                url: due.target.url,
                status: Status::Down,
                reason: Some(Reason::Connect),
                error: Some("connection refused".into()),
                latency_ms: None,
                http_status: None,
                protocol_version: None,
                detail: serde_json::Value::Null,
            },
            checked_at: now,
            failures: due.failures + 1,
            next_probe_at: now + 300,
        })
        .collect()
}

/// The store's side of probing at `budget` requests a minute, until `stop`: each second, as
/// many looks for due endpoints as probes (under `Mode::Store` and `Mode::Reads`) and a save
/// of their outcomes (under `Mode::Store` and `Mode::Writes`; those of `Mode::Writes` read
/// once at the start, `enough` of them).
pub(crate) async fn store_only(
    store: Store,
    writer: Writer,
    policy: LivenessPolicy,
    (mode, budget, enough): (Mode, u32, i64),
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let per_second = i64::from(budget / 60).max(1);
    let candidates = 32 * policy.concurrency as i64;
    let retention = policy.retention.as_secs() as i64;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let pause = Duration::from_secs(1) / per_second as u32;
    let mut read_once: VecDeque<DueProbe> = match mode {
        Mode::Writes => store.due_probes(unix_now(), enough).await?.into(),
        _ => VecDeque::new(),
    };
    loop {
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return Ok(()),
            _ = tick.tick() => {}
        }
        if mode != Mode::Writes {
            for _ in 0..per_second {
                store.due_probes(unix_now(), candidates).await?;
                tokio::time::sleep(pause / 2).await;
            }
        }
        let results = match mode {
            Mode::Store => refusals(&store, per_second).await?,
            Mode::Writes => {
                let take = read_once.len().min(per_second as usize);
                refused(read_once.drain(..take).collect(), unix_now())
            }
            _ => continue,
        };
        writer.save_probes(results, unix_now(), retention).await?;
    }
}

/// Probes the endpoints due now as the worker would (at most `concurrency` at once, never two
/// on one host at once nor one sooner than the interval after the host's last), storing
/// nothing, until `stop` (or until `enough` are probed).
pub(crate) async fn probes_only(
    store: Store,
    policy: LivenessPolicy,
    enough: i64,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let prober = Prober::new(&policy)?;
    let interval = policy.fetch.per_host_min_interval.unwrap_or_default();
    let mut waiting: VecDeque<DueProbe> = store.due_probes(unix_now(), enough).await?.into();
    let mut asked: HashMap<String, Instant> = HashMap::new();
    let mut busy: HashSet<String> = HashSet::new();
    let mut in_flight = FuturesUnordered::new();
    loop {
        asked.retain(|_, at| at.elapsed() < interval);
        // The first hundred waiting are looked at, as the worker looks at a page of due ones.
        for _ in 0..waiting.len().min(100) {
            if in_flight.len() >= policy.concurrency {
                break;
            }
            let Some(due) = waiting.pop_front() else {
                break;
            };
            let host = url::Url::parse(&due.target.url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_default();
            if busy.contains(&host) || asked.contains_key(&host) {
                waiting.push_back(due);
                continue;
            }
            busy.insert(host.clone());
            asked.insert(host.clone(), Instant::now());
            let prober = prober.clone();
            in_flight.push(async move {
                prober.probe(&due.target).await;
                host
            });
        }
        if in_flight.is_empty() && waiting.is_empty() {
            return Ok(());
        }
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return Ok(()),
            Some(host) = in_flight.next(), if !in_flight.is_empty() => {
                busy.remove(&host);
            }
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}
