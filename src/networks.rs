//! `agentindex networks`: the network presets, one line each, as `--network NAME --rpc URL`
//! and `network = "NAME"` accept them.

use agentindex_indexer::config::networks::NETWORKS;
use agentindex_indexer::primitives::CardanoNetwork;
use std::io::Write;
use std::process::ExitCode;

/// Prints every preset: name, chain id, kind, registries, start block and USDC; then the
/// Cardano networks Masumi's registry is followed on.
pub(crate) fn run() -> ExitCode {
    // A closed pipe (`agentindex networks | head`) ends the listing quietly.
    match print(&mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: writing the list: {error}");
            ExitCode::FAILURE
        }
    }
}

fn print(out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<20} {:>10}  {:<7}  {:<42}  {:<42}  {:<42}  {:<10}  USDC",
        "NETWORK", "CHAIN ID", "KIND", "IDENTITY", "REPUTATION", "VALIDATION", "START"
    )?;
    for network in NETWORKS {
        let start = network
            .start_block
            .map_or_else(|| "found".to_string(), |block| block.to_string());
        writeln!(
            out,
            "{:<20} {:>10}  {:<7}  {:<42}  {:<42}  {:<42}  {:<10}  {}",
            network.name,
            network.chain_id,
            if network.testnet {
                "testnet"
            } else {
                "mainnet"
            },
            network.identity(),
            network.reputation(),
            network.validation().unwrap_or("-"),
            start,
            network.usdc.unwrap_or("-"),
        )?;
    }
    writeln!(
        out,
        "\n{} networks. START \"found\": the follower finds the Identity Registry's deployment block itself\n(eth_getCode over the chain's history, which an archive node answers). Use one with:\n  agentindex run --network NAME --rpc URL",
        NETWORKS.len()
    )?;
    writeln!(
        out,
        "\n{:<20} {:>10}  {:<18}  {:<56}  {:<56}  BLOCKFROST",
        "CARDANO", "CHAIN ID", "CAIP-2", "MASUMI REGISTRY V1", "MASUMI REGISTRY V2"
    )?;
    for network in CardanoNetwork::ALL {
        let policies = network.masumi_policies();
        writeln!(
            out,
            "{:<20} {:>10}  {:<18}  {:<56}  {:<56}  {}",
            network.name(),
            network.chain_id(),
            network.caip2(),
            policies.v1.unwrap_or("-"),
            policies.v2.unwrap_or("-"),
            network.blockfrost_url(),
        )?;
    }
    writeln!(
        out,
        "\nFollow one with a [[cardano]] entry: network = \"preprod\" and a Blockfrost project_id\n(the CHAIN ID is agentindex's number for it: 2^30 plus the network magic)."
    )
}
