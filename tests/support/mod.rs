//! Shared set-up of the end-to-end tests: a config that points the indexer at a devnet, and
//! helpers to index it and read the result.

#![allow(dead_code)]

pub(crate) mod api;
pub(crate) mod binary;
pub(crate) mod blockfrost;
pub(crate) mod chain;
pub(crate) mod checker;
pub(crate) mod dev;
pub(crate) mod doc_server;
pub(crate) mod faulty_rpc;
pub(crate) mod graphql;
pub(crate) mod graphql_ws;
pub(crate) mod hostile;
pub(crate) mod liveness;
pub(crate) mod mcp;
pub(crate) mod memory;
pub(crate) mod postgres;
pub(crate) mod processes;
pub(crate) mod scenario;
pub(crate) mod signing;
pub(crate) mod tool;
pub(crate) mod wallets;

use agentindex_contracts::Devnet;
use agentindex_indexer::config::Config;
use agentindex_indexer::engine::{self, IndexOptions};
use agentindex_indexer::rpc::RetryPolicy;
use agentindex_indexer::store::Store;
use agentindex_indexer::store::StoreRead;
use std::path::Path;
use std::time::Duration;

/// The burst of server time (`[api] server_ms_burst_per_client`) every server a test starts is
/// given unless the test sets one: a debug build answers ten times slower than a release one,
/// so a test polling the API would otherwise meet the shipped share (a second) by chance.
/// Tests of the share set their own.
pub(crate) const TEST_SERVER_MS_BURST: u32 = 1_000_000_000;
/// [`TEST_SERVER_MS_BURST`] as the environment gives it to a process (over its config file),
/// and as what a client may owe before it is served at low priority (which a test polling a
/// debug build would otherwise reach by chance too).
pub(crate) const TEST_SERVER_SHARE_ENV: [(&str, &str); 2] = [
    ("AGENTINDEX_API__SERVER_MS_BURST_PER_CLIENT", "1000000000"),
    (
        "AGENTINDEX_API__LOW_PRIORITY_AFTER_MS_PER_CLIENT",
        "1000000000",
    ),
];

/// Counts events stored with a decoding error.
pub(crate) const DECODE_FAILURES: &str =
    "SELECT count(*) FROM events WHERE decode_error IS NOT NULL";

/// The database of a test whose SQLite file would be `db`: that file, or, when the run tests
/// PostgreSQL (`AGENTINDEX_TEST_BACKEND=postgres`), a fresh database on the test server, the
/// same one each time for the same path.
pub(crate) fn database_url(db: &Path) -> String {
    static DATABASES: std::sync::Mutex<std::collections::BTreeMap<std::path::PathBuf, String>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    if !postgres::selected() {
        return format!("sqlite://{}", db.display());
    }
    DATABASES
        .lock()
        .unwrap()
        .entry(db.to_path_buf())
        .or_insert_with(|| postgres::server().fresh_database())
        .clone()
}

/// TOML config for indexing `devnet` into `db` with a finality `depth` and extra chain keys.
pub(crate) fn config_toml(
    devnet: &Devnet,
    rpc: &[String],
    db: &Path,
    depth: u64,
    extra: &str,
) -> String {
    config_toml_at(devnet, rpc, &database_url(db), depth, extra)
}

/// [`config_toml`] for the database at `url`, whichever backend the run tests.
pub(crate) fn config_toml_at(
    devnet: &Devnet,
    rpc: &[String],
    url: &str,
    depth: u64,
    extra: &str,
) -> String {
    let chain = devnet.chain_toml(
        "devnet",
        rpc,
        &format!("finality = {depth}\npoll_interval_ms = 100\n{extra}"),
    );
    format!("\n[database]\nurl = \"{url}\"\n{chain}")
}

/// The parsed config of [`config_toml`].
pub(crate) fn config(devnet: &Devnet, db: &Path, depth: u64) -> Config {
    let text = config_toml(devnet, &[devnet.endpoint()], db, depth, "");
    Config::from_toml_and_env(&text, Path::new("test.toml"), Vec::new())
        .expect("test config parses")
}

/// [`config`] with documents fetched from the test's own loopback servers over plain http.
pub(crate) fn config_with_local_documents(devnet: &Devnet, db: &Path) -> Config {
    let mut config = config(devnet, db, 0);
    config.documents.allow_private_addresses = true;
    config.documents.allow_http = true;
    config
}

/// Fast retries, so fault tests do not wait for production backoffs.
pub(crate) fn quick_retry() -> RetryPolicy {
    RetryPolicy {
        attempts: 12,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(100),
    }
}

