//! Migrations that rewrite stored rows, checked on rows written in the shape before them.

use super::sqlite::MIGRATOR;
use sqlx::{Connection, Row, SqliteConnection};

/// Applies the migrations before `version` to a fresh database and returns its connection.
async fn migrated_before(path: &std::path::Path, version: i64) -> SqliteConnection {
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let mut conn = SqliteConnection::connect(&url).await.expect("a database");
    for migration in MIGRATOR.iter().filter(|m| m.version < version) {
        sqlx::raw_sql(&migration.sql)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("migration {}: {e}", migration.version));
    }
    conn
}

async fn apply(conn: &mut SqliteConnection, version: i64) {
    let migration = MIGRATOR
        .iter()
        .find(|m| m.version == version)
        .expect("the migration exists");
    sqlx::raw_sql(&migration.sql)
        .execute(&mut *conn)
        .await
        .expect("the migration applies");
}

/// 0007 turns the hex text of raw events into bytes: hashes, address and topic0 decoded, the
/// JSON list of further topics concatenated in order, everything else as it was.
#[tokio::test]
async fn compacting_events_keeps_every_byte_of_each_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut conn = migrated_before(&dir.path().join("old.db"), 7).await;
    let (hash, tx) = (
        format!("0x{}", "ab".repeat(32)),
        format!("0x{}", "cd".repeat(32)),
    );
    let (topic0, t1, t2) = (
        format!("0x{}", "01".repeat(32)),
        format!("0x{}", "02".repeat(32)),
        format!("0x{}", "03".repeat(32)),
    );
    let address = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    for (log, topic0, topics) in [
        (0, Some(topic0.as_str()), format!(r#"["{t1}","{t2}"]"#)),
        (1, None, "[]".to_string()),
    ] {
        sqlx::query(
            "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp,
               tx_hash, address, source, topic0, topics, data, kind, decode_error)
             VALUES (1, 7, $1, $2, 1700000000, $3, $4, 'token', $5, $6, x'00ff', NULL, 'too short')",
        )
        .bind(log)
        .bind(&hash)
        .bind(&tx)
        .bind(address)
        .bind(topic0)
        .bind(topics)
        .execute(&mut conn)
        .await
        .expect("an event in the old shape");
    }

    apply(&mut conn, 7).await;

    let rows = sqlx::query(
        "SELECT hex(block_hash), hex(tx_hash), hex(address), iif(topic0 IS NULL, NULL, hex(topic0)),
           hex(topics), hex(data),
           block_timestamp, source, decode_error FROM events ORDER BY log_index",
    )
    .fetch_all(&mut conn)
    .await
    .expect("the events read back");
    let upper = |s: &str| s.trim_start_matches("0x").to_uppercase();
    let first = &rows[0];
    assert_eq!(first.get::<String, _>(0), upper(&hash));
    assert_eq!(first.get::<String, _>(1), upper(&tx));
    assert_eq!(first.get::<String, _>(2), upper(address));
    assert_eq!(first.get::<Option<String>, _>(3), Some(upper(&topic0)));
    assert_eq!(first.get::<String, _>(4), upper(&t1) + &upper(&t2));
    assert_eq!(first.get::<String, _>(5), "00FF");
    assert_eq!(first.get::<i64, _>(6), 1_700_000_000);
    assert_eq!(first.get::<String, _>(7), "token");
    assert_eq!(first.get::<String, _>(8), "too short");
    let second = &rows[1];
    assert_eq!(
        second.get::<Option<String>, _>(3),
        None,
        "no topic0 stays NULL"
    );
    assert_eq!(second.get::<String, _>(4), "", "no further topics is empty");
    let failed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM events INDEXED BY events_failed
         WHERE chain_id = 1 AND block_number = 7 AND decode_error IS NOT NULL",
    )
    .fetch_one(&mut conn)
    .await
    .expect("the index of undecoded events is back");
    assert_eq!(failed, 2);
}

