//! PostgreSQL as the store, next to SQLite: the same chain indexed into both (PostgreSQL through
//! its Unix socket, as on the database's own machine) gives the same canonical dump and the same
//! reputation feed, byte for byte, and `agentindex copy` moves it either way; a chain takes one
//! writer; and one indexer with two `serve` replicas on one database answer alike, a replica's
//! subscriber hearing of payments and reorgs. These run on the test PostgreSQL server whichever
//! backend the rest of the suite uses.

use crate::support;
use crate::support::api::feed;
use crate::support::graphql::{data, events_of, payments_heard, subscriber, wait_connected};
use crate::support::{binary, chain, postgres};

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::store::{Dialect, Store, StoreError, StoreRead};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_chain_indexes_alike_into_sqlite_and_postgres() {
    let devnet = Devnet::start().await.unwrap();
    support::scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();

    let mut on_sqlite = support::config(&devnet, &dir.path().join("index.db"), 0);
    on_sqlite.database.url = format!("sqlite://{}", dir.path().join("index.db").display());
    let mut on_postgres = on_sqlite.clone();
    on_postgres.database.url = postgres::server().fresh_database_on_socket();
    support::index_until_synced(&on_sqlite).await;
    support::index_until_synced(&on_postgres).await;

    let sqlite = Store::open(&on_sqlite.database.url).await.unwrap();
    let pg = Store::open(&on_postgres.database.url).await.unwrap();
    assert_eq!(sqlite.dialect(), Dialect::Sqlite);
    assert_eq!(pg.dialect(), Dialect::Postgres);
    // Every connection of the store came through the socket: the server knows no client
    // address for them.
    let over_tcp: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity
          WHERE datname = current_database() AND client_addr IS NOT NULL",
    )
    .fetch_one(pg.reader())
    .await
    .unwrap();
    assert_eq!(over_tcp, 0, "the store connects through the Unix socket");
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

    // A past block's feed, stored by the feed keeper on each backend and read back from it.
    let past = support::indexed_block(&sqlite, devnet.chain_id()).await - 1;
    support::store_feeds(&on_sqlite, &[past]).await;
    support::store_feeds(&on_postgres, &[past]).await;
    let served_sqlite = support::api::serve(sqlite.clone(), &on_sqlite).await;
    let served_pg = support::api::serve(pg.clone(), &on_postgres).await;
    let at_past = format!("?block={past}");
    let (sqlite_past, pg_past) = (
        feed(&served_sqlite.base, &at_past).await,
        feed(&served_pg.base, &at_past).await,
    );
    assert!(!sqlite_past.body.is_empty(), "the stored feed has lines");
    assert_eq!(pg_past.body, sqlite_past.body, "one stored feed on both");
    assert_eq!(pg_past.digest, sqlite_past.digest);
    let (sqlite_feed, pg_feed) = (
        feed(&served_sqlite.base, "").await,
        feed(&served_pg.base, "").await,
    );
    assert!(
        sqlite_feed.body.lines().count() >= 3,
        "every agent of the scenario is in the feed:\n{}",
        sqlite_feed.body
    );
    assert_eq!(
        pg_feed.body, sqlite_feed.body,
        "the feeds are the same text"
    );
    assert_eq!(pg_feed.digest, sqlite_feed.digest);
    served_sqlite.stop().await;
    served_pg.stop().await;
    sqlite.close().await;
    pg.close().await;

    // `agentindex copy` moves the SQLite index into an empty PostgreSQL database and back,
    // verifying each copy by its dump and feeds; a database that holds an index is refused.
    let copied = postgres::server().fresh_database();
    let back = format!("sqlite://{}", dir.path().join("back.db").display());
    for (from, to) in [(&on_sqlite.database.url, &copied), (&copied, &back)] {
        let run = copy(from, to);
        let said = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "copy {from} -> {to}: {said}{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(said.contains("verified: the dumps are equal"), "{said}");
        assert!(said.contains("sha-256"), "the feeds were compared: {said}");
    }
    for url in [&copied, &back] {
        let store = Store::open(url).await.unwrap();
        support::assert_same_index(
            &store.canonical_dump().await.unwrap(),
            &expected,
            "a copied index",
        );
        store.close().await;
    }
    let again = copy(&on_sqlite.database.url, &copied);
    assert!(
        !again.status.success(),
        "a second copy into the same database"
    );
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("already holds an index"), "{said}");
}

