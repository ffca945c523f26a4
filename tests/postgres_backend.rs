//! PostgreSQL as the store, next to SQLite: the same chain indexed into both gives the same
//! canonical dump and the same reputation feed, byte for byte; and a chain takes one writer.
//! These run on the test PostgreSQL server whichever backend the rest of the suite uses.

use crate::support;
use crate::support::postgres;

use agentindex_contracts::Devnet;
use agentindex_indexer::store::{Dialect, Store, StoreError, StoreRead};
use sha2::{Digest, Sha256};

/// The reputation feed at the head and its SHA-256, as a client reads them.
async fn feed(base: &str) -> (String, String) {
    let response = reqwest::get(format!("{base}/feeds/reputation.jsonl"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "feed from {base}");
    let header = response.headers()["x-feed-sha256"]
        .to_str()
        .unwrap()
        .to_string();
    let body = response.text().await.unwrap();
    let digest: String = Sha256::digest(body.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        header, digest,
        "the digest header is the SHA-256 of the body"
    );
    (body, digest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_chain_indexes_alike_into_sqlite_and_postgres() {
    let devnet = Devnet::start().await.unwrap();
    support::scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();

    let mut on_sqlite = support::config(&devnet, &dir.path().join("index.db"), 0);
    on_sqlite.database.url = format!("sqlite://{}", dir.path().join("index.db").display());
    let mut on_postgres = on_sqlite.clone();
    on_postgres.database.url = postgres::server().fresh_database();
    support::index_until_synced(&on_sqlite).await;
    support::index_until_synced(&on_postgres).await;

    let sqlite = Store::open(&on_sqlite.database.url).await.unwrap();
    let pg = Store::open(&on_postgres.database.url).await.unwrap();
    assert_eq!(sqlite.dialect(), Dialect::Sqlite);
    assert_eq!(pg.dialect(), Dialect::Postgres);
    let expected = sqlite.canonical_dump().await.unwrap();
    assert!(
        expected.lines().count() > 40,
        "the scenario fills the tables:\n{expected}"
    );
    support::assert_same_index(
        &pg.canonical_dump().await.unwrap(),
        &expected,
        "PostgreSQL against SQLite",
    );

    let served_sqlite = support::api::serve(sqlite.clone(), &on_sqlite).await;
    let served_pg = support::api::serve(pg.clone(), &on_postgres).await;
    let (sqlite_feed, sqlite_digest) = feed(&served_sqlite.base).await;
    let (pg_feed, pg_digest) = feed(&served_pg.base).await;
    assert!(
        sqlite_feed.lines().count() >= 3,
        "every agent of the scenario is in the feed:\n{sqlite_feed}"
    );
    assert_eq!(pg_feed, sqlite_feed, "the feeds are the same text");
    assert_eq!(pg_digest, sqlite_digest);
    served_sqlite.stop().await;
    served_pg.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_writer_for_a_chain_is_refused_and_another_chain_is_not() {
    let url = postgres::server().fresh_database();
    let first = Store::open(&url).await.unwrap();
    let second = Store::open(&url).await.unwrap();
    let (one, two) = (first.writer(4), second.writer(4));
    one.init_chain(31337, "devnet", 0).await.unwrap();
    let refused = two
        .init_chain(31337, "devnet", 0)
        .await
        .expect_err("a second writer for the chain");
    assert!(
        matches!(
            refused,
            StoreError::SecondWriter {
                chain_id: 31337,
                ..
            }
        ),
        "{refused:?}"
    );
    let message = refused.to_string();
    assert!(
        message.contains("chain 31337 already has a writer") && message.contains("process "),
        "the refusal says who holds the chain: {message}"
    );
    two.init_chain(8453, "base", 0)
        .await
        .expect("another chain takes its own writer");
    assert!(
        first.statuses().await.unwrap().len() == 2,
        "both chains are recorded"
    );
    // The lock goes with its holder: once the first store is closed, the chain is free.
    drop(one);
    first.close().await;
    two.init_chain(31337, "devnet", 0)
        .await
        .expect("the chain's writer is gone, so this one may write it");
    second.close().await;
}
