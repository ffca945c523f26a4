//! The RPC layer of one chain: several endpoints with failover, retries with exponential backoff
//! and jitter on transient errors, a rate limit per endpoint, a bound on requests in flight, and
//! a timeout per request.
//!
//! Callers ask for what they need ([`ChainRpc::logs`], [`ChainRpc::header`], …) and get either
//! the answer or a classified [`RpcError`]; errors that mean "narrow the range" come back at once
//! so the follower can split, everything else transient is retried here first.
//!
//! Every outcome is written to the chain's [`ChainHealth`]: an endpoint that refuses, stays
//! silent past [`FIRST_ANSWER_PATIENCE`] on its first request, or rejects its key is reported
//! there (and so logged) at once, before any retry. Endpoints found serving another chain
//! ([`ChainRpc::verify_endpoints`], in `chain_check.rs`) are left out of the rotation.

mod chain_check;
mod classify;
mod error;
mod phrases;

pub use chain_check::ChainCheck;

pub use error::{RpcError, RpcErrorKind};

use crate::config::ChainConfig;
use crate::health::ChainHealth;
use crate::metrics::metrics;
use crate::primitives::BlockRef;
use crate::redact;
use alloy::eips::{BlockId, BlockNumberOrTag};
use alloy::primitives::{Address, B256, Bytes};
use alloy::providers::{Provider, ProviderBuilder, RootProvider};
use alloy::rpc::types::TransactionRequest;
use alloy::rpc::types::{Filter, Log};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use rand::Rng;
use std::future::Future;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How hard to try before giving up on a request.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts over all endpoints before the error is returned.
    pub attempts: u32,
    /// First backoff.
    pub base_delay: Duration,
    /// Longest backoff.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
        }
    }
}

/// How long an endpoint that never answered may keep its first request before it is reported
/// silent (the request goes on waiting, up to the request timeout).
pub const FIRST_ANSWER_PATIENCE: Duration = Duration::from_millis(1500);

struct Endpoint {
    /// The URL as logs, errors and metrics may show it ([`redact::url`]): providers put API
    /// keys in the path or query.
    shown: String,
    provider: RootProvider,
    limiter: DefaultDirectRateLimiter,
    /// Found serving another chain: never asked again.
    excluded: AtomicBool,
}

/// RPC access to one chain through its configured endpoints.
#[derive(Clone)]
pub struct ChainRpc {
    endpoints: Arc<Vec<Endpoint>>,
    /// The endpoint that answered last; requests start there.
    preferred: Arc<AtomicUsize>,
    /// Requests in flight at once, over all endpoints (`rpc_concurrency`).
    in_flight: Arc<Semaphore>,
    timeout: Duration,
    retry: RetryPolicy,
    health: Arc<ChainHealth>,
}

impl std::fmt::Debug for ChainRpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let urls: Vec<&str> = self.endpoints.iter().map(|e| e.shown.as_str()).collect();
        f.debug_struct("ChainRpc")
            .field("endpoints", &urls)
            .finish()
    }
}

impl ChainRpc {
    /// Connects (lazily) to every endpoint of `chain`.
    pub fn new(chain: &ChainConfig, retry: RetryPolicy) -> Result<Self, RpcError> {
        let rate = NonZeroU32::new(chain.requests_per_second).unwrap_or(NonZeroU32::MIN);
        let mut endpoints = Vec::new();
        for url in &chain.rpc {
            let parsed = url.parse().map_err(|e| RpcError {
                method: "connect",
                endpoint: redact::url(url),
                kind: RpcErrorKind::Unsupported(redact::text(&format!("not a URL: {e}"))),
            })?;
            endpoints.push(Endpoint {
                shown: redact::url(url),
                provider: ProviderBuilder::new()
                    .disable_recommended_fillers()
                    .connect_http(parsed),
                limiter: RateLimiter::direct(Quota::per_second(rate)),
                excluded: AtomicBool::new(false),
            });
        }
        let shown = endpoints.iter().map(|e| e.shown.clone()).collect();
        Ok(Self {
            health: ChainHealth::unobserved(chain.chain_id, &chain.name, shown),
            endpoints: Arc::new(endpoints),
            preferred: Arc::new(AtomicUsize::new(0)),
            in_flight: Arc::new(Semaphore::new(chain.rpc_concurrency.max(1))),
            timeout: Duration::from_secs(chain.request_timeout_secs.max(1)),
            retry,
        })
    }

