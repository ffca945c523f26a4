//! The driver against a real SQLite file: statements past the limit stopped, abandoned ones
//! stopped at their own deadline, and transactions and bound values as on sqlx's own driver.

use super::*;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Connection};
use std::time::Instant;

/// Counts to ten billion: hours of one core, unless the statement is stopped.
const ENDLESS: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                       WHERE i < 10000000000) SELECT count(*) FROM n";

/// A one-connection pool on a new database in `dir`, its statements limited to `limit`.
async fn pool(dir: &tempfile::TempDir, limit: Option<Duration>) -> AnyPool {
    crate::store::install_drivers();
    let mut url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("guard.db").display()
    );
    if let Some(limit) = limit {
        url = format!("{url}&{}", limit_parameter(limit));
    }
    AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_statement_past_the_limit_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let limit = Duration::from_millis(200);
    let pool = pool(&dir, Some(limit)).await;
    let started = Instant::now();
    // A safety bound only: a statement that is not stopped would run for hours.
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        sqlx::query_scalar::<_, i64>(ENDLESS).fetch_one(&pool),
    )
    .await
    .expect("the statement is stopped");
    let error = outcome.expect_err("stopped, not finished").to_string();
    assert!(error.contains("interrupted"), "{error}");
    assert!(started.elapsed() >= limit);
}

#[tokio::test]
async fn a_statement_interrupted_in_a_transaction_leaves_it_to_roll_back() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir, Some(Duration::from_millis(200))).await;
    let mut conn = pool.acquire().await.unwrap();
    // Ended by `rollback`, then by drop (a rollback sqlx queues without waiting).
    for roll_back in [true, false] {
        let mut tx = conn.begin().await.unwrap();
        let stopped = sqlx::query_scalar::<_, i64>(ENDLESS)
            .fetch_one(&mut *tx)
            .await;
        assert!(stopped.is_err());
        if roll_back {
            tx.rollback().await.unwrap();
        } else {
            drop(tx);
        }
        let one: i64 = sqlx::query_scalar("SELECT 1")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(one, 1);
        assert!(!conn.is_in_transaction(), "rolled back: {roll_back}");
    }
}

#[tokio::test]
async fn a_dropped_statement_stops_at_its_own_deadline_and_frees_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let limit = Duration::from_secs(1);
    let pool = pool(&dir, Some(limit)).await;
    let mut conn = pool.acquire().await.unwrap();
    let started = Instant::now();
    let gave_up = tokio::time::timeout(
        Duration::from_millis(800),
        sqlx::query_scalar::<_, i64>(ENDLESS).fetch_one(&mut *conn),
    )
    .await;
    assert!(gave_up.is_err(), "the caller gave up first");
    let one: i64 = tokio::time::timeout(
        Duration::from_secs(10),
        sqlx::query_scalar("SELECT 1").fetch_one(&mut *conn),
    )
    .await
    .expect("the abandoned statement stopped")
    .unwrap();
    assert_eq!(one, 1);
    // The abandoned statement stopped at its own deadline: the next one did not push it to
    // a second later by setting its own while the first still ran.
    let waited = started.elapsed();
    assert!(waited >= limit && waited < limit + limit / 2, "{waited:?}");
}

#[tokio::test]
async fn each_statement_has_the_limit_from_its_own_start() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir, Some(Duration::from_millis(200))).await;
    let count = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                 WHERE i < $1) SELECT count(*) FROM n";
    for _ in 0..3 {
        // Past the connection's first deadline by now, each count meets the progress handler.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let counted: i64 = sqlx::query_scalar(count)
            .bind(100_000_i64)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(counted, 100_000);
    }
}

#[tokio::test]
async fn transactions_run_as_on_sqlite_with_and_without_a_limit() {
    for limit in [None, Some(Duration::from_secs(5))] {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool(&dir, limit).await;
        let mut conn = pool.acquire().await.unwrap();
        assert_eq!(conn.backend_name(), "SQLite");
        sqlx::query("CREATE TABLE t (v INTEGER)")
            .execute(&mut *conn)
            .await
            .unwrap();
        let mut tx = conn.begin().await.unwrap();
        assert!(tx.is_in_transaction());
        sqlx::query("INSERT INTO t VALUES ($1)")
            .bind(1_i64)
            .execute(&mut *tx)
            .await
            .unwrap();
        let mut savepoint = tx.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES ($1)")
            .bind(2_i64)
            .execute(&mut *savepoint)
            .await
            .unwrap();
        savepoint.rollback().await.unwrap();
        tx.commit().await.unwrap();
        assert!(!conn.is_in_transaction());
        let rows: Vec<i64> = sqlx::query_scalar("SELECT v FROM t")
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        assert_eq!(rows, [1], "limit {limit:?}");
        // A transaction dropped unfinished is rolled back.
        drop(conn.begin().await.unwrap());
        let mut tx = conn.begin().await.unwrap();
        sqlx::query("DELETE FROM t")
            .execute(&mut *tx)
            .await
            .unwrap();
        drop(tx);
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(left, 1, "limit {limit:?}");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_low_priority_pools_workers_run_at_the_lowest_priority_and_no_others_do() {
    use crate::priority::{is_lowered, threads_named};
    use options::LOW_PRIORITY_THREAD;
    let dir = tempfile::tempdir().unwrap();
    let ordinary = pool(&dir, None).await;
    let low_url = format!(
        "sqlite://{}?mode=ro&{}",
        dir.path().join("guard.db").display(),
        low_priority_parameter()
    );
    let low = AnyPoolOptions::new()
        .max_connections(2)
        .min_connections(2)
        .connect(&low_url)
        .await
        .unwrap();
    let one: i64 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&low)
        .await
        .unwrap();
    assert_eq!(one, 1);
    sqlx::query("SELECT 1").execute(&ordinary).await.unwrap();
    // Other tests of this process may open low-priority connections at the same time, whose
    // workers are named before they lower themselves: this pool's own worker is one of those
    // that are lowered, and no ordinary worker ever is.
    let lowered: Vec<i32> = threads_named(LOW_PRIORITY_THREAD)
        .into_iter()
        .filter(|tid| is_lowered(*tid) == Some(true))
        .collect();
    assert!(!lowered.is_empty(), "the low pool's worker is lowered");
    let others = threads_named("sqlx-sqlite-wor");
    assert!(!others.is_empty(), "the ordinary pool's worker is there");
    for tid in others {
        assert_ne!(is_lowered(tid), Some(true), "ordinary worker {tid}");
    }
}
