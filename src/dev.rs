//! `agentindex dev`: a local chain with the contracts deployed and demo agents registered
//! through every path, kept running until Ctrl-C.
//!
//! Indexing that chain and serving the API join here when the follower and API issues land; until
//! then the command says so and prints what a user needs to point other tools at the chain.

use agentindex_contracts::{Devnet, demo};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) async fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if let Some(path) = config {
        tracing::warn!(config = %path.display(), "dev ignores --config until the follower lands");
    }
    let devnet = Devnet::start().await.context("starting the local chain")?;
    let accounts = devnet.accounts();
    let (alice, bob, carol) = (accounts[1], accounts[2], accounts[3]);

    let factory_agent = demo::via_factory(
        &devnet,
        alice,
        demo::sample_card(&devnet, "Factory Translator", None),
    )
    .await
    .context("creating the factory demo agent")?;
    let registry_agent = demo::via_registry(
        &devnet,
        bob,
        demo::sample_card(&devnet, "Registry Translator", None),
        "https://agents.example/registry-translator/meta.json",
    )
    .await
    .context("enrolling the registry demo agent")?;
    let erc8004_agent = demo::via_erc8004(
        &devnet,
        carol,
        "https://agents.example/erc8004/registration.json",
    )
    .await
    .context("registering the ERC-8004 demo agent")?;

    let d = devnet.deployment();
    println!(
        "local chain   {} (chain id {})",
        devnet.endpoint(),
        devnet.chain_id()
    );
    println!("identity      {}", d.identity);
    println!("reputation    {}", d.reputation);
    println!("validation    {}", d.validation);
    println!("factory       {}", d.factory);
    println!("registry      {}", d.registry);
    println!("usdc          {}", d.usdc);
    println!(
        "demo agents   factory {factory_agent}, registry {registry_agent}, ERC-8004 #{erc8004_agent}"
    );
    println!();
    println!(
        "Indexing and the GraphQL API are not yet implemented (chain follower #3, API later);"
    );
    println!("the chain stays up for other tools until Ctrl-C.");

    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    Ok(ExitCode::SUCCESS)
}
