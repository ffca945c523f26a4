//! Unit tests of the paged relation reads on a real SQLite store: each agent gets its own page
//! (newest first, `rows` at most), a cursor continues strictly after the last item seen, counts
//! come from aggregates, and the query plan reads a page through the agent's index without
//! sorting the agent's whole list.

use super::super::counts::{self, Relation};
use super::{Window, feedback, history};
use agentindex_indexer::schema::{self, identity_registrations, identity_uri_updates};
use agentindex_indexer::store::Store;
use sqlx::AnyPool;

/// Feedback of agents 0, 1 and 2: 3,000, 5 and none, two a block from block 10 on, so
/// positions tie on the block.
const SPAMMED: i64 = 3_000;

/// The identity registry of the agents, as their keys and rows spell it.
const REGISTRY: &str = "0x000000000000000000000000000000000000000a";

async fn store_with_feedback() -> (tempfile::TempDir, Store, AnyPool) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("pages.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = AnyPool::connect(&url).await.unwrap();
    for (token, count) in [(0, SPAMMED), (1, 5)] {
        sqlx::query(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
             INSERT INTO {feedback_table} (chain_id, registry, token_id, client, feedback_index,
                value, value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                block_number, log_index, tx_hash, timestamp)
             SELECT 1, '{REGISTRY}', '{token}', '0xclient', i + 1, '50', 0, '', '', '', '', '0x',
                    'v2', 10 + i / 2, {token} * 10 + i % 2, '0x', 24
               FROM n",
            last = count - 1,
            feedback_table = schema::feedback::NAME,
        ))
        .execute(&pool)
        .await
        .unwrap();
    }
    sqlx::query(&format!(
        "INSERT INTO {} (chain_id, registry, token_id, owner, uri,
            block_number, log_index, tx_hash, timestamp)
         VALUES (1, '{REGISTRY}', '1', '0xowner', 'ipfs://x', 3, 0, '0x', 12)",
        identity_registrations::NAME
    ))
    .execute(&pool)
    .await
    .unwrap();
    (dir, store, pool)
}

fn agent(token: u32) -> String {
    format!("1:{REGISTRY}:{token}")
}

#[tokio::test]
async fn each_agent_gets_its_own_newest_page_and_a_cursor_continues_after_it() {
    let (_dir, store, _) = store_with_feedback().await;
    let pool = store.reader();
    let keys = [agent(0), agent(1), agent(2)];
    let window = Window {
        rows: 3,
        after: None,
    };
    let pages = feedback(pool, &keys, window).await.unwrap();
    let positions = |key: &str| -> Vec<(i64, i64)> {
        pages[key]
            .iter()
            .map(|f| (f.block_number, f.log_index))
            .collect()
    };
    let newest = 10 + (SPAMMED - 1) / 2;
    assert_eq!(
        positions(&keys[0]),
        vec![(newest, 1), (newest, 0), (newest - 1, 1)]
    );
    assert_eq!(positions(&keys[1]), vec![(12, 10), (11, 11), (11, 10)]);
    assert!(!pages.contains_key(&keys[2]), "no feedback, no page");

    // Strictly after (newest, 0): the tie on the block is broken by the log index.
    let next = feedback(
        pool,
        &keys[..1],
        Window {
            rows: 2,
            after: Some((newest, 0)),
        },
    )
    .await
    .unwrap();
    let got: Vec<(i64, i64)> = next[&keys[0]]
        .iter()
        .map(|f| (f.block_number, f.log_index))
        .collect();
    assert_eq!(got, vec![(newest - 1, 1), (newest - 1, 0)]);

    let counted = counts::of_agents(pool, Relation::Feedback, &keys)
        .await
        .unwrap();
    assert_eq!(counted.get(&keys[0]), Some(&SPAMMED));
    assert_eq!(counted.get(&keys[1]), Some(&5));
    assert_eq!(counted.get(&keys[2]), Some(&0));
}

#[tokio::test]
async fn history_pages_merge_the_tables_and_count_them_all() {
    let (_dir, store, writer) = store_with_feedback().await;
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)
         INSERT INTO {} (chain_id, registry, token_id, uri, updated_by,
            block_number, log_index)
         SELECT 1, '{REGISTRY}', '1', 'ipfs://' || i, '0xowner', 4 + i, 0
           FROM n",
        identity_uri_updates::NAME
    ))
    .execute(&writer)
    .await
    .unwrap();
    let keys = [agent(1)];
    let pool = store.reader();
    let all = history(
        pool,
        &keys,
        Window {
            rows: 100,
            after: None,
        },
    )
    .await
    .unwrap();
    let kinds: Vec<&str> = all[&keys[0]].iter().map(|h| h.kind.as_str()).collect();
    assert_eq!(kinds.len(), 11);
    assert_eq!(kinds.last(), Some(&"registered"), "oldest last");
    let page = history(
        pool,
        &keys,
        Window {
            rows: 2,
            after: Some((5, 0)),
        },
    )
    .await
    .unwrap();
    let blocks: Vec<i64> = page[&keys[0]].iter().map(|h| h.block_number).collect();
    assert_eq!(blocks, vec![4, 3]);
    let counted = counts::of_agents(pool, Relation::History, &keys)
        .await
        .unwrap();
    assert_eq!(counted.get(&keys[0]), Some(&11));
}

#[tokio::test]
async fn a_page_of_feedback_walks_the_agents_index_without_sorting_its_list() {
    let (_dir, store, _) = store_with_feedback().await;
    let pool = store.reader();
    let plan: Vec<crate::read::PlanStep> = sqlx::query_as(&format!(
        "EXPLAIN QUERY PLAN
         SELECT * FROM (SELECT f.block_number FROM {} f
          WHERE f.chain_id = 1 AND f.registry = 'r' AND f.token_id = '0'
            AND f.block_number <= 500 AND (f.block_number < 500 OR f.log_index < 1)
          ORDER BY f.block_number DESC, f.log_index DESC LIMIT 21) AS page0",
        schema::feedback::NAME
    ))
    .fetch_all(pool)
    .await
    .unwrap();
    let details: Vec<&str> = plan.iter().map(|step| step.detail.as_str()).collect();
    assert!(
        details
            .iter()
            .any(|d| d.contains("INDEX feedback_agent_position")),
        "{details:?}"
    );
    assert!(
        !details.iter().any(|d| d.contains("TEMP B-TREE")),
        "a page must not sort the agent's whole list: {details:?}"
    );
}