    /// The same access, writing what it meets to `health` (registered with the endpoints'
    /// shown URLs, in the configured order).
    pub fn reporting_to(mut self, health: Arc<ChainHealth>) -> Self {
        self.health = health;
        self
    }

    /// The health this access writes to.
    pub fn health(&self) -> &Arc<ChainHealth> {
        &self.health
    }

    /// The endpoints' URLs as logs may show them, in the configured order.
    pub fn shown_urls(&self) -> Vec<String> {
        self.endpoints.iter().map(|e| e.shown.clone()).collect()
    }

    /// The next endpoint after `index` still in the rotation (`index` itself when it is the
    /// only one).
    fn next_endpoint(&self, index: usize) -> usize {
        let count = self.endpoints.len();
        (1..=count)
            .map(|step| (index + step) % count)
            .find(|&i| !self.endpoints[i].excluded.load(Ordering::Relaxed))
            .unwrap_or(index)
    }

    /// Sends `request` to endpoint `index` within the timeout; while the endpoint has never
    /// answered, a first request still waiting after [`FIRST_ANSWER_PATIENCE`] is reported
    /// silent at once, and waited for to the end of the timeout.
    async fn send<T>(
        &self,
        index: usize,
        request: impl Future<Output = T>,
    ) -> Result<T, tokio::time::error::Elapsed> {
        let patience = FIRST_ANSWER_PATIENCE.min(self.timeout);
        if self.health.has_answered(index) || patience == self.timeout {
            return tokio::time::timeout(self.timeout, request).await;
        }
        tokio::pin!(request);
        match tokio::time::timeout(patience, &mut request).await {
            Ok(answer) => Ok(answer),
            Err(_) => {
                self.health.silent(index, patience);
                tokio::time::timeout(self.timeout - patience, request).await
            }
        }
    }

