//! `agentindex backup PATH`: a consistent copy of the database, taken online (indexing and
//! serving may go on meanwhile).

use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use std::path::Path;
use std::process::ExitCode;

pub(crate) async fn run(config: Config, target: &Path) -> anyhow::Result<ExitCode> {
    let store = Store::open(&config.database.url).await?;
    let started = std::time::Instant::now();
    let written = store.backup(target).await;
    store.close().await;
    let bytes = written?;
    println!(
        "backed up {} to {} ({:.1} MiB in {:.1} s)",
        agentindex_indexer::redact::url(&config.database.url),
        target.display(),
        bytes as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
