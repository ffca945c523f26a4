//! The liveness benchmark's settings: its arguments (`[endpoints] [probe_seconds]`) and the
//! `LIVENESS_*` variables (with `LOAD_SECS` and `ALONE_PASSES`) that change a run.

use super::probe_modes::Mode;
use std::time::Duration;

/// What a run measures, and under which limits.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Endpoints declared (first argument, 100,000).
    pub(crate) endpoints: usize,
    /// Seconds of probing in all, over every round (second argument, 120).
    pub(crate) probe_secs: u64,
    /// Synthetic agents (`LIVENESS_AGENTS`, 100,000; half have a registration file).
    pub(crate) agents: usize,
    /// Seconds per pass of the by-id load (`LOAD_SECS`, 10).
    pub(crate) load_secs: usize,
    /// Rounds of passes alone then probing (`LIVENESS_ROUNDS`, 2).
    pub(crate) rounds: usize,
    /// Passes alone per round (`ALONE_PASSES`, 2).
    pub(crate) alone_passes: usize,
    /// Requests a minute over every host (`LIVENESS_BUDGET`, 1,200).
    pub(crate) budget: u32,
    /// Least time between two requests to one host (`LIVENESS_INTERVAL_MS`, 2,000).
    pub(crate) interval: Duration,
    /// Hosts probed at once (`LIVENESS_CONCURRENCY`, 8).
    pub(crate) concurrency: usize,
    /// Seconds a probe may take (`LIVENESS_TIMEOUT_SECS`, 10).
    pub(crate) timeout_secs: u64,
    /// Between two syncs of the endpoints (`LIVENESS_SYNC_SECS`, 60).
    pub(crate) sync_every: Duration,
    /// Live endpoints per thousand (`LIVENESS_LIVE_PERMILLE`, 50).
    pub(crate) live_permille: u64,
    /// Silent endpoints per thousand (`LIVENESS_SILENT_PERMILLE`, 0).
    pub(crate) silent_permille: u64,
    /// Live hosts (`LIVENESS_LIVE_HOSTS`, 20).
    pub(crate) live_hosts: usize,
    /// What probes (`LIVENESS_MODE`, the worker).
    pub(crate) mode: Mode,
}

/// The variable `name` parsed, else `default`.
fn var<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(text) => text
            .parse()
            .map_err(|_| anyhow::anyhow!("{name}={text:?} is not a number")),
    }
}

impl Settings {
    /// From the arguments (`[endpoints] [probe_seconds]`) and the environment.
    pub(crate) fn from_env() -> anyhow::Result<Self> {
        let mut args = std::env::args().skip(1);
        let endpoints = args
            .next()
            .map(|a| a.parse())
            .transpose()?
            .unwrap_or(100_000);
        let probe_secs = args.next().map(|a| a.parse()).transpose()?.unwrap_or(120);
        let settings = Settings {
            endpoints,
            probe_secs,
            agents: var("LIVENESS_AGENTS", 100_000)?,
            load_secs: var("LOAD_SECS", 10)?,
            rounds: var("LIVENESS_ROUNDS", 2)?,
            alone_passes: var("ALONE_PASSES", 2)?,
            budget: var("LIVENESS_BUDGET", 1_200)?,
            interval: Duration::from_millis(var("LIVENESS_INTERVAL_MS", 2_000)?),
            concurrency: var("LIVENESS_CONCURRENCY", 8)?,
            timeout_secs: var("LIVENESS_TIMEOUT_SECS", 10)?,
            sync_every: Duration::from_secs(var("LIVENESS_SYNC_SECS", 60)?),
            live_permille: var("LIVENESS_LIVE_PERMILLE", 50)?,
            silent_permille: var("LIVENESS_SILENT_PERMILLE", 0)?,
            live_hosts: var("LIVENESS_LIVE_HOSTS", 20)?,
            mode: Mode::from_env()?,
        };
        anyhow::ensure!(
            settings.rounds > 0 && settings.load_secs > 0 && settings.live_hosts > 0,
            "rounds, load seconds and live hosts must be at least 1"
        );
        anyhow::ensure!(
            settings.live_permille + settings.silent_permille <= 1_000,
            "live and silent endpoints add up to more than a thousand per thousand"
        );
        Ok(settings)
    }
}
