//! The API's reads on PostgreSQL stay reads by key whatever values the planner plans them for.
//! The API's read connections leave plans to PostgreSQL (`plan_cache_mode = auto`), which after
//! five runs of a statement may settle on a plan made for no values in particular. Here the
//! database makes every plan so (`force_generic_plan`), and a full-text search whose ranking
//! looks agents up by number in a common word's list reads a few of its postings, not the whole
//! list (counted by PostgreSQL's own statistics of index reads, flushed when the API's
//! connections close). And a reputation page of the agents with a tag reads that tag's agents
//! best first, about as many as the page, not every agent's score. Runs on the test PostgreSQL
//! server whichever backend the rest of the suite uses.

use crate::support;
use crate::support::postgres;

use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Agents holding the common word; every tenth also holds the rare one.
const AGENTS: i64 = 20_000;
/// The page asked for.
const FIRST: i64 = 5;

/// The weight agent number `doc` has for the common and the rare word (`None` without it).
/// The rare word's agents are heaviest for it the lower their number; every other one of them
/// is as heavy for the common word, the rest are light there, so the ranking meets those in
/// the rare word's list only and looks their common weight up by number.
fn weights(doc: i64) -> (i64, Option<i64>) {
    let heavy = 1_000 - doc / 10;
    match (doc % 10, doc % 20) {
        (0, 0) => (heavy, Some(heavy)),
        (0, _) => (doc % 97 + 1, Some(heavy)),
        _ => (doc % 97 + 1, None),
    }
}

/// The page worked out here: agents with both words by the sum of their weights, ties to the
/// lower number.
fn expected_page() -> Vec<String> {
    let mut both: Vec<(i64, i64)> = (1..=AGENTS)
        .filter_map(|doc| match weights(doc) {
            (common, Some(rare)) => Some((common + rare, doc)),
            _ => None,
        })
        .collect();
    both.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    both.iter()
        .take(FIRST as usize)
        .map(|(_, doc)| key(*doc))
        .collect()
}

fn key(doc: i64) -> String {
    format!("1:{doc:06}")
}

/// Agents `1:000001` to `count`, registered at their number's block.
pub(crate) fn agents_numbered(count: i64) -> String {
    format!(
        "INSERT INTO agents (agent_key, chain_id, source, owner, operators, active,
           registered_block, registered_at, last_event_block)
         SELECT '1:' || lpad(n::text, 6, '0'), 1, 'factory', '0x01', '[]', 1, n, n * 12, n
           FROM generate_series(1, {count}) AS n"
    )
}

/// Runs `statements` on `url`, analyzes the database and makes its every plan one for no
/// values in particular.
pub(crate) async fn run_planned_for_no_values(url: &str, statements: &[String]) {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let database = url.rsplit('/').next().unwrap();
    let settle = [
        "ANALYZE".to_string(),
        format!("ALTER DATABASE {database} SET plan_cache_mode = force_generic_plan"),
    ];
    for statement in statements.iter().chain(&settle) {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    pool.close().await;
}

/// Fills `url`'s agents, their search rows, numbers and both words' postings, and makes every plan of the
/// database one for no values in particular.
async fn filled(url: &str) {
    let statements = [
        agents_numbered(AGENTS),
        format!(
            "INSERT INTO agent_search (agent_key, name, description, skills, tags)
             SELECT '1:' || lpad(n::text, 6, '0'), 'agent', '', 'common',
                    CASE WHEN n % 10 = 0 THEN 'rare' ELSE '' END
               FROM generate_series(1, {AGENTS}) AS n"
        ),
        format!(
            "INSERT INTO search_agents (doc, agent_key)
             SELECT n, '1:' || lpad(n::text, 6, '0') FROM generate_series(1, {AGENTS}) AS n"
        ),
        format!(
            "INSERT INTO agent_postings (doc, term, weight)
             SELECT n, 'common', CASE WHEN n % 20 = 0 THEN 1000 - n / 10 ELSE n % 97 + 1 END
               FROM generate_series(1, {AGENTS}) AS n"
        ),
        format!(
            "INSERT INTO agent_postings (doc, term, weight)
             SELECT n, 'rare', 1000 - n / 10 FROM generate_series(10, {AGENTS}, 10) AS n"
        ),
        // Words of one agent each, as most words are: planned for no word in particular, a
        // word's list looks short.
        format!(
            "INSERT INTO agent_postings (doc, term, weight)
             SELECT n, 'word' || n, 1 FROM generate_series(1, {AGENTS}) AS n"
        ),
    ];
    run_planned_for_no_values(url, &statements).await;
}

/// A connection to `url` once no other connection to the database is left: every backend has
/// handed its statistics over (a backend does as it ends).
pub(crate) async fn alone_on(url: &str) -> sqlx::AnyPool {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let others: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if others == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the API's connections are still open"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pool
}

/// Index rows read and index scans made on each index of `table`, by index name, once no other
/// connection to the database is left.
pub(crate) async fn index_reads(url: &str, table: &str) -> Vec<(String, i64, i64)> {
    let pool = alone_on(url).await;
    let reads: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT CAST(indexrelname AS TEXT), idx_tup_read, idx_scan
           FROM pg_stat_user_indexes WHERE relname = $1 ORDER BY indexrelname",
    )
    .bind(table)
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    reads
}

