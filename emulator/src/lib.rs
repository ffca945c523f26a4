//! A hosted RPC provider on loopback, for tests and benchmarks: a JSON-RPC proxy in front of a
//! node (anvil) that answers the way Alchemy, Infura, QuickNode and the rest do when a client
//! meets their limits.
//!
//! It adds a round-trip latency to every answer, a rate limit answered with 429, caps on the
//! block range and on the number of results of `eth_getLogs` answered in a chosen provider's
//! words ([`wording`]), random faults, and counts requests and compute units per method
//! ([`Counters`]). Start it with [`Emulator::start`], or as a process with the
//! `agentindex-emulator` binary.

pub mod costs;
mod counters;
mod server;
pub mod wording;

pub use counters::Counters;
pub use wording::{Provider, Refusal};

use std::sync::Arc;
use std::time::Duration;

/// The limits and manners of the emulated provider. The default forwards everything at once.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Added to every answer: the round trip to a hosted provider.
    pub latency: Duration,
    /// Requests per second before answers are 429 (a batch counts each call); none by default.
    pub requests_per_second: Option<u32>,
    /// Requests allowed at once above the rate (a token bucket's size); the rate by default.
    pub burst: Option<u32>,
    /// Widest `eth_getLogs` block range served.
    pub max_block_range: Option<u64>,
    /// Most logs one `eth_getLogs` may return.
    pub max_results: Option<usize>,
    /// Whose words the refusals are in.
    pub provider: Provider,
    /// Share of requests (0 to 1) answered with a random fault instead.
    pub fault_rate: f64,
    /// How long a stalled answer waits before it comes (set it above the client's timeout).
    pub stall: Duration,
    /// Seed of the fault dice, so a run can be repeated.
    pub seed: u64,
    /// The API key requests must carry as the last segment of their path (`/v2/KEY`, as
    /// Alchemy and Infura take it); others are refused with 401 in the provider's words.
    /// None by default: any path is served.
    pub api_key: Option<String>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            latency: Duration::ZERO,
            requests_per_second: None,
            burst: None,
            max_block_range: None,
            max_results: None,
            provider: Provider::Plain,
            fault_rate: 0.0,
            stall: Duration::from_secs(2),
            seed: 1,
            api_key: None,
        }
    }
}

/// Why the emulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// The listening socket.
    #[error("binding {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// A running emulator; dropping it stops it.
#[derive(Debug)]
pub struct Emulator {
    url: String,
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

impl Emulator {
    /// Starts an emulator in front of `upstream` on a free loopback port.
    pub async fn start(upstream: &str, limits: Limits) -> Result<Self, EmulatorError> {
        Self::start_on("127.0.0.1:0", upstream, limits).await
    }

    /// Starts an emulator in front of `upstream` listening on `address`.
    pub async fn start_on(
        address: &str,
        upstream: &str,
        limits: Limits,
    ) -> Result<Self, EmulatorError> {
        let bind_error = |source| EmulatorError::Bind {
            address: address.to_string(),
            source,
        };
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(bind_error)?;
        let local = listener.local_addr().map_err(bind_error)?;
        let counters = Arc::new(Counters::default());
        let app = server::router(upstream, limits, counters.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            url: format!("http://{local}"),
            counters,
            task,
        })
    }

    /// The URL clients send JSON-RPC to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What it has seen so far.
    pub fn counters(&self) -> &Arc<Counters> {
        &self.counters
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.task.abort();
    }
}