/// 0026 keeps one outflow per transfer, with the address it left: the address each stored
/// agent row was bound to at the transfer, whatever the agents bound there later.
#[tokio::test]
async fn outflows_stored_per_agent_become_one_per_transfer_with_its_sender() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut conn = migrated_before(&dir.path().join("old.db"), 26).await;
    let (x, y) = (
        "0x00000000000000000000000000000000000000aa",
        "0x00000000000000000000000000000000000000bb",
    );
    // a1 and a2 stay at x; a3 is at x from (1, 2) and at y from (5, 0).
    for (agent, address, block, log) in [
        ("a1", x, 1, 0),
        ("a2", x, 1, 1),
        ("a3", x, 1, 2),
        ("a3", y, 5, 0),
    ] {
        sqlx::query(
            "INSERT INTO payment_bindings (chain_id, agent_key, address, block_number, log_index)
             VALUES (1, $1, $2, $3, $4)",
        )
        .bind(agent)
        .bind(address)
        .bind(block)
        .bind(log)
        .execute(&mut conn)
        .await
        .expect("a binding");
    }
    // As the writer stored them: one row per agent bound to the sender at the transfer.
    for (block, agents, to) in [
        (3, vec!["a1", "a2", "a3"], "0x01"),
        (6, vec!["a1", "a2"], "0x02"),
        (7, vec!["a3"], "0x03"),
    ] {
        for agent in agents {
            sqlx::query(
                "INSERT INTO outflows (chain_id, block_number, log_index, agent_key, token,
                   to_address, amount, timestamp)
                 VALUES (1, $1, 4, $2, '0xtoken', $3, '1000', $1 * 10)",
            )
            .bind(block)
            .bind(agent)
            .bind(to)
            .execute(&mut conn)
            .await
            .expect("an outflow");
        }
    }
    apply(&mut conn, 26).await;
    let rows: Vec<(i64, i64, String, String, String, String, i64)> = sqlx::query_as(
        "SELECT block_number, log_index, from_address, token, to_address, amount, timestamp
           FROM outflows ORDER BY block_number",
    )
    .fetch_all(&mut conn)
    .await
    .expect("the new outflows");
    let row = |block: i64, from: &str, to: &str| {
        (
            block,
            4,
            from.to_string(),
            "0xtoken".to_string(),
            to.to_string(),
            "1000".to_string(),
            block * 10,
        )
    };
    assert_eq!(
        rows,
        vec![row(3, x, "0x01"), row(6, x, "0x02"), row(7, y, "0x03")]
    );
}

/// 0027 fills `agent_postings` from the full-text index: each agent's words and weights as the
/// writer computes them from the same search row.
#[tokio::test]
async fn search_rows_indexed_before_postings_get_the_writers_postings() {
    use crate::documents::search_postings::{SearchText, postings};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut conn = migrated_before(&dir.path().join("old.db"), 27).await;
    let rows = [
        (
            "k1",
            "Weather Agent",
            "Reports weather, rain and forecast",
            "forecast Forecast",
            "rain rain weather",
        ),
        (
            "k2",
            "Café Bot",
            "Serves café orders: café, café!",
            "order",
            "coffee",
        ),
    ];
    for (key, name, description, skills, tags) in rows {
        sqlx::query(
            "INSERT INTO agent_search (agent_key, name, description, skills, tags)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(key)
        .bind(name)
        .bind(description)
        .bind(skills)
        .bind(tags)
        .execute(&mut conn)
        .await
        .expect("a search row");
    }
    apply(&mut conn, 27).await;
    for (key, name, description, skills, tags) in rows {
        let stored: Vec<(String, i64)> = sqlx::query_as(
            "SELECT p.term, p.weight FROM agent_postings p
               JOIN search_agents d ON d.doc = p.doc
              WHERE d.agent_key = $1 ORDER BY p.term",
        )
        .bind(key)
        .fetch_all(&mut conn)
        .await
        .expect("the postings");
        let computed = postings(SearchText {
            name,
            description,
            skills,
            tags,
        });
        assert_eq!(stored, computed, "agent {key}");
    }
}

/// Several stores opening one new file at once (as `index` and `serve` started together do)
/// all come up migrated: one applies the migrations, the others wait and find them applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_opening_a_new_database_at_once_all_come_up() {
    for round in 0..5 {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("new.db").display());
        let opened = futures::future::join_all((0..4).map(|_| super::Store::open(&url))).await;
        for store in opened {
            let store = store.unwrap_or_else(|e| panic!("round {round}: {e}"));
            store.close().await;
        }
    }
}
