//! What the running indexer knows, right now, of each chain's endpoints and follower: whether
//! an endpoint answers, refuses connections, stays silent, rejects its key or serves another
//! chain, and what the follower's last step ran into.
//!
//! The RPC layer and the followers write here as things happen; every change for the worse is
//! logged at once with what to check ([`Problem::check`]), so a typo in an RPC URL shows on the
//! terminal within the first second rather than after the retries. Under `run`, `/status` and
//! `/readyz` read the same board. Nothing here is stored: a replica serving the database shows
//! the stored progress only.

mod endpoint;

pub use endpoint::{EndpointReport, EndpointState, Problem};

use endpoint::Endpoint;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Every chain's health, by chain id: one per process, shared by the engine and the API.
#[derive(Debug, Default)]
pub struct HealthBoard {
    chains: Mutex<BTreeMap<u64, Arc<ChainHealth>>>,
}

impl HealthBoard {
    /// An empty board.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Registers chain `chain_id` (replacing what was known of it) with its endpoints as logs
    /// may show them (keys redacted), and returns the handle its follower and RPC layer write
    /// through.
    pub fn chain(
        &self,
        chain_id: u64,
        name: &str,
        endpoints: impl IntoIterator<Item = String>,
    ) -> Arc<ChainHealth> {
        let health = Arc::new(ChainHealth::new(chain_id, name, endpoints));
        lock(&self.chains).insert(chain_id, health.clone());
        health
    }

    /// What is known of every registered chain, by chain id.
    pub fn reports(&self) -> Vec<ChainReport> {
        let chains: Vec<_> = lock(&self.chains).values().cloned().collect();
        chains.iter().map(|chain| chain.report()).collect()
    }
}

/// Where a chain's follower stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainState {
    /// No step has ended yet.
    Starting,
    /// The last step succeeded.
    Following,
    /// The last step failed; the follower tries again with backoff.
    Failing,
    /// The follower stopped on an error retrying cannot mend.
    Stopped,
}

impl ChainState {
    /// The state's name, as `/status` shows it.
    pub fn label(self) -> &'static str {
        match self {
            ChainState::Starting => "starting",
            ChainState::Following => "following",
            ChainState::Failing => "failing",
            ChainState::Stopped => "stopped",
        }
    }
}

/// One chain's follower and endpoints.
#[derive(Debug)]
pub struct ChainHealth {
    chain_id: u64,
    name: String,
    /// Unobserved handles log nothing: the follower's own handle tells the operator.
    logs: bool,
    state: Mutex<ChainNow>,
}

#[derive(Debug)]
struct ChainNow {
    state: ChainState,
    error: Option<String>,
    since: SystemTime,
    endpoints: Vec<Endpoint>,
}

impl ChainHealth {
    fn new(chain_id: u64, name: &str, endpoints: impl IntoIterator<Item = String>) -> Self {
        Self {
            chain_id,
            name: name.to_string(),
            logs: true,
            state: Mutex::new(ChainNow {
                state: ChainState::Starting,
                error: None,
                since: SystemTime::now(),
                endpoints: endpoints.into_iter().map(Endpoint::new).collect(),
            }),
        }
    }

    /// A handle nobody reads, for RPC access outside a follower (the documents worker, tools).
    pub fn unobserved(chain_id: u64, name: &str, endpoints: Vec<String>) -> Arc<Self> {
        Arc::new(Self {
            logs: false,
            ..Self::new(chain_id, name, endpoints)
        })
    }

    /// Whether endpoint `index` has answered at least once.
    pub fn has_answered(&self, index: usize) -> bool {
        lock(&self.state)
            .endpoints
            .get(index)
            .is_some_and(|e| e.last_answer.is_some())
    }

    /// Endpoint `index` answered (an error about the request, such as a revert or a range
    /// refusal, counts: the endpoint is there).
    pub fn answered(&self, index: usize) {
        let mut now = lock(&self.state);
        let Some(endpoint) = now.endpoints.get_mut(index) else {
            return;
        };
        let ended = endpoint.answered().filter(|p| *p != Problem::Failing);
        if let Some(problem) = ended.filter(|_| self.logs) {
            tracing::info!(target: "agentindex::health", chain = %self.name, endpoint = %endpoint.url, was = problem.label(), "endpoint answers again");
        }
    }

