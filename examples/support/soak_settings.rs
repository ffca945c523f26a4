//! The soak benchmark's knobs, from the environment: how much of a Base day to run and how fast,
//! the provider's manners, and the side traffic on the API.

use agentindex_emulator::{Limits, Provider};
use std::time::Duration;

/// Seconds between Base blocks: the chain's own clock, whatever the compression.
pub(crate) const BLOCK_SECONDS: u64 = 2;
/// Blocks in a Base day.
pub(crate) const DAY_BLOCKS: u64 = 43_200;
/// Blocks in a Base hour.
pub(crate) const HOUR_BLOCKS: u64 = 1_800;

pub(crate) struct Settings {
    /// The agentindex binary (a release build).
    pub(crate) binary: String,
    /// Blocks to make: a day with `--day`, else `SOAK_BLOCKS` (3,600: two Base hours).
    pub(crate) blocks: u64,
    /// Wall time per block: 2 s of chain time in `block_wall` (100 ms: 20 times faster).
    pub(crate) block_wall: Duration,
    /// Agents registered (with wallets) before the run.
    pub(crate) agents: u64,
    /// Blocks between two samples.
    pub(crate) sample_every: u64,
    /// The provider's round trip and request budget (its budget scaled by the compression, so
    /// the requests per block it allows are Base's).
    pub(crate) latency: Duration,
    pub(crate) rps: u32,
    /// Share of requests answered with a fault.
    pub(crate) fault_rate: f64,
    /// API requests per second on the side.
    pub(crate) api_rps: u32,
}

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How many times faster than Base a block every `block_wall` is.
fn compression(block_wall: Duration) -> f64 {
    (BLOCK_SECONDS * 1_000) as f64 / block_wall.as_millis().max(1) as f64
}

impl Settings {
    pub(crate) fn from_env_and_args() -> Self {
        let day = std::env::args().any(|a| a == "--day");
        let blocks = match day {
            true => DAY_BLOCKS,
            false => env_or("SOAK_BLOCKS", 2 * HOUR_BLOCKS),
        };
        let block_wall = Duration::from_millis(env_or("SOAK_BLOCK_MS", 100));
        Self {
            binary: std::env::var("AGENTINDEX_BIN")
                .unwrap_or_else(|_| "target/release/agentindex".into()),
            blocks,
            block_wall,
            agents: env_or("SOAK_AGENTS", 10_000),
            // An hour of chain time between samples for a day; 24 samples for a shorter run.
            sample_every: env_or(
                "SOAK_SAMPLE_BLOCKS",
                match day {
                    true => HOUR_BLOCKS,
                    false => (blocks / 24).max(1),
                },
            ),
            latency: Duration::from_millis(env_or("SOAK_LATENCY_MS", 80)),
            rps: env_or("SOAK_RPS", (25.0 * compression(block_wall)).round() as u32),
            fault_rate: env_or("SOAK_FAULT_RATE", 0.01),
            api_rps: env_or("SOAK_API_RPS", 20),
        }
    }

    /// How many times faster than Base the chain is paced.
    pub(crate) fn compression(&self) -> f64 {
        compression(self.block_wall)
    }

    /// The emulated provider: Alchemy's caps and words, the budget, the fault mix.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            latency: self.latency,
            requests_per_second: Some(self.rps),
            max_block_range: Some(2_000),
            max_results: Some(10_000),
            provider: Provider::Alchemy,
            fault_rate: self.fault_rate,
            stall: Duration::from_secs(3),
            ..Limits::default()
        }
    }
}
