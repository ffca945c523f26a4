//! Fetching documents from the open web, safely: only from addresses [`AddressRules::refusal`]
//! allows (checked on every DNS answer and on every redirect hop; hosts listed in
//! `private_hosts_allowed` may be private, nothing else), with a size cap, connect and per-attempt
//! timeouts, a deadline over all attempts of one document, a redirect limit, a rate limit per
//! host, a global concurrency limit, retries with backoff for transient failures, and
//! conditional requests (ETag / Last-Modified).

use super::address::{self, AddressRules};
use super::dns::{self, CheckedResolver};
use crate::config::{DocumentsConfig, Nat64Prefix, PrivateHost};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use reqwest::header::{self, HeaderMap, HeaderValue};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::Url;

/// The limits a fetch runs under.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// Opens loopback and private ranges (never link-local or metadata addresses).
    pub allow_private: bool,
    /// Whether plain `http://` may be fetched.
    pub allow_http: bool,
    /// Largest body accepted, in bytes.
    pub max_bytes: usize,
    /// Time to establish a connection.
    pub connect_timeout: Duration,
    /// Time for one attempt at one URL, redirects and body included.
    pub total_timeout: Duration,
    /// Time for everything done for one document: every attempt at every URL, backoff and a
    /// card's key sets included (`documents.fetch_deadline_secs`).
    pub deadline: Duration,
    /// Hosts fetched from even on loopback or private addresses.
    pub private_hosts: Vec<PrivateHost>,
    /// The NAT64 prefixes of the operator's network (`documents.nat64_prefixes`): addresses
    /// under them are judged as the IPv4 address they carry.
    pub nat64_prefixes: Vec<Nat64Prefix>,
    /// Redirects followed at most.
    pub max_redirects: usize,
    /// Requests per second to one host.
    pub per_host_per_second: u32,
    /// Fetches in flight at once, over all hosts.
    pub concurrency: usize,
    /// Attempts after the first for transient failures.
    pub retries: u32,
}

impl From<&DocumentsConfig> for FetchPolicy {
    fn from(config: &DocumentsConfig) -> Self {
        Self {
            allow_private: config.allow_private_addresses,
            allow_http: config.allow_http,
            per_host_per_second: config.requests_per_host_per_second,
            concurrency: config.concurrency,
            deadline: Duration::from_secs(config.fetch_deadline_secs.max(1)),
            private_hosts: config.private_hosts(),
            nat64_prefixes: config.nat64_prefixes.clone(),
            ..Self::default()
        }
    }
}

impl Default for FetchPolicy {
    fn default() -> Self {
        Self {
            allow_private: false,
            allow_http: false,
            max_bytes: 1 << 20,
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(15),
            deadline: Duration::from_secs(20),
            private_hosts: Vec::new(),
            nat64_prefixes: Vec::new(),
            max_redirects: 5,
            per_host_per_second: 5,
            concurrency: 32,
            retries: 2,
        }
    }
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The host is, or resolves to, an address documents may not come from.
    #[error("{url}: refused to fetch from {address}: {reason}")]
    Blocked {
        /// The URL.
        url: String,
        /// The address refused.
        address: String,
        /// Why.
        reason: &'static str,
    },
    /// A scheme other than https (or http when allowed).
    #[error("{url}: scheme not allowed")]
    Scheme {
        /// The URL.
        url: String,
    },
    /// The body is larger than the cap.
    #[error("{url}: body larger than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// The fetch took longer than the total timeout.
    #[error("{url}: no complete answer within {seconds} s")]
    Timeout {
        /// The URL.
        url: String,
        /// The timeout.
        seconds: u64,
    },
    /// Everything tried for one document took longer than the deadline.
    #[error(
        "{url}: no complete answer within the {seconds} s deadline for one document (documents.fetch_deadline_secs)"
    )]
    Deadline {
        /// The URL being fetched when the deadline passed.
        url: String,
        /// The deadline.
        seconds: u64,
    },
    /// More redirects than allowed, or a redirect loop.
    #[error("{url}: {reason}")]
    Redirects {
        /// The URL where it stopped.
        url: String,
        /// Too many, a loop, or a bad Location.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// Connecting, sending or reading failed.
    #[error("{url}: {reason}")]
    Network {
        /// The URL.
        url: String,
        /// What failed.
        reason: String,
    },
}

impl FetchError {
    /// Whether trying again later may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            FetchError::Timeout { .. }
            | FetchError::Deadline { .. }
            | FetchError::Network { .. } => true,
            FetchError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

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
        Ok(Self {
            client,
            private_client,
            per_host: Arc::new(RateLimiter::keyed(Quota::per_second(rate))),
            slots: Arc::new(Semaphore::new(policy.concurrency.max(1))),
            rules,
            policy,
        })
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

    /// One attempt, redirects included, within the per-attempt timeout.
    async fn fetch_once(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Fetched, FetchError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let seconds = self.policy.total_timeout.as_secs();
        tokio::time::timeout(self.policy.total_timeout, self.follow(url, validators))
            .await
            .unwrap_or_else(|_| {
                Err(FetchError::Timeout {
                    url: url.to_string(),
                    seconds,
                })
            })
    }

