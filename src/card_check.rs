//! `agentindex card check URL`: fetch one Agent Card or registration file, print its projection
//! and lint report as JSON, and exit non-zero when the report has errors.
//!
//! A base URL (one whose path ends in `/`) is tried as the indexer tries an A2A service
//! endpoint: `/.well-known/agent-card.json`, then `/.well-known/agent.json`. Without `--config`,
//! a URL on this machine or its private network (a card under development) is fetched; with a
//! config, its address rules apply.

use agentindex_indexer::config::{Config, DocumentsConfig};
use agentindex_indexer::documents::{Checker, Expect, Severity};
use std::net::IpAddr;
use std::path::Path;
use std::process::ExitCode;

pub(crate) async fn run(uri: &str, config_path: Option<&Path>) -> anyhow::Result<ExitCode> {
    let parsed = url::Url::parse(uri).ok();
    let documents = match config_path {
        Some(path) => Config::load(path)?.documents,
        None => {
            let mut documents = DocumentsConfig::default();
            if let Some(host) = parsed.as_ref().and_then(local_host) {
                eprintln!("{host} is on this machine or its network: fetched as asked");
                documents.allow_private_addresses = true;
            }
            documents
        }
    };
    let base = parsed
        .as_ref()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.path().ends_with('/'));
    let expect = if base { Expect::A2a } else { Expect::Any };
    let checked = Checker::from_config(&documents)?
        .check(uri, expect, None)
        .await;
    println!("{}", serde_json::to_string_pretty(&checked)?);
    if base && let Some(source) = &checked.source {
        eprintln!("{uri}: the card is at {source}");
    }
    let mut errors = checked
        .report
        .lints
        .iter()
        .filter(|l| l.severity == Severity::Error);
    match errors.next() {
        None => {
            eprintln!("{uri}: usable ({} findings)", checked.report.lints.len());
            Ok(ExitCode::SUCCESS)
        }
        Some(first) => {
            eprintln!(
                "{uri}: {} error(s); first: {} at {}: {}",
                errors.count() + 1,
                first.code,
                first.path,
                first.message
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The URL's host when it names this machine or a private network (`localhost`, loopback and
/// private addresses); never link-local or cloud-metadata addresses.
pub(crate) fn local_host(url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    let local = match host
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<IpAddr>()
    {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback() || ip.is_unique_local(),
        Err(_) => host == "localhost" || host.ends_with(".localhost"),
    };
    local.then(|| host.to_string())
}
