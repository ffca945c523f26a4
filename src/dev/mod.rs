//! `agentindex dev`: a local chain (anvil from the project's tool folder) with the contracts
//! deployed, three dozen demo agents registered through every path with documents served by a
//! built-in server ([`documents`]), payments, feedback and ratings ([`activity`]); then indexed
//! and served until SIGTERM or Ctrl-C; beside it, Masumi agents on an emulated Cardano network
//! ([`masumi`]). The database is `data/dev.db`, started afresh each time (the chain is new each
//! time).

mod activity;
mod catalog;
mod documents;
mod masumi;

use agentindex_contracts::{Devnet, DevnetOptions};
use agentindex_indexer::config::Config;
use anyhow::Context;
use documents::DocumentServer;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where the dev database lives.
const DEV_DB: &str = "data/dev.db";

pub(crate) async fn run(
    config: Option<PathBuf>,
    listen: Option<std::net::SocketAddr>,
) -> anyhow::Result<ExitCode> {
    let listen = match (&config, listen) {
        (Some(path), _) => Config::load(path)?.api.listen,
        (None, Some(listen)) => listen,
        (None, None) => "127.0.0.1:8080".parse().expect("a socket address"),
    };
    let agents = catalog::agents();
    let devnet = Devnet::start_with(DevnetOptions {
        accounts: activity::accounts_needed(agents.len()),
        genesis_timestamp: Some(activity::genesis_timestamp()),
        ..DevnetOptions::default()
    })
    .await
    .context("starting the local chain")?;
    let d = devnet.deployment();
    // The document server also serves the cards of the Masumi agents (`masumi.rs`).
    let card_agents = masumi::card_agents();
    let served = agents.iter().chain(&card_agents).cloned().collect();
    let documents = DocumentServer::start(served, devnet.chain_id(), d.identity, d.usdc)
        .await
        .context("starting the demo document server")?;
    activity::register(&devnet, &agents, &documents).await?;
    activity::make_history(&devnet, &agents, &documents).await?;

    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{DEV_DB}{suffix}"));
    }
    let masumi = masumi::start(&card_agents, |n| documents.card_url(n))
        .await
        .context("starting the Masumi demo on the Blockfrost emulator")?;
    let config = dev_config(&devnet, listen, masumi.as_ref().map(|m| m.toml.as_str()))?;
    crate::serve::index_and_serve(&config, |address| {
        // The explorer first: it is where a newcomer starts.
        println!("Explorer      http://{address}/");
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
            "documents     {} ({} demo agents: factory, registry and ERC-8004)",
            documents.base,
            agents.len()
        );
        if let Some(masumi) = &masumi {
            println!(
                "masumi        {} (Blockfrost emulator, cardano-preprod: {} Masumi agents and their escrows)",
                masumi.base, masumi.agents
            );
        }
        println!("GraphiQL      http://{address}/graphql");
        println!("try           {{ agents(filter: {{ skill: \"translate\" }}) {{ totalCount edges {{ node {{ id name source skills {{ id tags }} }} }} }} }}");
        println!("              {{ agents(search: \"weather forecast\", filter: {{ x402: true }}) {{ edges {{ node {{ name paymentTerms card {{ signature }} }} }} }} }}");
        println!("              {{ agents(orderBy: REPUTATION, first: 5) {{ edges {{ node {{ name reputation {{ score paymentCount uniquePayers }} }} }} }} }}");
        println!("              {{ agents(filter: {{ sources: [MASUMI] }}) {{ edges {{ node {{ name caip2 masumi {{ unit pricing {{ fixed {{ amount unit }} }} paymentCounts {{ released refunded disputed }} }} }} }} }} }}");
        println!("SIGTERM or Ctrl-C stops the chain, the indexer and the API.");
    })
    .await
}

/// A config that follows `devnet` (and the Masumi demo's `[[cardano]]` entry, when it runs)
/// into the dev database, fetches documents from loopback and trusts the demo signing key, and
/// serves on `listen`.
fn dev_config(
    devnet: &Devnet,
    listen: std::net::SocketAddr,
    cardano: Option<&str>,
) -> anyhow::Result<Config> {
    let chain = devnet.chain_toml(
        "devnet",
        &[devnet.endpoint()],
        "finality = 0\npoll_interval_ms = 200",
    );
    let text = format!(
        "[database]\nurl = \"sqlite://{DEV_DB}\"\n\n[api]\nlisten = \"{listen}\"\n\n\
         [documents]\nallow_private_addresses = true\nallow_http = true\n{chain}\n{}",
        cardano.unwrap_or_default()
    );
    let mut config =
        Config::from_toml_and_env(&text, Path::new("agentindex dev"), std::env::vars())
            .context("the dev config")?;
    config.documents.trusted_keys.push(documents::demo_jwk()?);
    Ok(config)
}
