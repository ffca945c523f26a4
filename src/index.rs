//! `agentindex index`: follow every configured chain into the database, reporting progress (see
//! [`crate::progress`]).

use crate::progress::Reporter;
use agentindex_indexer::config::Config;
use agentindex_indexer::engine::{self, IndexOptions};
use agentindex_indexer::store::Store;
use anyhow::Context;
use std::process::ExitCode;

pub(crate) async fn run(
    config: Config,
    until_block: Option<u64>,
    exit_when_synced: bool,
    skip_documents: bool,
    skip_probes: bool,
) -> anyhow::Result<ExitCode> {
    let shutdown = crate::shutdown::on_signal();
    let options = IndexOptions {
        until_block,
        exit_when_synced,
        skip_documents,
        skip_probes,
        ..IndexOptions::default()
    };
    let reporter = Reporter::for_config(&config);
    if !skip_documents {
        reporter.watch_documents(Store::open(&config.database.url).await?);
    }
    engine::index(&config, options, shutdown, move |chain, outcome| {
        reporter.report(chain, outcome)
    })
    .await
    .context("indexing")?;
    Ok(ExitCode::SUCCESS)
}
