//! The store's bulk loads on a real PostgreSQL (its `Any` driver turns `COPY t (columns) FROM
//! STDIN (FORMAT binary)` with bound values into a binary `COPY`): the rows it loads read back
//! exactly as an `INSERT` of the same bound values writes them, in every column type, NULLs
//! included; and a load PostgreSQL refuses (a duplicate key) or the driver refuses (a value its
//! column cannot hold, a table that is not there) fails with an error that names the table,
//! leaves the transaction to roll back, and the connection reads on. These run on the test
//! PostgreSQL server whichever backend the rest of the suite uses.

use crate::support::postgres;

use sqlx::any::{AnyArguments, AnyPoolOptions};
use sqlx::{AnyPool, Arguments, Connection};

/// Every column type a bulk load writes.
const COLUMNS: &str = "k, flag, small, medium, big, single, double, words, short, bytes";

/// A table of every type a bulk load writes.
fn create(table: &str) -> String {
    format!(
        "CREATE TABLE {table} (k BIGINT PRIMARY KEY, flag BOOLEAN, small SMALLINT,
             medium INTEGER, big BIGINT, single REAL, double DOUBLE PRECISION, words TEXT,
             short VARCHAR(8), bytes BYTEA)"
    )
}

/// The statement that asks the driver for a bulk load into `table`.
fn copy_into(table: &str, columns: &str) -> String {
    format!("COPY {table} ({columns}) FROM STDIN (FORMAT binary)")
}

/// A one-connection pool on a new database of the test server, through the store's drivers.
async fn pool() -> AnyPool {
    agentindex_indexer::store::install_drivers();
    let url = postgres::server().fresh_database();
    AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap()
}

/// Rows of every kind of value the store binds and a few it does not: NULL in every column, the
/// integers' extremes (64-bit values into narrower columns, as the store binds every integer),
/// floating-point values, text of several scripts and blobs with zero bytes or none.
fn values() -> AnyArguments<'static> {
    let mut args = AnyArguments::default();
    let add = |result: Result<(), _>| result.expect("binds");
    // k, flag, small, medium, big, single, double, words, short, bytes
    add(args.add(1_i64));
    add(args.add(true));
    add(args.add(i64::from(i16::MIN)));
    add(args.add(i64::from(i32::MAX)));
    add(args.add(i64::MIN));
    add(args.add(1.5_f32));
    add(args.add(0.1_f64));
    add(args.add("agent 0x1f — ünïcödé 代理".to_string()));
    add(args.add("8 chars!".to_string()));
    add(args.add(vec![0_u8, 1, 0, 255]));

    add(args.add(2_i64));
    add(args.add(None::<bool>));
    add(args.add(None::<i64>));
    add(args.add(None::<i64>));
    add(args.add(None::<i64>));
    add(args.add(None::<f32>));
    add(args.add(None::<f64>));
    add(args.add(None::<String>));
    add(args.add(None::<String>));
    add(args.add(None::<Vec<u8>>));

    add(args.add(3_i64));
    add(args.add(false));
    add(args.add(0_i64));
    add(args.add(-1_i64));
    add(args.add(i64::MAX));
    add(args.add(-0.0_f32));
    add(args.add(-1e300_f64));
    add(args.add(String::new()));
    add(args.add(String::new()));
    add(args.add(Vec::<u8>::new()));
    args
}

