//! `agentindex probe URL`: probe one endpoint as the indexer's prober would and print what it
//! saw as JSON (`liveness::Outcome`), exiting non-zero unless every probe found it up.
//!
//! `--kind auto` (the default) guesses: a URL of an Agent Card (`…/agent-card.json`,
//! `…/agent.json`) is probed as a card, then each of its JSON-RPC and HTTP+JSON interfaces;
//! anything else is asked MCP's `initialize` first, then fetched once, a 402 read as an x402
//! resource and any other answer as a web page. Without `--config` a URL on this machine or its
//! network is probed as asked (as `card check` does); with one, its `[documents]` address rules
//! and `[liveness]` limits apply.

use crate::card_check::local_host;
use agentindex_indexer::config::{Config, DocumentsConfig, LivenessConfig};
use agentindex_indexer::documents::{Checker, Expect, FetchPolicy, Projection};
use agentindex_indexer::liveness::{Kind, LivenessPolicy, Outcome, Prober, Status, Target};
use std::path::Path;
use std::process::ExitCode;

/// What `--kind` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KindArg {
    /// Guess from the URL and the answers.
    Auto,
    /// An A2A Agent Card (and nothing more).
    A2aCard,
    /// An A2A JSON-RPC interface.
    A2aJsonrpc,
    /// An A2A HTTP+JSON interface.
    A2aRest,
    /// An MCP server (streamable HTTP).
    Mcp,
    /// An x402 resource.
    X402,
    /// A web page.
    Web,
}

impl KindArg {
    fn kind(self) -> Option<Kind> {
        Some(match self {
            KindArg::Auto => return None,
            KindArg::A2aCard => Kind::A2aCard,
            KindArg::A2aJsonrpc => Kind::A2aJsonrpc,
            KindArg::A2aRest => Kind::A2aRest,
            KindArg::Mcp => Kind::Mcp,
            KindArg::X402 => Kind::X402,
            KindArg::Web => Kind::Web,
        })
    }
}

/// What to probe and how.
pub(crate) struct ProbeArgs<'a> {
    pub(crate) url: &'a str,
    pub(crate) kind: KindArg,
    /// Wallets an x402 resource's `payTo` is compared with.
    pub(crate) wallets: Vec<String>,
    /// The protocol version to speak (an A2A interface's).
    pub(crate) protocol_version: Option<String>,
    pub(crate) config: Option<&'a Path>,
}

pub(crate) async fn run(args: ProbeArgs<'_>) -> anyhow::Result<ExitCode> {
    let (liveness, documents) = match args.config {
        Some(path) => {
            let config = Config::load(path)?;
            (config.liveness, config.documents)
        }
        None => {
            let mut documents = DocumentsConfig::default();
            if let Some(host) = url::Url::parse(args.url).ok().as_ref().and_then(local_host) {
                eprintln!("{host} is on this machine or its network: probed as asked");
                documents.allow_private_addresses = true;
            }
            (LivenessConfig::default(), documents)
        }
    };
    let policy = LivenessPolicy::from_parts(&liveness, FetchPolicy::from(&documents));
    let prober = Prober::new(&policy)?;
    let target = |kind: Kind, url: &str| {
        let mut target = Target::new(kind, url);
        target.wallets = args.wallets.iter().map(|w| w.to_lowercase()).collect();
        target.protocol_version = args.protocol_version.clone();
        target
    };
    let outcomes = match args.kind.kind() {
        Some(kind) => vec![prober.probe(&target(kind, args.url)).await],
        None if looks_like_card(args.url) => {
            let mut outcomes = vec![prober.probe(&target(Kind::A2aCard, args.url)).await];
            for (kind, url, version) in interfaces(&documents, args.url).await {
                let mut interface = target(kind, &url);
                interface.protocol_version = version.or(args.protocol_version.clone());
                outcomes.push(prober.probe(&interface).await);
            }
            outcomes
        }
        None => vec![guess(&prober, &target(Kind::Mcp, args.url)).await],
    };
    println!("{}", serde_json::to_string_pretty(&outcomes)?);
    for outcome in &outcomes {
        let why = outcome.error.as_deref().unwrap_or("");
        eprintln!(
            "{} ({}): {} {why}",
            outcome.url,
            outcome.kind.as_str(),
            outcome.status.as_str()
        );
    }
    let all_up = outcomes.iter().all(|o| o.status == Status::Up);
    Ok(if all_up {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Whether `url` names an Agent Card file.
fn looks_like_card(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    path.ends_with("/agent-card.json") || path.ends_with("/agent.json")
}

/// MCP first; an endpoint that does not speak it is fetched once and read as what it answered.
async fn guess(prober: &Prober, mcp: &Target) -> Outcome {
    let as_mcp = prober.probe(mcp).await;
    if as_mcp.status == Status::Up || !as_mcp.status.answered() {
        return as_mcp;
    }
    let mut as_x402 = mcp.clone();
    as_x402.kind = Kind::X402;
    let outcome = prober.probe(&as_x402).await;
    if outcome.http_status == Some(402) {
        return outcome;
    }
    let mut web = mcp.clone();
    web.kind = Kind::Web;
    prober.probe(&web).await
}

/// The JSON-RPC and HTTP+JSON interfaces of the card at `url`, read under the same address
/// rules (none when it does not read as a card).
async fn interfaces(documents: &DocumentsConfig, url: &str) -> Vec<(Kind, String, Option<String>)> {
    let Ok(checker) = Checker::from_config(documents) else {
        return Vec::new();
    };
    let checked = checker.check(url, Expect::Card, None).await;
    let Some(Projection::Card(card)) = checked.projection else {
        return Vec::new();
    };
    card.interfaces
        .into_iter()
        .filter_map(|interface| {
            let kind = match interface.binding.as_str() {
                "JSONRPC" => Kind::A2aJsonrpc,
                "HTTP+JSON" => Kind::A2aRest,
                _ => return None,
            };
            Some((kind, interface.url, interface.version))
        })
        .collect()
}