    /// Endpoint `index` has not answered its first request within `waited` (it may still).
    pub fn silent(&self, index: usize, waited: Duration) {
        let error = format!(
            "no answer within {:.1} s of the first request",
            waited.as_secs_f64()
        );
        self.failed(index, Problem::Silent, &error);
    }

    /// Endpoint `index` failed with `problem`; `error` says how (no secrets: redacted).
    pub fn failed(&self, index: usize, problem: Problem, error: &str) {
        let mut now = lock(&self.state);
        let Some(endpoint) = now.endpoints.get_mut(index) else {
            return;
        };
        if !endpoint.failed(problem, error) || !self.logs {
            return;
        }
        // A busy provider's 429s and 5xx come and go; the follower's own warning covers a
        // step that fails for them. Every other problem is news an operator should see at once.
        if problem == Problem::Failing {
            tracing::debug!(target: "agentindex::health", chain = %self.name, endpoint = %endpoint.url, %error, "endpoint answers with errors");
            return;
        }
        tracing::warn!(
            target: "agentindex::health",
            chain = %self.name,
            endpoint = %endpoint.url,
            %error,
            check = %problem.check(),
            "{}",
            problem.headline()
        );
    }

    /// The follower's step succeeded.
    pub fn step_succeeded(&self) {
        let mut now = lock(&self.state);
        if now.state != ChainState::Following {
            now.state = ChainState::Following;
            now.since = SystemTime::now();
        }
        now.error = None;
    }

    /// The follower's step failed with `error`; `fatal` when the follower stops.
    pub fn step_failed(&self, error: &str, fatal: bool) {
        let mut now = lock(&self.state);
        let state = match fatal {
            true => ChainState::Stopped,
            false => ChainState::Failing,
        };
        if now.state != state {
            now.state = state;
            now.since = SystemTime::now();
        }
        now.error = Some(error.to_string());
    }

    /// What is known now.
    pub fn report(&self) -> ChainReport {
        let now = lock(&self.state);
        let endpoints: Vec<EndpointReport> = now.endpoints.iter().map(Endpoint::report).collect();
        // The chain's own error, else the first endpoint problem: what to look at first.
        let check = endpoints
            .iter()
            .find_map(|e| e.check.clone())
            .filter(|_| now.state != ChainState::Following);
        ChainReport {
            chain_id: self.chain_id,
            name: self.name.clone(),
            state: now.state,
            error: now.error.clone(),
            check,
            since: unix_seconds(now.since),
            endpoints,
        }
    }
}

/// A chain's health as `/status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ChainReport {
    /// Chain id.
    pub chain_id: u64,
    /// Configured name.
    pub name: String,
    /// Where its follower stands.
    pub state: ChainState,
    /// The last step's error while it is failing or stopped.
    pub error: Option<String>,
    /// What to check first, while the chain is not following.
    pub check: Option<String>,
    /// When `state` began, in Unix seconds.
    pub since: u64,
    /// Each configured endpoint.
    pub endpoints: Vec<EndpointReport>,
}

impl ChainReport {
    /// One line for an operator: the chain, what is wrong and what to check; `None` while it
    /// follows.
    pub fn trouble(&self) -> Option<String> {
        if self.state == ChainState::Following {
            return None;
        }
        let mut line = format!(
            "chain {} ({}): {}",
            self.name,
            self.chain_id,
            state_words(self.state)
        );
        for endpoint in self.endpoints.iter().filter(|e| e.error.is_some()) {
            line += &format!(
                "; {} {}: {}",
                endpoint.url,
                endpoint.state.label(),
                endpoint.error.as_deref().unwrap_or_default()
            );
        }
        if let Some(error) = &self.error {
            line += &format!("; last error: {error}");
        }
        if let Some(check) = &self.check {
            line += &format!("; check: {check}");
        }
        Some(line)
    }
}

fn state_words(state: ChainState) -> &'static str {
    match state {
        ChainState::Starting => "starting, no step done yet",
        ChainState::Following => "following",
        ChainState::Failing => "failing, retrying with backoff",
        ChainState::Stopped => "stopped",
    }
}

fn unix_seconds(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A poisoned lock still holds consistent plain data here (every update is a few assignments).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