/// Runs `agentindex copy --from from --to to`.
fn copy(from: &str, to: &str) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .args(["copy", "--from", from, "--to", to])
        .output()
        .unwrap()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_indexer_and_two_replicas_answer_alike_and_a_replica_hears_of_payments() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let agent = demo::via_factory(
        &devnet,
        a[1],
        demo::sample_card(&devnet, "Replicated", None),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = postgres::server().fresh_database();
    let toml = support::config_toml_at(&devnet, &[devnet.endpoint()], &url, 3, "")
        .replace("poll_interval_ms = 100", "poll_interval_ms = 20")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let config = dir.path().join("replicated.toml");
    std::fs::write(&config, toml).unwrap();

    // The writer, then two readers, each a process of its own on the one database.
    let _indexer = binary::spawn(&["index", "--config"], &config);
    let store = Store::open(&url).await.unwrap();
    let limit = Duration::from_secs(60);
    chain::wait_for_head(&devnet, &store, limit).await;
    let (_one, first) = binary::start(&["serve", "--config"], &config);
    let (_two, second) = binary::start(&["serve", "--config"], &config);

    // A second writer of the chain is refused, and says why.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .args(["index", "--exit-when-synced", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!refused.status.success(), "a second indexer of the chain");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("already has a writer"), "{said}");

    let key = format!("{}:{agent:#x}", devnet.chain_id());
    let since = support::indexed_block(&store, devnet.chain_id()).await;
    let address = second.trim_start_matches("http://");
    let mut payments = subscriber(
        &format!("ws://{address}/graphql/ws"),
        "subscription($id: ID, $since: Int) { newPayments(agentId: $id, sinceBlock: $since) { payer amount } }",
        json!({ "id": key, "since": since }),
        2,
    );
    wait_connected(&mut payments);
    // Paid by a[5] at the tip; a reorg replaces that block with one where a[6] pays; then a[7]
    // pays. The replica's subscriber hears a[6] and a[7], never a[5].
    let expected = chain::pay_reorg_pay(&devnet, &store, agent).await;
    assert_eq!(
        payments_heard(&events_of(payments)),
        expected,
        "the replica reports committed, final payments once each, the undone one never"
    );

    // Both replicas answer alike, the reorg included.
    let query = "query($id: ID!) { agent(id: $id) { id name payments(first: 10) { nodes { payer amount } } reputation { paymentCount uniquePayers } } agents { totalCount } }";
    let answers: Vec<serde_json::Value> = [&first, &second]
        .iter()
        .map(|base| data(&format!("{base}/graphql"), query, json!({ "id": key })))
        .collect();
    assert_eq!(answers[0], answers[1], "both replicas answer the same");
    let payers: Vec<&str> = answers[0]["agent"]["payments"]["nodes"]
        .as_array()
        .expect("payments")
        .iter()
        .map(|p| p["payer"].as_str().unwrap())
        .collect();
    assert!(
        !payers.contains(&format!("{:#x}", a[5]).as_str()),
        "the undone payment is gone from both: {payers:?}"
    );
    assert_eq!(payers.len(), 2, "{payers:?}");
    let (feed_one, feed_two) = (feed(&first, "").await, feed(&second, "").await);
    assert_eq!(
        feed_one.digest, feed_two.digest,
        "one feed digest from both replicas"
    );
    store.close().await;
}
