//! `agentindex index`: follow every configured chain into the database, reporting progress as
//! structured log lines (one per applied range).

use agentindex_indexer::config::Config;
use agentindex_indexer::engine::{self, IndexOptions};
use agentindex_indexer::follower::Outcome;
use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;
use tokio::sync::watch;

pub(crate) async fn run(
    config_path: &Path,
    until_block: Option<u64>,
    exit_when_synced: bool,
) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path)?;
    let (stop, shutdown) = watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("shutting down after the current batch");
            let _ = stop.send(true);
        }
    });
    let options = IndexOptions {
        until_block,
        exit_when_synced,
        ..IndexOptions::default()
    };
    engine::index(&config, options, shutdown, report)
        .await
        .context("indexing")?;
    Ok(ExitCode::SUCCESS)
}

fn report(chain: &str, outcome: &Outcome) {
    match outcome {
        Outcome::Indexed {
            from,
            to,
            events,
            head,
        } => tracing::info!(
            target: "agentindex::index",
            chain,
            from,
            to,
            events,
            lag = head.saturating_sub(*to),
            "indexed"
        ),
        Outcome::Synced { head } => {
            tracing::debug!(target: "agentindex::index", chain, head, "at head")
        }
        Outcome::Rewound { ancestor, removed } => {
            tracing::warn!(target: "agentindex::index", chain, ancestor, removed, "reorg undone")
        }
        Outcome::Retry | Outcome::Done => {}
    }
}
