//! `kill -9` at random moments during a backfill loses nothing and applies nothing twice: after
//! twenty kills and restarts of the real binary, the database equals a clean run's.

use crate::support;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::tied::TiedCommand;
use agentindex_contracts::workload::{self, Workload};
use agentindex_contracts::{Devnet, DevnetOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn write_config(
    devnet: &Devnet,
    dir: &Path,
    name: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let db = dir.join(format!("{name}.db"));
    let text = support::config_toml(devnet, &[devnet.endpoint()], &db, 0, "max_block_range = 1");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    (path, db)
}

/// `agentindex index`, tied to the test process so an assertion failing before the kill leaves
/// no indexer running.
fn index_command(config: &Path) -> TiedCommand {
    let mut tied = support::binary::command(&["index", "--config"], config);
    tied.command()
        .arg("--exit-when-synced")
        // The chain is under test here; its seeded URIs lead nowhere.
        .arg("--no-documents")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    tied
}

/// Runs `agentindex index --exit-when-synced` until it exits.
fn run_to_the_end(config: &Path) -> std::process::ExitStatus {
    let mut child = index_command(config).spawn().unwrap();
    child.child().wait().unwrap()
}

/// A devnet with a workload big enough to interrupt a backfill of it.
async fn seeded_devnet() -> Devnet {
    let devnet = Devnet::start_with(DevnetOptions {
        gas_limit: Some(100_000_000),
        ..DevnetOptions::default()
    })
    .await
    .unwrap();
    workload::seed(&devnet, Workload::small(16)).await.unwrap();
    devnet
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_backfill_loses_and_duplicates_nothing() {
    let devnet = seeded_devnet().await;
    let head = devnet.block_number().await.unwrap();
    let dir = tempfile::tempdir().unwrap();

    let (clean_config, clean_db) = write_config(&devnet, dir.path(), "clean");
    let started = std::time::Instant::now();
    assert!(run_to_the_end(&clean_config).success());
    let clean_run = started.elapsed();
    let clean = support::dump(&clean_db).await;
    let events = clean.lines().filter(|l| l.starts_with("chain_id=")).count();
    assert!(
        events > 2_000,
        "the workload is big enough to be interrupted ({events} rows)"
    );

    let (config, db) = write_config(&devnet, dir.path(), "killed");
    let mut rng = StdRng::seed_from_u64(0xdead);
    let store = support::open(&db).await;
    let chain = devnet.chain_id();
    let cursor = async || {
        store
            .progress(chain)
            .await
            .unwrap()
            .map_or(0, |p| p.next_block)
    };
    for kill in 0..20 {
        let before = cursor().await;
        let mut child = index_command(&config).spawn().unwrap();
        // Let it commit at least one batch, then kill it at a random moment after.
        while cursor().await == before {
            assert!(
                child.child().try_wait().unwrap().is_none(),
                "run {kill} exited before committing anything"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..25))).await;
        assert!(
            child.child().try_wait().unwrap().is_none(),
            "the backfill (a clean run takes {clean_run:?}) finished after {kill} kills; make the workload bigger"
        );
        child.child().kill().unwrap(); // SIGKILL
        child.child().wait().unwrap();
    }
    assert!(cursor().await <= head, "the last kill landed mid-backfill");
    store.close().await;

    assert!(run_to_the_end(&config).success());
    support::assert_same_index(&support::dump(&db).await, &clean, "killed and restarted");
}

/// The next block `chain` will index in the database at `db` (0 before the indexer created
/// its cursor), read on a connection opened and closed for this one question.
async fn next_block(db: &Path, chain: u64) -> u64 {
    use sqlx::Connection;
    agentindex_indexer::store::install_drivers();
    let Ok(mut conn) = sqlx::AnyConnection::connect(&support::database_url(db)).await else {
        return 0; // not created yet
    };
    let indexed: Result<Option<i64>, _> =
        sqlx::query_scalar("SELECT indexed_block FROM chain_cursor WHERE chain_id = $1")
            .bind(chain as i64)
            .fetch_optional(&mut conn)
            .await;
    conn.close().await.unwrap();
    // Before its migrations ran there is no cursor table, and before its first batch no row.
    indexed.ok().flatten().map_or(0, |block| (block + 1) as u64)
}

async fn events_around(db: &Path, chain: u64, block: u64) -> (i64, i64) {
    let store = support::open(db).await;
    let count = async |op: &str| -> i64 {
        sqlx::query_scalar(&format!(
            "SELECT count(*) FROM events WHERE chain_id = $1 AND block_number {op} $2"
        ))
        .bind(chain as i64)
        .bind(block as i64)
        .fetch_one(store.reader())
        .await
        .unwrap()
    };
    let counts = (count("<").await, count(">=").await);
    store.close().await;
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_backfill_commits_the_batch_exits_zero_and_resumes() {
    let devnet = seeded_devnet().await;
    let head = devnet.block_number().await.unwrap();
    let chain = devnet.chain_id();
    let dir = tempfile::tempdir().unwrap();
    let (clean_config, clean_db) = write_config(&devnet, dir.path(), "clean");
    assert!(run_to_the_end(&clean_config).success());
    let clean = support::dump(&clean_db).await;

    let (config, db) = write_config(&devnet, dir.path(), "terminated");
    // Polled on a connection of its own each time, closed before the signal: a reader holding
    // the database open as the indexer stops would keep it from removing its write-ahead log.
    let cursor = async || next_block(&db, chain).await;
    let mut child = index_command(&config).spawn().unwrap();
    while cursor().await < 5 {
        assert!(
            child.child().try_wait().unwrap().is_none(),
            "exited before block 5"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let signalled = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.child().try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running 30 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(0), "SIGTERM is a clean exit");
    let wal = db.with_extension("db-wal");
    assert!(
        !wal.exists(),
        "a clean stop leaves no write-ahead log behind ({} bytes)",
        std::fs::metadata(&wal).map_or(0, |m| m.len())
    );
    let stopped_at = cursor().await;
    assert!(
        stopped_at <= head,
        "stopped mid-backfill (next block {stopped_at}, head {head})"
    );
    // Consistent: every event below the cursor is there, none above it.
    let (below, above) = events_around(&db, chain, stopped_at).await;
    let (clean_below, _) = events_around(&clean_db, chain, stopped_at).await;
    assert_eq!(above, 0, "nothing past the committed cursor");
    assert_eq!(below, clean_below, "every event below the cursor");

    assert!(run_to_the_end(&config).success());
    support::assert_same_index(
        &support::dump(&db).await,
        &clean,
        "terminated and restarted",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_takes_effect_within_a_second_while_requests_are_retried() {
    // An endpoint that takes every connection and closes it unanswered: each request fails as
    // a dropped connection, which the RPC layer retries with growing backoff.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let attempts = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = attempts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unreachable.db");
    let config = dir.path().join("unreachable.toml");
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"{}\"\n\n[[chains]]\nname = \"dead\"\nchain_id = 1\nrpc = [\"{endpoint}\"]\n",
            support::database_url(&db)
        ),
    )
    .unwrap();
    let mut child = index_command(&config).spawn().unwrap();
    // Deep in the retries: the backoff before a fourth attempt is already around a second.
    while attempts.load(std::sync::atomic::Ordering::SeqCst) < 4 {
        assert!(
            child.child().try_wait().unwrap().is_none(),
            "gave up on the endpoint"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let signalled_at = std::time::Instant::now();
    let signalled = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let status = loop {
        if let Some(status) = child.child().try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled_at.elapsed() < Duration::from_secs(1),
            "still running a second after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(status.code(), Some(0), "SIGTERM is a clean exit");
    assert!(
        !dir.path().join("unreachable.db-wal").exists(),
        "a clean stop leaves no write-ahead log behind"
    );
}