/// `table`'s rows as PostgreSQL prints them, in key order.
async fn printed(pool: &AnyPool, table: &str) -> Vec<String> {
    sqlx::query_scalar(&format!(
        "SELECT row_to_json(t)::text FROM {table} t ORDER BY k"
    ))
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_load_writes_what_an_insert_of_the_same_values_writes() {
    let pool = pool().await;
    for table in ["inserted", "copied"] {
        sqlx::query(&create(table)).execute(&pool).await.unwrap();
    }
    let insert = format!(
        "INSERT INTO inserted ({COLUMNS}) VALUES {}",
        (0..3)
            .map(|row| {
                let numbers: Vec<String> = (1..=10).map(|c| format!("${}", row * 10 + c)).collect();
                format!("({})", numbers.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    sqlx::query_with(&insert, values())
        .execute(&pool)
        .await
        .unwrap();
    let loaded = sqlx::query_with(&copy_into("copied", COLUMNS), values())
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(loaded.rows_affected(), 3);

    let (inserted, copied) = (
        printed(&pool, "inserted").await,
        printed(&pool, "copied").await,
    );
    assert_eq!(
        copied, inserted,
        "the loaded rows against the inserted ones"
    );
    assert!(
        copied[1].contains(r#""flag":null,"small":null"#),
        "{}",
        copied[1]
    );
    assert!(
        copied[0].contains(r#""bytes":"\\x000100ff""#),
        "{}",
        copied[0]
    );
    // Compared as values too, not only as printed.
    let differing: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM inserted i FULL JOIN copied c ON i.k = c.k
          WHERE (i.*) IS DISTINCT FROM (c.*)",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(differing, 0);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_bulk_load_names_its_table_and_its_transaction_rolls_back() {
    let pool = pool().await;
    sqlx::query(&create("loaded")).execute(&pool).await.unwrap();
    let one_row = |k: i64| {
        let mut args = AnyArguments::default();
        args.add(k).unwrap();
        args.add(format!("row {k}")).unwrap();
        args
    };
    let statement = copy_into("loaded", "k, words");
    sqlx::query_with(&statement, one_row(1))
        .execute(&pool)
        .await
        .unwrap();

    let mut conn = pool.acquire().await.unwrap();
    for roll_back in [true, false] {
        let mut tx = conn.begin().await.unwrap();
        sqlx::query_with(&statement, one_row(2))
            .execute(&mut *tx)
            .await
            .expect("a new key loads");
        // Key 1 is there already: PostgreSQL refuses the load midway.
        let refused = sqlx::query_with(&statement, one_row(1))
            .execute(&mut *tx)
            .await
            .expect_err("a duplicate key");
        let said = refused.to_string();
        assert!(
            said.contains("bulk load into loaded: duplicate key value violates unique constraint")
                && said.contains("Key (k)=(1) already exists"),
            "{said}"
        );
        let database = refused.as_database_error().expect("PostgreSQL's own error");
        assert_eq!(database.code().as_deref(), Some("23505"));
        assert!(database.is_unique_violation());
        assert_eq!(database.table(), Some("loaded"));
        // The transaction is PostgreSQL's failed one until it is rolled back.
        let aborted = sqlx::query_scalar::<_, i64>("SELECT 1")
            .fetch_one(&mut *tx)
            .await
            .expect_err("the transaction failed")
            .to_string();
        assert!(
            aborted.contains("current transaction is aborted"),
            "{aborted}"
        );
        if roll_back {
            tx.rollback().await.unwrap();
        } else {
            drop(tx);
        }
        let keys: Vec<i64> = sqlx::query_scalar("SELECT k FROM loaded ORDER BY k")
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        assert_eq!(
            keys,
            [1],
            "key 2 went with the transaction (rolled back: {roll_back})"
        );
    }

    // Refused by the driver before anything is sent: a value its column cannot hold, a table
    // that is not there. The connection reads on, and loads again.
    let mut wrong = AnyArguments::default();
    wrong.add("three".to_string()).unwrap();
    wrong.add("row 3".to_string()).unwrap();
    let said = sqlx::query_with(&statement, wrong)
        .execute(&mut *conn)
        .await
        .expect_err("text in a BIGINT column")
        .to_string();
    assert!(
        said.contains("bulk load into loaded: row 0: column k (Int8) cannot hold"),
        "{said}"
    );
    let said = sqlx::query_with(&copy_into("missing", "k, words"), one_row(4))
        .execute(&mut *conn)
        .await
        .expect_err("no such table")
        .to_string();
    assert!(
        said.contains("bulk load into missing:") && said.contains("does not exist"),
        "{said}"
    );
    sqlx::query_with(&statement, one_row(5))
        .execute(&mut *conn)
        .await
        .unwrap();
    let keys: Vec<i64> = sqlx::query_scalar("SELECT k FROM loaded ORDER BY k")
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    assert_eq!(keys, [1, 5]);
    drop(conn);
    pool.close().await;
}
