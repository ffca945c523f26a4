//! `agentindex-emulator`: the provider emulator as a process, for benchmarks that run clients
//! of their own (Ponder) through the same limits as agentindex.

use agentindex_emulator::{Emulator, Limits, Provider};
use clap::Parser;
use std::time::Duration;

/// A hosted RPC provider on loopback in front of a node.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The node to forward to.
    #[arg(long)]
    upstream: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8545")]
    listen: String,
    /// Milliseconds added to every answer.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Requests per second before answers are 429.
    #[arg(long)]
    requests_per_second: Option<u32>,
    /// Requests allowed at once above the rate (the rate by default).
    #[arg(long)]
    burst: Option<u32>,
    /// Widest eth_getLogs block range served.
    #[arg(long)]
    max_block_range: Option<u64>,
    /// Most logs one eth_getLogs may return.
    #[arg(long)]
    max_results: Option<usize>,
    /// Whose words the refusals are in.
    #[arg(long, value_enum, default_value = "alchemy")]
    provider: Provider,
    /// Share of requests answered with a random fault (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    fault_rate: f64,
    /// The API key requests must end their path with; others are answered 401.
    #[arg(long)]
    api_key: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let limits = Limits {
        latency: Duration::from_millis(args.latency_ms),
        requests_per_second: args.requests_per_second,
        burst: args.burst,
        max_block_range: args.max_block_range,
        max_results: args.max_results,
        provider: args.provider,
        fault_rate: args.fault_rate,
        api_key: args.api_key,
        ..Limits::default()
    };
    let emulator = Emulator::start_on(&args.listen, &args.upstream, limits).await?;
    println!("{}", emulator.url());
    tokio::signal::ctrl_c().await?;
    println!("{}", emulator.counters().to_json());
    Ok(())
}