/// The rows read and scans made on every index of `table` together.
pub(crate) async fn table_reads(url: &str, table: &str) -> (i64, i64) {
    index_reads(url, table)
        .await
        .iter()
        .fold((0, 0), |(rows, scans), (_, r, s)| (rows + r, scans + s))
}

/// The rows read from one index.
fn read_from(reads: &[(String, i64, i64)], index: &str) -> i64 {
    reads.iter().find(|(name, ..)| name == index).map_or_else(
        || panic!("no index {index} in {reads:?}"),
        |(_, rows, _)| *rows,
    )
}

/// The API over `store` at `url`, with rate limits no test reaches.
pub(crate) async fn served_without_limits(store: Store, url: &str) -> support::api::Served {
    let text = format!(
        "[database]\nurl = \"{url}\"\n\n[api]\nrequests_per_minute_per_client = 1000000\n\
         client_burst = 100000\n"
    );
    let config = Config::from_toml_and_env(&text, Path::new("test.toml"), Vec::new()).unwrap();
    support::api::serve(store, &config).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_looks_agents_up_by_number_under_a_plan_made_for_no_values() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    filled(&url).await;
    let served = served_without_limits(store, &url).await;
    let query = format!(
        r#"{{ agents(search: "common rare", first: {FIRST}) {{ edges {{ node {{ id }} }} }} }}"#
    );
    let body = support::api::post_json(
        &format!("{}/graphql", served.base),
        &json!({ "query": query }),
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    let ids: Vec<String> = body["data"]["agents"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| edge["node"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, expected_page(), "the page of the search");
    served.stop().await;

    let (rows, scans) = table_reads(&url, "agent_postings").await;
    assert!(scans > 0, "the statistics counted no read of the postings");
    // The whole common list is AGENTS rows; reading it once for the lookups is the failure.
    assert!(
        rows < AGENTS / 4,
        "the search read {rows} postings in {scans} index scans (the common word has {AGENTS})"
    );
}

/// Agents scored in the reputation-order test; every 25th holds the tag.
const SCORED: i64 = 20_000;

/// Agent `n`'s score: scattered, so the tag's best are spread through the score index.
fn score(n: i64) -> f64 {
    ((n * 7_919) % 20_011) as f64 / 100.0
}

/// `url` filled with [`SCORED`] scored agents, every 25th holding tag `picked` (written after
/// the scores, as a document's profile comes after its agent is scored), then rescored for
/// every 7th (the term rows must follow), with plans made for no values.
async fn scored(url: &str) {
    let statements = [
        agents_numbered(SCORED),
        format!(
            "INSERT INTO agent_reputation (agent_key, chain_id, as_of_block, as_of_timestamp,
               score, payment_score, payment_count, unique_payers, excluded_payments,
               feedback_count, evaluation)
             SELECT '1:' || lpad(n::text, 6, '0'), 1, 1, 12, ((n * 7919) % 20011) / 100.0,
                    0, 0, 0, 0, 0, '{{}}'
               FROM generate_series(1, {SCORED}) AS n"
        ),
        format!(
            "INSERT INTO agent_tags (agent_key, tag)
             SELECT '1:' || lpad(n::text, 6, '0'), 'picked'
               FROM generate_series(25, {SCORED}, 25) AS n"
        ),
        "UPDATE agent_reputation SET score = score + 1000
          WHERE CAST(substr(agent_key, 3) AS INTEGER) % 7 = 0"
            .to_string(),
        "SELECT pg_stat_reset()".to_string(),
    ];
    run_planned_for_no_values(url, &statements).await;
}

/// The tag's agents best first, ties to the higher key, as worked out here.
fn best_with_tag() -> Vec<String> {
    let mut picked: Vec<(f64, i64)> = (25..=SCORED)
        .step_by(25)
        .map(|n| (score(n) + if n % 7 == 0 { 1000.0 } else { 0.0 }, n))
        .collect();
    picked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    picked.iter().map(|(_, n)| key(*n)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reputation_page_of_a_tag_reads_that_tags_best_agents_not_every_score() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    scored(&url).await;
    let served = served_without_limits(store, &url).await;
    let mut pages = Vec::new();
    let mut after = serde_json::Value::Null;
    for _ in 0..3 {
        let query = "query($after: String) { agents(filter: { tags: [\"Picked\"] }, \
            orderBy: REPUTATION, first: 20, after: $after) \
            { edges { node { id } } pageInfo { endCursor } } }";
        let body = support::api::post_json(
            &format!("{}/graphql", served.base),
            &json!({ "query": query, "variables": { "after": after } }),
        )
        .await;
        assert!(body["errors"].is_null(), "{body}");
        let agents = &body["data"]["agents"];
        pages.extend(
            agents["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|edge| edge["node"]["id"].as_str().unwrap().to_string()),
        );
        after = agents["pageInfo"]["endCursor"].clone();
    }
    served.stop().await;
    assert_eq!(
        pages,
        best_with_tag()[..60],
        "three pages of the tag's best"
    );

    let terms = index_reads(&url, "agent_terms").await;
    let walked = read_from(&terms, "agent_terms_score");
    let scores = index_reads(&url, "agent_reputation").await;
    // Three pages of 20 from a list of 800: a walk of the score index would read thousands.
    assert!(
        walked < 200,
        "three pages read {walked} rows of the tag's list: {terms:?}"
    );
    // Probed by key (score and agent) at most, never walked.
    assert!(
        read_from(&scores, "agent_reputation_score") < 200,
        "the pages walked every agent's score: {scores:?}"
    );
}