    /// Runs `request` against the endpoints: rate-limited, timed out, retried with backoff on
    /// transient errors, moving to the next endpoint after each failure.
    async fn call<T, F, Fut>(&self, method: &'static str, request: F) -> Result<T, RpcError>
    where
        F: Fn(RootProvider) -> Fut,
        Fut: Future<
            Output = Result<T, alloy::transports::RpcError<alloy::transports::TransportErrorKind>>,
        >,
    {
        let count = self.endpoints.len();
        let preferred = self.preferred.load(Ordering::Relaxed) % count;
        let mut index = match self.endpoints[preferred].excluded.load(Ordering::Relaxed) {
            true => self.next_endpoint(preferred),
            false => preferred,
        };
        let mut attempt = 0;
        loop {
            let endpoint = &self.endpoints[index];
            let permit = self.in_flight.acquire().await;
            endpoint.limiter.until_ready().await;
            let started = std::time::Instant::now();
            let outcome = self.send(index, request(endpoint.provider.clone())).await;
            drop(permit);
            let kind = match outcome {
                Ok(Ok(value)) => {
                    metrics().rpc(&endpoint.shown, method, started.elapsed(), None);
                    self.health.answered(index);
                    self.preferred.store(index, Ordering::Relaxed);
                    return Ok(value);
                }
                // Transport errors quote the URL they failed on, key included.
                Ok(Err(error)) => classify::classify(&error).redacted(),
                Err(_) => RpcErrorKind::Silent(format!("no answer within {:?}", self.timeout)),
            };
            match kind.problem() {
                Some(problem) => self.health.failed(index, problem, &kind.to_string()),
                None => self.health.answered(index),
            }
            metrics().rpc(
                &endpoint.shown,
                method,
                started.elapsed(),
                Some(kind.label()),
            );
            attempt += 1;
            let error = RpcError {
                method,
                endpoint: endpoint.shown.clone(),
                kind,
            };
            // Rejected credentials are this endpoint's; another may hold good ones.
            let rejected_here = matches!(error.kind, RpcErrorKind::Rejected(_))
                && (attempt as usize) < count
                && self.next_endpoint(index) != index;
            if !(error.kind.is_retryable() || rejected_here) || attempt >= self.retry.attempts {
                return Err(error);
            }
            tracing::debug!(target: "agentindex::rpc", %error, attempt, "retrying");
            index = self.next_endpoint(index);
            // Back off once per round over all endpoints, so a dead first endpoint costs nothing.
            if (attempt as usize).is_multiple_of(count) {
                tokio::time::sleep(self.backoff(attempt)).await;
            }
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .retry
            .base_delay
            .saturating_mul(1 << attempt.min(16))
            .min(self.retry.max_delay);
        // Full jitter keeps many followers from retrying in step.
        let millis = rand::rng().random_range(exp.as_millis() as u64 / 2..=exp.as_millis() as u64);
        Duration::from_millis(millis.max(1))
    }

    /// `eth_chainId`.
    pub async fn chain_id(&self) -> Result<u64, RpcError> {
        self.call("eth_chainId", |p| async move { p.get_chain_id().await })
            .await
    }

    /// `eth_blockNumber`.
    pub async fn head(&self) -> Result<u64, RpcError> {
        self.call(
            "eth_blockNumber",
            |p| async move { p.get_block_number().await },
        )
        .await
    }

    /// The block at `tag` as a [`BlockRef`], `None` when the node has no such block.
    pub async fn header(&self, tag: BlockNumberOrTag) -> Result<Option<BlockRef>, RpcError> {
        let block = self
            .call("eth_getBlockByNumber", |p| async move {
                p.get_block_by_number(tag).await
            })
            .await?;
        Ok(block.map(|b| BlockRef {
            number: b.header.number,
            hash: b.header.hash,
            parent_hash: b.header.parent_hash,
            timestamp: b.header.timestamp,
        }))
    }

    /// `eth_call` of `data` to `to` in the state after block `block_hash` (EIP-1898, so a
    /// block replaced by a reorg fails rather than answering from its successor).
    pub async fn call_at(
        &self,
        to: Address,
        data: Bytes,
        block_hash: B256,
    ) -> Result<Bytes, RpcError> {
        self.call("eth_call", |p| {
            let request = TransactionRequest::default()
                .to(to)
                .input(data.clone().into());
            async move { p.call(request).block(BlockId::hash(block_hash)).await }
        })
        .await
    }

    /// `eth_call` of `data` to `to` in the state of the latest block.
    pub async fn call_latest(&self, to: Address, data: Bytes) -> Result<Bytes, RpcError> {
        self.call("eth_call", |p| {
            let request = TransactionRequest::default()
                .to(to)
                .input(data.clone().into());
            async move { p.call(request).block(BlockId::latest()).await }
        })
        .await
    }

    /// `eth_getCode` of `address` in the state after block `number` (needs an archive node for
    /// old blocks).
    pub async fn code_at(&self, address: Address, number: u64) -> Result<Bytes, RpcError> {
        self.call("eth_getCode", |p| async move {
            p.get_code_at(address)
                .block_id(BlockId::number(number))
                .await
        })
        .await
    }

    /// `eth_getLogs` for `filter`; range-limit errors come back unretried.
    pub async fn logs(&self, filter: &Filter) -> Result<Vec<Log>, RpcError> {
        self.call("eth_getLogs", |p| {
            let filter = filter.clone();
            async move { p.get_logs(&filter).await }
        })
        .await
    }
}
