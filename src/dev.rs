//! `agentindex dev`: a local chain with the contracts deployed and demo agents registered
//! through every path, then indexed and served until Ctrl-C. The database is `data/dev.db`,
//! started afresh each time (the chain is new each time).

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::config::Config;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where the dev database lives.
const DEV_DB: &str = "data/dev.db";

pub(crate) async fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let listen = match &config {
        Some(path) => Config::load(path)?.api.listen,
        None => "127.0.0.1:8080".parse().expect("a socket address"),
    };
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
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{DEV_DB}{suffix}"));
    }
    let config = dev_config(&devnet, listen)?;
    crate::serve::index_and_serve(&config, |address| {
        println!();
        println!("GraphiQL      http://{address}/graphql");
        println!("try           {{ agents(first: 10) {{ totalCount edges {{ node {{ id name source owner }} }} }} }}");
        println!("              {{ agents(orderBy: REPUTATION) {{ edges {{ node {{ name reputation {{ score }} }} }} }} }}");
        println!("              {{ indexerStatus {{ chainId headBlock indexedBlock lag }} }}");
        println!("Ctrl-C stops the chain, the indexer and the API.");
    })
    .await
}

/// A config that follows `devnet` into the dev database and serves on `listen`.
fn dev_config(devnet: &Devnet, listen: std::net::SocketAddr) -> anyhow::Result<Config> {
    let chain = devnet.chain_toml(
        "devnet",
        &[devnet.endpoint()],
        "finality = 0\npoll_interval_ms = 200",
    );
    let text =
        format!("[database]\nurl = \"sqlite://{DEV_DB}\"\n\n[api]\nlisten = \"{listen}\"\n{chain}");
    Config::from_toml_and_env(&text, Path::new("agentindex dev"), std::env::vars())
        .context("the dev config")
}