/// Logs to the test output when `AGENTINDEX_TEST_LOG` names a filter (e.g. `debug`).
pub(crate) fn logs() {
    if let Ok(filter) = std::env::var("AGENTINDEX_TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
}

/// Indexes `config` until every chain is at its head.
pub(crate) async fn index_until_synced(config: &Config) {
    logs();
    let (_stop, shutdown) = tokio::sync::watch::channel(false);
    let options = IndexOptions {
        exit_when_synced: true,
        retry: quick_retry(),
        skip_documents: true,
        ..IndexOptions::default()
    };
    tokio::time::timeout(
        Duration::from_secs(120),
        engine::index(config, options, shutdown, |_, _| {}),
    )
    .await
    .expect("indexing reaches the head within two minutes")
    .expect("indexing succeeds");
}

/// A devnet indexed with its documents into a database of its own.
pub(crate) struct Indexed {
    /// The directory holding the database (removed when dropped).
    pub(crate) dir: tempfile::TempDir,
    /// The database's file (on PostgreSQL runs, what names the test's database).
    pub(crate) db: std::path::PathBuf,
    /// The config that indexed it.
    pub(crate) config: Config,
}

/// Indexes `devnet` to its head, every document fetched once from loopback servers, into a new
/// database.
pub(crate) async fn indexed_with_documents(devnet: &Devnet) -> Indexed {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = config_with_local_documents(devnet, &db);
    index_with_documents(&config).await;
    Indexed { dir, db, config }
}

/// Indexes to the head and fetches every document found once, as `index --exit-when-synced`.
pub(crate) async fn index_with_documents(config: &Config) {
    logs();
    let (_stop, shutdown) = tokio::sync::watch::channel(false);
    let options = IndexOptions {
        exit_when_synced: true,
        retry: quick_retry(),
        ..IndexOptions::default()
    };
    tokio::time::timeout(
        Duration::from_secs(120),
        engine::index(config, options, shutdown, |_, _| {}),
    )
    .await
    .expect("indexing and fetching finish within two minutes")
    .expect("indexing succeeds");
}

/// Stores the reputation feed of every chain of `config` at each of `blocks` with the indexer's
/// feed keeper (which does so by itself at final epoch boundaries while it follows the chains).
pub(crate) async fn store_feeds(config: &Config, blocks: &[u64]) {
    use agentindex_indexer::feed::keeper::FeedKeeper;
    let store = Store::open(&config.database.url).await.unwrap();
    let writer = store.writer(2);
    let contexts = std::sync::Arc::new(engine::chain_contexts(config));
    let kept = u32::try_from(blocks.len()).unwrap();
    let keeper = FeedKeeper::new(store.clone(), writer.clone(), contexts.clone(), kept);
    let (_running, stop) = tokio::sync::watch::channel(false);
    for chain in contexts.values() {
        for &block in blocks {
            keeper.store_at(chain, block, &stop).await.unwrap();
        }
    }
    drop((keeper, writer));
    store.close().await;
}

/// The canonical dump of the database at `db`.
pub(crate) async fn dump(db: &Path) -> String {
    let store = Store::open(&database_url(db)).await.unwrap();
    let text = store.canonical_dump().await.unwrap();
    store.close().await;
    text
}

/// The last block indexed on `chain_id`.
pub(crate) async fn indexed_block(store: &Store, chain_id: u64) -> u64 {
    let progress = store.progress(chain_id).await.unwrap();
    progress.expect("the chain was indexed").next_block - 1
}

/// A read-only pool on the database at `db`, for field-by-field checks.
pub(crate) async fn open(db: &Path) -> Store {
    Store::open(&database_url(db)).await.unwrap()
}

/// Panics, showing the first rows that differ, unless two canonical dumps are equal.
#[track_caller]
pub(crate) fn assert_same_index(actual: &str, expected: &str, what: &str) {
    if actual == expected {
        return;
    }
    let mut table = "";
    let mut shown = Vec::new();
    let (a, e): (Vec<&str>, Vec<&str>) = (actual.lines().collect(), expected.lines().collect());
    for index in 0..a.len().max(e.len()) {
        let (left, right) = (a.get(index), e.get(index));
        if let Some(name) = right.and_then(|l| l.strip_prefix("== ")) {
            table = name;
        }
        if left != right {
            shown.push(format!(
                "in {table}, line {index}:\n  got      {}\n  expected {}",
                left.unwrap_or(&"<end>"),
                right.unwrap_or(&"<end>")
            ));
            if shown.len() == 3 {
                break;
            }
        }
    }
    panic!(
        "{what}: the index differs ({} lines vs {} expected)\n{}",
        a.len(),
        e.len(),
        shown.join("\n")
    );
}
