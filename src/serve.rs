//! `agentindex serve` (the API over an existing database), `agentindex run` (index and serve
//! in one process) and `agentindex mcp` (the MCP server on stdio, over an existing database).

use crate::progress::Reporter;
use agentindex_api::ApiState;
use agentindex_indexer::config::Config;
use agentindex_indexer::engine::{self, IndexOptions};
use agentindex_indexer::health::HealthBoard;
use agentindex_indexer::store::{OpenOptions, Store};
use anyhow::Context;
use std::process::ExitCode;

/// Serves the API until SIGTERM or Ctrl-C.
pub(crate) async fn serve(config: Config) -> anyhow::Result<ExitCode> {
    let store = open_for_serving(&config).await?;
    let shutdown = crate::shutdown::on_signal();
    agentindex_api::serve(
        ApiState::new(store.clone(), &config),
        config.api.listen,
        shutdown,
        announce,
    )
    .await?;
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

/// Serves MCP on stdin and stdout until the client closes them (logs go to stderr).
pub(crate) async fn mcp_on_stdio(config: Config) -> anyhow::Result<ExitCode> {
    let store = open_for_serving(&config).await?;
    let state = ApiState::new(store.clone(), &config);
    let schema = agentindex_api::graphql::schema(state.clone());
    agentindex_api::mcp::serve_stdio(schema, state).await?;
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

/// Indexes every chain and serves the API until SIGTERM, Ctrl-C or a failure to index.
pub(crate) async fn run(config: Config) -> anyhow::Result<ExitCode> {
    index_and_serve(&config, announce).await
}

/// Indexes every chain of `config` and serves the API over it until Ctrl-C or until indexing
/// fails; `bound` learns the API's address.
pub(crate) async fn index_and_serve(
    config: &Config,
    bound: impl FnOnce(std::net::SocketAddr),
) -> anyhow::Result<ExitCode> {
    let store = open_for_serving(config).await?;
    let shutdown = crate::shutdown::on_signal();
    let health = HealthBoard::new();
    let api = agentindex_api::serve(
        ApiState::indexing(store.clone(), config, health.clone()),
        config.api.listen,
        shutdown.clone(),
        bound,
    );
    let reporter = Reporter::for_config(config);
    reporter.watch_documents(store.clone());
    let index = engine::index(
        config,
        IndexOptions {
            health: Some(health),
            ..IndexOptions::default()
        },
        shutdown,
        move |chain, o| reporter.report(chain, o),
    );
    tokio::try_join!(async { api.await.context("serving") }, async {
        index.await.context("indexing")
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Connections (SQLite) of the read pool whose worker threads run at the lowest priority, for
/// the reads of reputation feeds and of clients over much of their share of the server's time.
const LOW_PRIORITY_READERS: u32 = 2;

/// The store the API reads, its statements stopped by the database a little after the query
/// time limit (`[api.reads]`), so a query the API gave up on does not run on, with a
/// low-priority read pool beside the ordinary one. Indexing opens its own store, without a
/// limit.
async fn open_for_serving(config: &Config) -> anyhow::Result<Store> {
    let options = OpenOptions {
        read_statement_timeout: Some(config.api.reads.statement_timeout()),
        low_priority_readers: LOW_PRIORITY_READERS,
    };
    Ok(Store::open_with(&config.database.url, options).await?)
}

fn announce(address: std::net::SocketAddr) {
    println!("agentindex API listening on http://{address}");
}
