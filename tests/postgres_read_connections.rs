//! The read pool's connections on PostgreSQL: handed out without a round trip while in steady
//! use, and checked before use once idle, so connections the server dropped (a restart, an
//! administrator's `pg_terminate_backend`) are replaced instead of failing a request. These
//! run on the test PostgreSQL server whichever backend the rest of the suite uses.

use crate::support::postgres;

use agentindex_indexer::store::Store;
use sqlx::{AnyConnection, Connection};
use std::time::{Duration, Instant};

/// Backends of the current database other than the asking connection.
async fn other_backends(admin: &mut AnyConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_one(admin)
    .await
    .unwrap()
}

/// A constant, asked of the store's read pool.
async fn ask_read_pool(store: &Store) -> i64 {
    sqlx::query_scalar("SELECT 7::bigint")
        .fetch_one(store.reader())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_connections_dropped_by_the_server_are_replaced_before_use() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    assert!(
        !store.reader().options().get_test_before_acquire(),
        "connections in steady use are handed out without a round trip"
    );
    // Several connections of the pool opened and left idle.
    let concurrent: Vec<_> = (0..4).map(|_| ask_read_pool(&store)).collect();
    for answer in futures::future::join_all(concurrent).await {
        assert_eq!(answer, 7);
    }

    let mut admin = AnyConnection::connect(&url).await.unwrap();
    assert!(
        other_backends(&mut admin).await >= 2,
        "the store's pools are connected"
    );
    let dropped: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert!(dropped.iter().all(|done| *done), "every backend terminated");
    let gone_by = Instant::now() + Duration::from_secs(10);
    while other_backends(&mut admin).await > 0 {
        assert!(
            Instant::now() < gone_by,
            "the terminated backends went away"
        );
        tokio::task::yield_now().await;
    }
    // What is tested: a connection idle longer than the pool's check threshold (one second) is
    // checked before it is handed out. Waiting out that threshold is the condition itself.
    tokio::time::sleep(Duration::from_millis(1_200)).await;

    for _ in 0..8 {
        assert_eq!(
            ask_read_pool(&store).await,
            7,
            "a read after the server dropped the pool's connections is answered"
        );
    }
    assert!(
        other_backends(&mut admin).await >= 1,
        "the pool opened a new connection"
    );
    admin.close().await.unwrap();
    store.close().await;
}
