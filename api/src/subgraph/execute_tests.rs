//! Unit tests of `execute.rs` on a real store: a nested list that would read more than
//! `MAX_NESTED_ROWS` rows for one page is refused, and one under the bound is read whole.

use super::*;
use crate::row_budget::RowBudget;
use crate::subgraph::plan::first_list;
use agentindex_indexer::schema::{agents, feedback};
use agentindex_indexer::store::Store;

/// 21 ERC-8004 agents with 1,000 feedback each, written straight into a fresh store.
async fn store_with_feedback() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bound.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
         INSERT INTO {} (agent_key, chain_id, source, registry, token_id, owner, operators,
            active, registered_block, registered_at, last_event_block)
         SELECT '1:0xreg:' || i, 1, 'erc8004', '0xreg', CAST(i AS TEXT), '0xowner', '[]', 1, 1, 12, 1
           FROM n",
        agents::NAME
    ))
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20999)
         INSERT INTO {} (chain_id, registry, token_id, client, feedback_index, value,
            value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
            block_number, log_index, tx_hash, timestamp)
         SELECT 1, '0xreg', CAST(i / 1000 AS TEXT), '0xclient', i % 1000 + 1, '50', 0, '', '', '',
                '', '0x', 'v2', 2 + i / 1000, i % 1000, '0x', 24
           FROM n",
        feedback::NAME
    ))
    .execute(&pool)
    .await
    .unwrap();
    (dir, store)
}

async fn run(store: &Store, query: &str) -> Result<Json, RunError> {
    let list = &first_list(Dialect::Sqlite, query);
    let rows = RowBudget::new(1_000_000);
    Source {
        pool: store.reader(),
        chain: None,
        rows: &rows,
    }
    .list_json(list)
    .await
}

#[tokio::test]
async fn a_nested_list_reading_too_many_rows_is_refused() {
    let (_dir, store) = store_with_feedback().await;
    // 21 agents a page, 1,000 feedback each: 21,000 rows, over the bound.
    let refused = run(
        &store,
        "{ agents(first: 21) { id feedback(first: 1000) { id } } }",
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&refused, RunError::Refused(m) if m.contains("`feedback` would read more than 20000")),
        "{refused}"
    );
    // 20 agents: 20,000 rows, every one of them read.
    let answer = run(
        &store,
        "{ agents(first: 20) { id feedback(first: 1000) { id } } }",
    )
    .await
    .unwrap();
    let read: usize = answer
        .as_array()
        .expect("a list")
        .iter()
        .map(|agent| agent["feedback"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(read, 20_000);
}

/// A key asked twice is answered once, in the place of the first and with the last one's value
/// (as graph-node's ordered objects keep a key inserted again).
#[tokio::test]
async fn a_key_asked_twice_keeps_its_first_place_and_its_last_value() {
    let (_dir, store) = store_with_feedback().await;
    let query = "{ agents(first: 1) { x: id __typename x: owner id __typename } }";
    let list = &first_list(Dialect::Sqlite, query);
    let rows = RowBudget::new(1_000_000);
    let mut out = Vec::new();
    Source {
        pool: store.reader(),
        chain: None,
        rows: &rows,
    }
    .list(list, &mut out)
    .await
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"[{"x":"0xowner","__typename":"Agent","id":"1:0"}]"#
    );
}
