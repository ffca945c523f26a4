//! The command line: every subcommand the README's "Command line" section documents, and its
//! flags.

use agentindex_indexer::config::Config;
use agentindex_indexer::config::networks::{NETWORKS, chain_entry};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Off-chain indexer for on-chain AI-agent registries.
#[derive(Debug, Parser)]
#[command(name = "agentindex", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Where the configuration comes from: `--config FILE`, a network preset (`--network base
/// --rpc URL`), or both (the preset's chain is added to the file's).
#[derive(Debug, Args)]
pub(crate) struct ConfigArg {
    /// TOML configuration file (keys may be overridden by AGENTINDEX_* environment variables).
    #[arg(long, value_name = "FILE", required_unless_present = "network")]
    pub(crate) config: Option<PathBuf>,
    /// Follow a known network: its ERC-8004 registries, start block and USDC are filled in.
    #[arg(long, value_name = "NAME", value_parser = NETWORKS.map(|n| n.name), requires = "rpc")]
    pub(crate) network: Option<String>,
    /// JSON-RPC endpoint of the --network chain (repeat for failover).
    #[arg(long, value_name = "URL", requires = "network")]
    pub(crate) rpc: Vec<String>,
}

impl ConfigArg {
    /// The configuration these flags describe, with the environment's overrides applied.
    pub(crate) fn load(&self) -> anyhow::Result<Config> {
        let mut text = match &self.config {
            Some(path) => std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?,
            None => String::new(),
        };
        if let Some(network) = &self.network {
            text.push('\n');
            text.push_str(&chain_entry(network, &self.rpc, self.config.is_none()));
        }
        let origin = self
            .config
            .clone()
            .unwrap_or_else(|| PathBuf::from("--network"));
        Ok(Config::from_toml_and_env(&text, &origin, std::env::vars())?)
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Index every configured chain and serve the API.
    Run(ConfigArg),
    /// Index every configured chain without serving the API.
    Index {
        #[command(flatten)]
        config: ConfigArg,
        /// Stop after indexing this block.
        #[arg(long, value_name = "N")]
        until_block: Option<u64>,
        /// Exit 0 once every chain reached its head and every document found was fetched once.
        #[arg(long)]
        exit_when_synced: bool,
        /// Follow the chains only; fetch no documents.
        #[arg(long)]
        no_documents: bool,
        /// Probe no endpoints, whatever `[liveness] enabled` says.
        #[arg(long)]
        no_probes: bool,
    },
    /// Serve the API over an existing database without indexing.
    Serve(ConfigArg),
    /// Serve the MCP server on standard input and output (for desktop MCP clients), over an
    /// existing database.
    Mcp(ConfigArg),
    /// Start a local chain, deploy the contracts, register demo agents, then index and serve.
    Dev {
        /// A configuration whose `[api] listen` address to serve on.
        #[arg(long, value_name = "FILE", conflicts_with = "listen")]
        config: Option<PathBuf>,
        /// Address to serve the API on (port 0 picks a free one).
        #[arg(long, value_name = "ADDR")]
        listen: Option<std::net::SocketAddr>,
    },
    /// Create the database if missing and apply pending migrations.
    Migrate(ConfigArg),
    /// Write a consistent copy of the database to PATH while indexing and serving go on.
    Backup {
        /// The file to create (never overwritten).
        #[arg(value_name = "PATH")]
        path: PathBuf,
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Copy an index into an empty database (SQLite to PostgreSQL, or back) without indexing
    /// again, then verify it: equal canonical dumps and equal reputation feeds.
    Copy {
        /// The database to copy (sqlite://path or postgres://user:password@host:port/dbname).
        #[arg(long, value_name = "URL")]
        from: String,
        /// The database to copy into: created and migrated if missing, and empty.
        #[arg(long, value_name = "URL")]
        to: String,
        /// A configuration whose reputation rules the feeds are compared under (default rules
        /// otherwise).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Work with Agent Cards and registration files.
    #[command(subcommand)]
    Card(CardCommand),
    /// Probe one endpoint (an Agent Card, an A2A interface, an MCP server, an x402 resource, a
    /// web page) as the indexer's prober would, and print what it saw.
    Probe {
        /// The endpoint.
        url: String,
        /// What it is (auto: guessed from the URL and the answers).
        #[arg(long, value_enum, default_value = "auto")]
        kind: crate::probe::KindArg,
        /// A wallet an x402 resource's payTo should be (repeatable).
        #[arg(long, value_name = "0x…")]
        wallet: Vec<String>,
        /// The protocol version to speak (an A2A interface's: 1.0, 0.3).
        #[arg(long, value_name = "VERSION")]
        protocol_version: Option<String>,
        /// Configuration for address rules (`[documents]`) and limits (`[liveness]`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// List the network presets (every chain with the official ERC-8004 registries).
    Networks,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CardCommand {
    /// Fetch, validate and lint one Agent Card or registration file.
    Check {
        /// Where the document is (https://, ipfs://, data:, ...).
        url: String,
        /// Configuration for gateways and address rules.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

impl Command {
    /// Runs the subcommand; the exit code is the command's verdict.
    pub(crate) async fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Dev { config, listen } => crate::dev::run(config, listen).await,
            Command::Run(config) => crate::serve::run(config.load()?).await,
            Command::Index {
                config,
                until_block,
                exit_when_synced,
                no_documents,
                no_probes,
            } => {
                let config = config.load()?;
                crate::index::run(
                    config,
                    until_block,
                    exit_when_synced,
                    no_documents,
                    no_probes,
                )
                .await
            }
            Command::Serve(config) => crate::serve::serve(config.load()?).await,
            Command::Mcp(config) => crate::serve::mcp_on_stdio(config.load()?).await,
            Command::Migrate(config) => crate::migrate::run(config.load()?).await,
            Command::Backup { path, config } => crate::backup::run(config.load()?, &path).await,
            Command::Copy { from, to, config } => {
                let config = match config {
                    Some(path) => Some(
                        ConfigArg {
                            config: Some(path),
                            network: None,
                            rpc: Vec::new(),
                        }
                        .load()?,
                    ),
                    None => None,
                };
                crate::copy::run(&from, &to, config).await
            }
            Command::Card(CardCommand::Check { url, config }) => {
                crate::card_check::run(&url, config.as_deref()).await
            }
            Command::Probe {
                url,
                kind,
                wallet,
                protocol_version,
                config,
            } => {
                crate::probe::run(crate::probe::ProbeArgs {
                    url: &url,
                    kind,
                    wallets: wallet,
                    protocol_version,
                    config: config.as_deref(),
                })
                .await
            }
            Command::Networks => Ok(crate::networks::run()),
        }
    }
}
