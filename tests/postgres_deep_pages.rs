//! Pages deep in reputation and newest order on PostgreSQL: every agent once, in score (or
//! registration block) order and then by id, both descending; and each page after a cursor is
//! one range of the order's index starting at the cursor, so forty pages read a few times forty
//! pages' worth of it (counted by PostgreSQL's own statistics of index reads), not every entry
//! above each cursor as the pages go deeper. Runs on the test PostgreSQL server whichever
//! backend the rest of the suite uses.

use crate::postgres_plans::{
    agents_numbered, index_reads, run_planned_for_no_values, served_without_limits,
};
use crate::support;
use crate::support::postgres;

use agentindex_indexer::store::Store;
use serde_json::json;

/// Agents, in three scores (most pages fall inside a tie) and a block per hundred.
const AGENTS: i64 = 12_000;
/// Pages read, and the agents on each.
const PAGES: usize = 40;
const FIRST: usize = 100;

/// Agent `n`'s score.
fn score(n: i64) -> f64 {
    (n % 3) as f64 * 10.0
}

fn key(n: i64) -> String {
    format!("1:{n:06}")
}

/// The first `PAGES` pages of `orderBy` through the API at `base`, following cursors.
async fn pages(base: &str, order: &str) -> Vec<String> {
    let query = format!(
        "query($after: String) {{ agents(orderBy: {order}, first: {FIRST}, after: $after) \
         {{ edges {{ node {{ id }} }} pageInfo {{ hasNextPage endCursor }} }} }}"
    );
    let endpoint = format!("{base}/graphql");
    support::api::agent_ids_paged(&endpoint, &query, json!({}), PAGES, order).await
}

/// Rows read from `index` of `table` since the statistics were reset.
async fn read_from(url: &str, table: &str, index: &str) -> i64 {
    let reads = index_reads(url, table).await;
    reads
        .iter()
        .find(|(name, ..)| name == index)
        .map(|(_, rows, _)| *rows)
        .unwrap_or_else(|| panic!("no index {index} in {reads:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_deep_in_an_order_read_about_a_page_of_its_index_each() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    let statements = [
        // Registered a hundred to a block, so the newest order has ties too.
        agents_numbered(AGENTS),
        "UPDATE agents SET registered_block = registered_block / 100".to_string(),
        format!(
            "INSERT INTO agent_reputation (agent_key, chain_id, as_of_block, as_of_timestamp,
               score, payment_score, payment_count, unique_payers, excluded_payments,
               feedback_count, evaluation)
             SELECT '1:' || lpad(n::text, 6, '0'), 1, 1, 12, (n % 3) * 10.0, 0, 0, 0, 0, 0, '{{}}'
               FROM generate_series(1, {AGENTS}) AS n"
        ),
        "SELECT pg_stat_reset()".to_string(),
    ];
    run_planned_for_no_values(&url, &statements).await;
    let served = served_without_limits(store, &url).await;
    let by_score = pages(&served.base, "REPUTATION").await;
    let by_block = pages(&served.base, "NEWEST").await;
    served.stop().await;

    let mut expected: Vec<(f64, i64, i64)> = (1..=AGENTS).map(|n| (score(n), n / 100, n)).collect();
    expected.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.2.cmp(&a.2)));
    let expected_by_score: Vec<String> = expected.iter().map(|(.., n)| key(*n)).collect();
    assert_eq!(
        by_score,
        expected_by_score[..PAGES * FIRST],
        "reputation order"
    );
    expected.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
    let expected_by_block: Vec<String> = expected.iter().map(|(.., n)| key(*n)).collect();
    assert_eq!(by_block, expected_by_block[..PAGES * FIRST], "newest order");

    // Forty pages of a hundred, each read from its cursor; a walk of the order's index may read
    // up to four pages' worth for one. Read from the top of the index each time, they would
    // be over 82,000 rows.
    let bound = 5 * (PAGES * FIRST) as i64;
    for (table, index) in [
        ("agent_reputation", "agent_reputation_score"),
        ("agents", "agents_newest"),
    ] {
        let rows = read_from(&url, table, index).await;
        assert!(
            rows > 0 && rows < bound,
            "forty pages read {rows} rows of {index} (at most {bound})"
        );
    }
}
