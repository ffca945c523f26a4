//! `agentindex migrate`: create the database if missing and apply pending migrations.

use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use std::process::ExitCode;

pub(crate) async fn run(config: Config) -> anyhow::Result<ExitCode> {
    let store = Store::open(&config.database.url).await?;
    store.close().await;
    println!(
        "{} is migrated",
        agentindex_indexer::redact::url(&config.database.url)
    );
    Ok(ExitCode::SUCCESS)
}
