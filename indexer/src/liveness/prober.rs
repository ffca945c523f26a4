//! [`Prober`]: what every probe sends through. Each request waits first for the global budget
//! (requests per minute over every host) and then for the fetcher's per-host limit; a failed
//! request reads as a status and a reason (`unanswered`, `unexpected_status`). Which question
//! a probe asks is `dispatch.rs`'s.

use super::{LivenessPolicy, Outcome, Reason, Status, Target};
use crate::documents::{Answer, FetchError, Fetcher, Request};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use reqwest::header::HeaderName;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use url::Url;

/// Probes endpoints under a [`LivenessPolicy`]. Cheap to clone.
#[derive(Clone)]
pub struct Prober {
    fetcher: Fetcher,
    budget: Arc<DefaultDirectRateLimiter>,
    timeout: Duration,
    /// Per origin (`https://host:port`, as `url::Origin` writes it): the header sent to its
    /// extended-card calls.
    credentials: Arc<Vec<(String, HeaderName, String)>>,
}

impl std::fmt::Debug for Prober {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials are never shown: only the hosts they are for.
        let hosts: Vec<&str> = self
            .credentials
            .iter()
            .map(|(h, _, _)| h.as_str())
            .collect();
        f.debug_struct("Prober")
            .field("fetcher", &self.fetcher)
            .field("timeout", &self.timeout)
            .field("credential_origins", &hosts)
            .finish()
    }
}

impl Prober {
    /// A prober under `policy`.
    pub fn new(policy: &LivenessPolicy) -> Result<Self, FetchError> {
        let per_minute = NonZeroU32::new(policy.requests_per_minute.max(1)).expect("at least one");
        // A burst of a tenth of a minute's budget, so a quiet prober does not send a whole
        // minute's requests at once when work arrives.
        let burst =
            NonZeroU32::new((policy.requests_per_minute / 10).max(1)).expect("at least one");
        Ok(Self {
            fetcher: Fetcher::new(policy.fetch.clone())?,
            budget: Arc::new(RateLimiter::direct(
                Quota::per_minute(per_minute).allow_burst(burst),
            )),
            timeout: policy.probe_timeout,
            credentials: Arc::new(
                (policy.credentials.iter())
                    .filter_map(|c| {
                        let name = HeaderName::from_bytes(c.header.as_bytes()).ok()?;
                        let origin = Url::parse(&c.origin).ok()?.origin().ascii_serialization();
                        Some((origin, name, c.value.clone()))
                    })
                    .collect(),
            ),
        })
    }

    /// How long one probe may take.
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Forgets the hosts not asked lately (see [`Fetcher::forget_idle_hosts`]).
    pub fn forget_idle_hosts(&self) {
        self.fetcher.forget_idle_hosts();
    }

    /// The credential the operator configured for `url`'s origin (scheme, host and port), if
    /// any.
    pub(super) fn credential(&self, url: &Url) -> Option<(&HeaderName, &str)> {
        let origin = url.origin().ascii_serialization();
        self.credentials
            .iter()
            .find(|(o, _, _)| *o == origin)
            .map(|(_, name, value)| (name, value.as_str()))
    }

    /// Sends `request` once the budget allows, giving up at `deadline`; the answer with the
    /// milliseconds it took.
    pub(super) async fn send(
        &self,
        request: &Request,
        deadline: Instant,
    ) -> Result<(Answer, i64), FetchError> {
        self.budget.until_ready().await;
        let started = Instant::now();
        let answer = self.fetcher.request(request, deadline).await?;
        Ok((answer, started.elapsed().as_millis() as i64))
    }
}

/// The outcome of a request that got no answer.
pub(super) fn unanswered(target: &Target, error: &FetchError) -> Outcome {
    let (status, reason) = match error {
        FetchError::Blocked { .. } => (Status::Blocked, Reason::Blocked),
        FetchError::Scheme { .. } => (Status::Blocked, Reason::Unsupported),
        FetchError::TooLarge { .. } => (Status::Degraded, Reason::TooLarge),
        FetchError::Timeout { .. } | FetchError::Deadline { .. } => (Status::Down, Reason::Timeout),
        FetchError::Redirects { .. } => (Status::Down, Reason::Redirect),
        FetchError::Status { .. } => (Status::Down, Reason::HttpStatus),
        FetchError::Network { .. } => (Status::Down, Reason::Connect),
    };
    // Where a refused name points is not told (it would map the operator's own network).
    let said = match error {
        FetchError::Blocked { .. } => {
            "refused: the address rules do not allow where it points".into()
        }
        _ => error.to_string(),
    };
    Outcome::of(target, status).failed(status, reason, said)
}

/// The outcome of an answer with a status its protocol does not answer with: a server error
/// (or a redirect not followed) is down, any other status degraded.
pub(super) fn unexpected_status(target: &Target, answer: &Answer, latency_ms: i64) -> Outcome {
    let status = if answer.status >= 500 || (300..400).contains(&answer.status) {
        Status::Down
    } else {
        Status::Degraded
    };
    let reason = if (300..400).contains(&answer.status) {
        Reason::Redirect
    } else {
        Reason::HttpStatus
    };
    let mut outcome = Outcome::of(target, status).failed(
        status,
        reason,
        format!("{} answered HTTP {}", answer.final_url, answer.status),
    );
    outcome.latency_ms = Some(latency_ms);
    outcome.http_status = Some(answer.status);
    outcome
}

/// An outcome of `target` that answered `answer` in `latency_ms`, with `status`.
pub(super) fn answered(
    target: &Target,
    answer: &Answer,
    latency_ms: i64,
    status: Status,
) -> Outcome {
    let mut outcome = Outcome::of(target, status);
    outcome.latency_ms = Some(latency_ms);
    outcome.http_status = Some(answer.status);
    outcome
}

/// A made-up id for a question whose answer must be "not found": random, so no real task or
/// session is ever touched.
pub(super) fn unknown_id() -> String {
    format!("agentindex-probe-{:016x}", rand::random::<u64>())
}
