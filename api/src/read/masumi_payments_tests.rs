//! The escrow reads on a real SQLite store: agents past one statement's worth each get their
//! own newest escrows in order and their own outcome counts, and a page of one agent's escrows
//! is read along its index, never by sorting all of them.

use super::*;
use agentindex_indexer::store::Store;

/// 250 agents (three statements' worth) with escrows locked at blocks 1 to 5, the newest two
/// still open, the others released, refunded and disputed.
async fn store() -> (tempfile::TempDir, Store, AnyPool) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("escrows.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = AnyPool::connect(&url).await.unwrap();
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1249)
         INSERT INTO {} (escrow_key, chain_id, agent_key, contract_version, buyer, seller, unit,
            amount, state, outcome, locked_block, locked_at, lock_tx, settled_block, settled_at)
         SELECT 'e' || i, 7, 'agent' || (i / 5), 2, 'b', 's', 'lovelace', '1000000',
                CASE WHEN i % 5 >= 3 THEN 'FundsLocked' END,
                CASE i % 5 WHEN 0 THEN 'released' WHEN 1 THEN 'refunded' WHEN 2 THEN 'disputed' END,
                1 + i % 5, 100 + i % 5, 'tx' || i, NULL, NULL
           FROM n",
        masumi_payments::NAME
    ))
    .execute(&pool)
    .await
    .unwrap();
    (dir, store, pool)
}

#[tokio::test]
async fn each_agent_gets_its_own_newest_escrows_and_outcomes() {
    let (_dir, store, pool) = store().await;
    let agents: Vec<String> = (0..250).map(|i| format!("agent{i}")).collect();
    let pages = newest(&pool, &agents, 2).await.unwrap();
    assert_eq!(pages.len(), 250);
    for (i, agent) in agents.iter().enumerate() {
        let blocks: Vec<(i64, &str)> = pages[agent]
            .iter()
            .map(|row| (row.locked_block, row.escrow_key.as_str()))
            .collect();
        let (fifth, fourth) = (format!("e{}", i * 5 + 4), format!("e{}", i * 5 + 3));
        assert_eq!(
            blocks,
            [(5, fifth.as_str()), (4, fourth.as_str())],
            "{agent}"
        );
    }
    let counts = outcomes(&pool, &agents).await.unwrap();
    assert_eq!(counts.len(), 250);
    let mut last = counts["agent249"].clone();
    last.sort();
    assert_eq!(
        last,
        [
            (None, 2),
            (Some("disputed".to_string()), 1),
            (Some("refunded".to_string()), 1),
            (Some("released".to_string()), 1),
        ]
    );
    assert!(
        newest(&pool, &["nobody".to_string()], 5)
            .await
            .unwrap()
            .is_empty()
    );
    pool.close().await;
    store.close().await;
}

#[tokio::test]
async fn a_page_of_escrows_reads_the_agents_index_without_sorting() {
    let (_dir, store, pool) = store().await;
    let plan: Vec<String> = sqlx::query_as::<_, crate::read::PlanStep>(&format!(
        "EXPLAIN QUERY PLAN SELECT escrow_key FROM {} WHERE agent_key = 'agent3'
         ORDER BY locked_block DESC, escrow_key DESC LIMIT 2",
        masumi_payments::NAME
    ))
    .fetch_all(store.reader())
    .await
    .unwrap()
    .into_iter()
    .map(|step| step.detail)
    .collect();
    let text = plan.join(" | ");
    assert!(text.contains("masumi_payments_agent"), "{text}");
    assert!(!text.contains("TEMP B-TREE"), "{text}");
    pool.close().await;
    store.close().await;
}
