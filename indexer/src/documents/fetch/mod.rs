//! Fetching documents from the open web, safely: only from addresses [`AddressRules::refusal`]
//! allows (checked on every DNS answer and on every redirect hop; hosts listed in
//! `private_hosts_allowed` may be private, nothing else), with a size cap, connect and per-attempt
//! timeouts, a deadline over all attempts of one document, a redirect limit, a rate limit per
//! host, a global concurrency limit, retries with backoff for transient failures, and
//! conditional requests (ETag / Last-Modified).
//!
//! This file holds the [`Fetcher`] and its retries within a document's deadline; `policy.rs` the
//! limits, `client.rs` the address checks, `attempt.rs` one attempt with its redirects,
//! `request.rs` one request of any method whose answer is whatever the server says (the
//! prober's), and `error.rs` the errors.

mod attempt;
mod client;
mod error;
mod policy;
mod request;

pub use error::FetchError;
pub use policy::FetchPolicy;
pub use request::{Answer, Request};

use crate::documents::address::AddressRules;
use client::build_client;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::Url;

/// Validators of an earlier fetch, for a conditional request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag` the server gave.
    pub etag: Option<String>,
    /// The `Last-Modified` the server gave.
    pub last_modified: Option<String>,
}

/// What a fetch brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// A body.
    Body {
        /// Its bytes.
        bytes: Vec<u8>,
        /// The URL it came from after redirects.
        final_url: Url,
        /// Its `Content-Type`.
        content_type: Option<String>,
        /// Validators for the next conditional request.
        validators: Validators,
    },
    /// The server says the document is unchanged since `validators`.
    NotModified,
}

/// Fetches documents under a [`FetchPolicy`]. Cheap to clone.
#[derive(Clone)]
pub struct Fetcher {
    /// Connects only where the policy's address rules allow.
    client: reqwest::Client,
    /// Also connects to loopback and private addresses: used only for URLs on a listed private
    /// host, when the policy does not open private ranges to everything already.
    private_client: Option<reqwest::Client>,
    policy: FetchPolicy,
    /// The address rules both clients' DNS answers and literal addresses are judged by.
    rules: AddressRules,
    per_host: Arc<DefaultKeyedRateLimiter<String>>,
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("policy", &self.policy)
            .finish()
    }
}

impl Fetcher {
    /// A fetcher under `policy`.
    pub fn new(policy: FetchPolicy) -> Result<Self, FetchError> {
        let rules = AddressRules::new(&policy.nat64_prefixes);
        let client = build_client(&policy, &rules, policy.allow_private)?;
        let private_client = if policy.allow_private || policy.private_hosts.is_empty() {
            None
        } else {
            Some(build_client(&policy, &rules, true)?)
        };
        let rate = NonZeroU32::new(policy.per_host_per_second.max(1)).expect("at least one");
        let per_host = match policy.per_host_min_interval {
            Some(interval) => Quota::with_period(interval.max(Duration::from_millis(1)))
                .expect("a period of at least a millisecond"),
            None => Quota::per_second(rate),
        }
        .allow_burst(NonZeroU32::new(policy.per_host_burst.max(1)).expect("at least one"));
        Ok(Self {
            client,
            private_client,
            per_host: Arc::new(RateLimiter::keyed(per_host)),
            slots: Arc::new(Semaphore::new(policy.concurrency.max(1))),
            rules,
            policy,
        })
    }

    /// Forgets the hosts not asked lately (the per-host limiter keeps a cell per host it ever
    /// saw otherwise).
    pub fn forget_idle_hosts(&self) {
        self.per_host.retain_recent();
        self.per_host.shrink_to_fit();
    }

    /// The policy in force.
    pub fn policy(&self) -> &FetchPolicy {
        &self.policy
    }

    /// When a document whose fetching starts now must be done.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.policy.deadline
    }

    /// Fetches `url`, retrying transient failures with backoff, within the policy's deadline.
    pub async fn fetch(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Fetched, FetchError> {
        self.fetch_until(url, validators, self.deadline()).await
    }

    /// Fetches `url`, retrying transient failures with backoff, and gives up at `deadline`
    /// whatever is under way (a body trickling in, a backoff, a redirect).
    pub async fn fetch_until(
        &self,
        url: &Url,
        validators: Option<&Validators>,
        deadline: Instant,
    ) -> Result<Fetched, FetchError> {
        let passed = || FetchError::Deadline {
            url: url.to_string(),
            seconds: self.policy.deadline.as_secs(),
        };
        if Instant::now() >= deadline {
            return Err(passed());
        }
        let attempts = async {
            let mut attempt = 0;
            loop {
                match self.fetch_once(url, validators).await {
                    Err(error) if error.is_retryable() && attempt < self.policy.retries => {
                        attempt += 1;
                        let jitter = rand::random::<u64>() % 100;
                        let backoff = Duration::from_millis((200 << attempt) + jitter);
                        if Instant::now() + backoff >= deadline {
                            return Err(error);
                        }
                        tokio::time::sleep(backoff).await;
                    }
                    other => return other,
                }
            }
        };
        tokio::time::timeout_at(deadline, attempts)
            .await
            .unwrap_or_else(|_| Err(passed()))
    }
}
