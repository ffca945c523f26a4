//! One endpoint's state: answering, or the problem it last showed, with what an operator should
//! check for each kind of problem.

use super::unix_seconds;
use serde::Serialize;
use std::time::SystemTime;

/// What is wrong with an endpoint, as far as a client can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Nothing accepts the connection (refused, no such host, TLS failure).
    Unreachable,
    /// Connected, but no answer came in time.
    Silent,
    /// The provider refused the credentials (HTTP 401/403, "invalid API key").
    Rejected,
    /// It serves another chain than the configured one.
    WrongChain,
    /// It answers with errors (5xx, rate limits, malformed answers).
    Failing,
    /// It lacks a method agentindex needs.
    Unsupported,
}

impl Problem {
    /// The problem's name, as `/status` shows it in an endpoint's `state`.
    pub fn label(self) -> &'static str {
        self.state().label()
    }

    fn state(self) -> EndpointState {
        match self {
            Problem::Unreachable => EndpointState::Unreachable,
            Problem::Silent => EndpointState::Silent,
            Problem::Rejected => EndpointState::Rejected,
            Problem::WrongChain => EndpointState::WrongChain,
            Problem::Failing => EndpointState::Failing,
            Problem::Unsupported => EndpointState::Unsupported,
        }
    }

    /// The log line's message.
    pub fn headline(self) -> &'static str {
        match self {
            Problem::Unreachable => "endpoint unreachable",
            Problem::Silent => "endpoint does not answer",
            Problem::Rejected => "endpoint rejects the request's credentials",
            Problem::WrongChain => "endpoint serves another chain; it is not used",
            Problem::Failing => "endpoint answers with errors",
            Problem::Unsupported => "endpoint lacks a method agentindex needs",
        }
    }

    /// What an operator should check.
    pub fn check(self) -> &'static str {
        match self {
            Problem::Unreachable => {
                "the URL's host and port, and that the node or provider is up and reachable from this machine"
            }
            Problem::Silent => {
                "that the URL is a JSON-RPC endpoint (its path included) and that the node is not overloaded or still starting"
            }
            Problem::Rejected => {
                "the API key in the URL (mistyped, revoked, or over its plan), and the provider's allow-list of origins and IP addresses"
            }
            Problem::WrongChain => {
                "that the URL is this chain's (a mainnet URL for a testnet chain, or the other way round) and the chain's chain_id"
            }
            Problem::Failing => {
                "the provider's status page and rate limits; agentindex retries with backoff and moves to the next endpoint"
            }
            Problem::Unsupported => "use a full node or a provider that serves eth_getLogs",
        }
    }
}

/// An endpoint's state as `/status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointState {
    /// Not asked anything yet.
    Unknown,
    /// Its last answer was an answer.
    Answering,
    /// See [`Problem::Unreachable`].
    Unreachable,
    /// See [`Problem::Silent`].
    Silent,
    /// See [`Problem::Rejected`].
    Rejected,
    /// See [`Problem::WrongChain`].
    WrongChain,
    /// See [`Problem::Failing`].
    Failing,
    /// See [`Problem::Unsupported`].
    Unsupported,
}

impl EndpointState {
    /// The state's name.
    pub fn label(self) -> &'static str {
        match self {
            EndpointState::Unknown => "unknown",
            EndpointState::Answering => "answering",
            EndpointState::Unreachable => "unreachable",
            EndpointState::Silent => "silent",
            EndpointState::Rejected => "rejected",
            EndpointState::WrongChain => "wrong_chain",
            EndpointState::Failing => "failing",
            EndpointState::Unsupported => "unsupported",
        }
    }
}

/// An endpoint's health as `/status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointReport {
    /// The URL, its key redacted.
    pub url: String,
    /// What it did last.
    pub state: EndpointState,
    /// The last failure's words, while it is failing.
    pub error: Option<String>,
    /// What to check, while it is failing.
    pub check: Option<String>,
    /// When `state` began, in Unix seconds.
    pub since: u64,
    /// When it last answered, in Unix seconds.
    pub last_answer: Option<u64>,
}

#[derive(Debug)]
pub(super) struct Endpoint {
    pub(super) url: String,
    problem: Option<Problem>,
    asked: bool,
    error: Option<String>,
    since: SystemTime,
    pub(super) last_answer: Option<SystemTime>,
}

impl Endpoint {
    pub(super) fn new(url: String) -> Self {
        Self {
            url,
            problem: None,
            asked: false,
            error: None,
            since: SystemTime::now(),
            last_answer: None,
        }
    }

    /// Records an answer; the problem it ends, if any.
    pub(super) fn answered(&mut self) -> Option<Problem> {
        let now = SystemTime::now();
        let ended = self.problem.take();
        // A wrong chain is a fact about the endpoint, not a passing failure: it stays.
        if ended == Some(Problem::WrongChain) {
            self.problem = ended;
            self.last_answer = Some(now);
            return None;
        }
        if ended.is_some() || !self.asked {
            self.since = now;
        }
        self.asked = true;
        self.error = None;
        self.last_answer = Some(now);
        ended
    }

    /// Records a failure; whether it is news (a change of state worth a log line).
    pub(super) fn failed(&mut self, problem: Problem, error: &str) -> bool {
        let news = self.problem != Some(problem);
        if news {
            self.since = SystemTime::now();
        }
        self.asked = true;
        self.problem = Some(problem);
        self.error = Some(error.to_string());
        news
    }

    pub(super) fn report(&self) -> EndpointReport {
        let state = match (self.problem, self.asked) {
            (Some(problem), _) => problem.state(),
            (None, true) => EndpointState::Answering,
            (None, false) => EndpointState::Unknown,
        };
        EndpointReport {
            url: self.url.clone(),
            state,
            error: self.error.clone(),
            check: self.problem.map(|p| p.check().to_string()),
            since: unix_seconds(self.since),
            last_answer: self.last_answer.map(unix_seconds),
        }
    }
}