    /// Requests `url` and follows redirects, checking every hop.
    async fn follow(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Fetched, FetchError> {
        let mut current = url.clone();
        let mut seen = vec![current.clone()];
        for _ in 0..=self.policy.max_redirects {
            let client = self.check(&current)?;
            let host = current.host_str().unwrap_or_default().to_string();
            self.per_host.until_key_ready(&host).await;
            let mut request = client.get(current.clone()).header(
                header::ACCEPT,
                "application/json, application/a2a+json;q=0.9, */*;q=0.5",
            );
            if let Some(v) = validators {
                if let Some(etag) = &v.etag {
                    request = request.header(header::IF_NONE_MATCH, etag);
                }
                if let Some(modified) = &v.last_modified {
                    request = request.header(header::IF_MODIFIED_SINCE, modified);
                }
            }
            let response = request.send().await.map_err(|e| network(&current, &e))?;
            let status = response.status();
            if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
                let next = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| current.join(l).ok())
                    .ok_or_else(|| FetchError::Redirects {
                        url: current.to_string(),
                        reason: format!("HTTP {} without a usable Location", status.as_u16()),
                    })?;
                if seen.contains(&next) {
                    return Err(FetchError::Redirects {
                        url: next.to_string(),
                        reason: "redirect loop".into(),
                    });
                }
                seen.push(next.clone());
                current = next;
                continue;
            }
            if status == reqwest::StatusCode::NOT_MODIFIED {
                return Ok(Fetched::NotModified);
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: current.to_string(),
                    status: status.as_u16(),
                });
            }
            let headers = response.headers().clone();
            let bytes = self.read_capped(&current, response).await?;
            return Ok(Fetched::Body {
                bytes,
                content_type: text(&headers, header::CONTENT_TYPE),
                validators: Validators {
                    etag: text(&headers, header::ETAG),
                    last_modified: text(&headers, header::LAST_MODIFIED),
                },
                final_url: current,
            });
        }
        Err(FetchError::Redirects {
            url: current.to_string(),
            reason: format!("more than {} redirects", self.policy.max_redirects),
        })
    }

    /// Refuses schemes, metadata host names and literal addresses the policy does not allow,
    /// and picks the client whose address rules apply to `url`: the private one only for a
    /// listed private host.
    fn check(&self, url: &Url) -> Result<&reqwest::Client, FetchError> {
        match url.scheme() {
            "https" => {}
            "http" if self.policy.allow_http => {}
            _ => {
                return Err(FetchError::Scheme {
                    url: url.to_string(),
                });
            }
        }
        let listed = self.private_client.as_ref().filter(|_| {
            self.policy
                .private_hosts
                .iter()
                .any(|allowed| allowed.matches(url))
        });
        let allow_private = self.policy.allow_private || listed.is_some();
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) => {
                if let Some(reason) = address::name_refusal(name) {
                    return Err(FetchError::Blocked {
                        url: url.to_string(),
                        address: name.to_string(),
                        reason,
                    });
                }
                None
            }
            None => {
                return Err(FetchError::Scheme {
                    url: url.to_string(),
                });
            }
        };
        if let Some(ip) = literal
            && let Some(reason) = self.rules.refusal(ip, allow_private)
        {
            return Err(FetchError::Blocked {
                url: url.to_string(),
                address: ip.to_string(),
                reason,
            });
        }
        Ok(listed.unwrap_or(&self.client))
    }

    /// The body, refusing to read past the cap (also when Content-Length already says so).
    async fn read_capped(
        &self,
        url: &Url,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, FetchError> {
        let limit = self.policy.max_bytes;
        let too_large = || FetchError::TooLarge {
            url: url.to_string(),
            limit,
        };
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| network(url, &e))? {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .map(str::to_string)
}

/// The HTTP client for `policy`, whose DNS answers are judged by `rules` with private ranges
/// open or not.
fn build_client(
    policy: &FetchPolicy,
    rules: &AddressRules,
    allow_private: bool,
) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(policy.connect_timeout)
        .timeout(policy.total_timeout)
        .dns_resolver(Arc::new(CheckedResolver {
            allow_private,
            rules: rules.clone(),
        }))
        .user_agent(concat!("agentindex/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| FetchError::Network {
            url: String::new(),
            reason: format!("building the HTTP client: {e}"),
        })
}

/// A transport error, with the DNS refusal surfaced as [`FetchError::Blocked`].
fn network(url: &Url, error: &reqwest::Error) -> FetchError {
    let mut reason = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        reason = format!("{reason}: {inner}");
        source = inner.source();
    }
    if let Some(refused) = dns::refusal_in(&reason) {
        return FetchError::Blocked {
            url: url.to_string(),
            address: url.host_str().unwrap_or_default().to_string(),
            reason: refused,
        };
    }
    if error.is_timeout() {
        return FetchError::Timeout {
            url: url.to_string(),
            seconds: 0,
        };
    }
    FetchError::Network {
        url: url.to_string(),
        reason,
    }
}
