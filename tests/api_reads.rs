//! What one request may make the database do, against a served API on the run's backend
//! (`AGENTINDEX_TEST_BACKEND`): an agent sent thousands of spam feedback is paged one page at a
//! time, on `/graphql` and under each agent on the subgraph, a request over its row budget is
//! refused instead of read, page sizes multiply into the query's complexity, list arguments
//! past their cap are refused by name on `/graphql` and the subgraph, and a statement past the
//! API's time limit is stopped by the database (PostgreSQL and SQLite alike) with the pool
//! reading on at once.

use crate::support;

use agentindex_indexer::config::Config;
use agentindex_indexer::store::{OpenOptions, Store};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// Spam feedback sent to the agent.
const SPAM: i64 = 3_000;

/// The spammed agent's identity registry and key.
const REGISTRY: &str = "0x000000000000000000000000000000000000000a";
const AGENT: &str = "1:0x000000000000000000000000000000000000000a:7";

/// A database holding one ERC-8004 agent with [`SPAM`] feedback, written straight into its
/// tables (the API reads what is there, however it came).
async fn spammed(db: &Path) -> (Store, String) {
    let url = support::database_url(db);
    let store = Store::open(&url).await.unwrap();
    let writer = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query(&format!(
        "INSERT INTO agents (agent_key, chain_id, source, registry, token_id, owner, operators,
            active, registered_block, registered_at, last_event_block)
         VALUES ('{AGENT}', 1, 'erc8004', '{REGISTRY}', '7', '0xowner', '[]', 1, 1, 12, 1)"
    ))
    .execute(&writer)
    .await
    .unwrap();
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
         INSERT INTO feedback (chain_id, registry, token_id, client, feedback_index, value,
            value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
            block_number, log_index, tx_hash, timestamp)
         SELECT 1, '{REGISTRY}', '7', '0xspammer', i + 1, '0', 0, 'spam', '', '', '', '0x',
                'v2', 10 + i / 2, i % 2, '0x', 24
           FROM n",
        last = SPAM - 1
    ))
    .execute(&writer)
    .await
    .unwrap();
    writer.close().await;
    (store, url)
}

/// A config serving `url` with `reads` as its `[api.reads]` table.
fn config(url: &str, reads: &str) -> Config {
    let text = format!("[database]\nurl = \"{url}\"\n\n[api.reads]\n{reads}\n");
    Config::from_toml_and_env(&text, Path::new("test.toml"), Vec::new()).unwrap()
}

async fn post(endpoint: &str, query: &str) -> Value {
    support::api::post_json(endpoint, &json!({ "query": query })).await
}

fn first_error(body: &Value) -> String {
    body["errors"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("an error in {body}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feedback_spam_costs_a_page_and_a_request_over_its_row_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = spammed(&dir.path().join("spam.db")).await;
    // Ten rows a request: the agent (1) and a page of one feedback (2) fit; the spam does not.
    let served = support::api::serve(store, &config(&url, "max_rows_per_request = 10")).await;
    let endpoint = format!("{}/graphql", served.base);

    let body = post(
        &endpoint,
        &format!(
            "{{ agent(id: \"{AGENT}\") {{ feedback(first: 1) {{
                totalCount pageInfo {{ hasNextPage endCursor }} nodes {{ index blockNumber logIndex }}
            }} }} }}"
        ),
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    let page = &body["data"]["agent"]["feedback"];
    assert_eq!(page["totalCount"], SPAM, "counted, not loaded");
    assert_eq!(page["pageInfo"]["hasNextPage"], true);
    assert_eq!(
        page["nodes"],
        json!([{ "index": SPAM, "blockNumber": 10 + (SPAM - 1) / 2, "logIndex": 1 }]),
        "the newest"
    );
    let cursor = page["pageInfo"]["endCursor"].as_str().unwrap().to_string();
    let body = post(
        &endpoint,
        &format!(
            "{{ agent(id: \"{AGENT}\") {{ feedback(first: 2, after: \"{cursor}\") {{
                nodes {{ index }} }} }} }}"
        ),
    )
    .await;
    assert_eq!(
        body["data"]["agent"]["feedback"]["nodes"],
        json!([{ "index": SPAM - 1 }, { "index": SPAM - 2 }]),
        "{body}"
    );

    // Two pages of five (six rows each read) pass ten rows: refused, naming the field.
    let body = post(
        &endpoint,
        &format!(
            "{{ agent(id: \"{AGENT}\") {{ a: feedback(first: 5) {{ nodes {{ index }} }}
                b: feedback(first: 5) {{ nodes {{ index }} }} }} }}"
        ),
    )
    .await;
    assert_eq!(
        first_error(&body),
        "this request would read more than 10 rows (at `feedback`); ask for fewer items or \
         smaller pages"
    );

    // The subgraph's rows count against the same budget.
    let body = post(
        &format!("{}/subgraphs/name/agent0", served.base),
        "{ feedbacks(first: 11) { id } }",
    )
    .await;
    assert!(
        first_error(&body).starts_with("this request would read more than 10 rows"),
        "{body}"
    );
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_sizes_multiply_into_complexity_and_long_lists_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = spammed(&dir.path().join("lists.db")).await;
    let served = support::api::serve(store, &config(&url, "max_list_argument = 100")).await;
    let endpoint = format!("{}/graphql", served.base);

    // A hundred agents with a hundred feedback each: ten thousand items' fields.
    let body = post(
        &endpoint,
        "{ agents(first: 100) { edges { node { feedback(first: 100) { nodes { client value } } } } } }",
    )
    .await;
    assert!(first_error(&body).contains("too complex"), "{body}");
    assert!(body["data"].is_null(), "refused before anything ran");
    // The same shape with small pages passes.
    let body = post(
        &endpoint,
        "{ agents(first: 10) { edges { node { feedback(first: 10) { nodes { client value } } } } } }",
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");

    let chains: Vec<String> = (0..101).map(|n| n.to_string()).collect();
    let body = post(
        &endpoint,
        &format!(
            "{{ agents(filter: {{ chainIds: [{}] }}) {{ totalCount }} }}",
            chains.join(",")
        ),
    )
    .await;
    assert_eq!(
        first_error(&body),
        "`filter.chainIds` has 101 items; at most 100 are accepted"
    );
    let body = post(
        &endpoint,
        &format!(
            "{{ skillFacets(chainIds: [{}]) {{ value }} }}",
            chains.join(",")
        ),
    )
    .await;
    assert_eq!(
        first_error(&body),
        "`chainIds` has 101 items; at most 100 are accepted"
    );
    let owners: Vec<String> = (0..101).map(|n| format!("\"0x{n:040x}\"")).collect();
    let body = post(
        &format!("{}/subgraphs/name/agent0", served.base),
        &format!(
            "{{ agents(where: {{ owner_in: [{}] }}) {{ id }} }}",
            owners.join(",")
        ),
    )
    .await;
    assert_eq!(
        first_error(&body),
        "Filter `owner_in` of `Agent_filter` has 101 items; at most 100 are accepted"
    );
    served.stop().await;
}

/// What PostgreSQL's statistics say was read of `feedback`: rows read by sequential scans,
/// index entries read, and scans of either kind.
async fn feedback_reads(stats: &sqlx::AnyPool) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT CAST(t.seq_tup_read AS BIGINT),
                CAST(coalesce((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i
                                WHERE i.relid = t.relid), 0) AS BIGINT),
                CAST(t.seq_scan + coalesce(t.idx_scan, 0) AS BIGINT)
           FROM pg_stat_user_tables t WHERE t.relname = 'feedback'",
    )
    .fetch_one(stats)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_subgraph_reads_a_page_of_a_spammed_agents_feedback_not_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = spammed(&dir.path().join("subgraph.db")).await;
    let served = support::api::serve(store, &config(&url, "")).await;
    let endpoint = format!("{}/subgraphs/name/agent0", served.base);
    let stats = sqlx::AnyPool::connect(&url).await.unwrap();
    let postgres = support::postgres::selected();
    let before = if postgres {
        feedback_reads(&stats).await
    } else {
        (0, 0, 0)
    };

    // By id, the default: as text, so index 10 follows index 1.
    let body = post(
        &endpoint,
        "{ agents { id feedback(first: 1, skip: 1) { id } } }",
    )
    .await;
    assert_eq!(
        body["data"]["agents"],
        json!([{ "id": "1:7", "feedback": [{ "id": "1:7:0xspammer:10" }] }]),
        "{body}"
    );
    // SQLite's plan is checked where the statement is built (`subgraph/derived_tests.rs`);
    // PostgreSQL's statistics tell what the statement read, once the backend that ran it has
    // reported them (within a second of going idle).
    if postgres {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut after = feedback_reads(&stats).await;
        while after.2 == before.2 {
            assert!(
                Instant::now() < deadline,
                "PostgreSQL never counted the read"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
            after = feedback_reads(&stats).await;
        }
        let (scanned, entries) = (after.0 - before.0, after.1 - before.1);
        assert_eq!(scanned, 0, "no sequential scan of feedback");
        assert!(
            entries <= 10,
            "a page of two index entries, not the agent's {SPAM} feedback: {entries} read"
        );
    }

    // Every order reads the same pages as the root list filtered by the agent; createdAt is
    // the same for all the spam, so its ties are broken by id.
    for (arguments, filter, expected) in [
        ("first: 3, skip: 2, orderDirection: desc,", "", 3),
        ("first: 4, orderBy: createdAt, orderDirection: desc,", "", 4),
        ("first: 4, skip: 1000, orderBy: createdAt,", "", 4),
        (
            "first: 2, orderBy: feedbackIndex, orderDirection: desc,",
            "",
            2,
        ),
        ("first: 2, orderBy: value,", "tag1: \"spam\"", 2),
        ("first: 5, skip: 2998,", "", 2),
    ] {
        let nested = post(
            &endpoint,
            &format!(
                "{{ agents {{ feedback({arguments} where: {{ {filter} }}) {{ id createdAt }} }} }}"
            ),
        )
        .await;
        let root = post(
            &endpoint,
            &format!(
                "{{ feedbacks({arguments} where: {{ agent: \"1:7\" {filter} }}) {{ id createdAt }} }}"
            ),
        )
        .await;
        let page = &nested["data"]["agents"][0]["feedback"];
        assert_eq!(page, &root["data"]["feedbacks"], "{arguments} {filter}");
        assert_eq!(page.as_array().map(Vec::len), Some(expected), "{nested}");
    }
    stats.close().await;
    served.stop().await;
}

/// Counts to a billion: minutes of one core, unless the database stops it.
const HEAVY: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                      WHERE i < 1000000000) SELECT count(*) FROM n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stops_a_statement_past_the_time_limit_and_the_pool_reads_on_at_once() {
    let url = support::postgres::server().fresh_database();
    let limit = Duration::from_secs(1);
    let store = Store::open_with(
        &url,
        OpenOptions {
            read_statement_timeout: Some(limit),
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap();
    // One connection of the API's pool, so what follows runs on the backend that counted.
    let mut conn = store.reader().acquire().await.unwrap();
    let started = Instant::now();
    // A safety bound only: a statement that is not stopped would run for minutes.
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        sqlx::query_scalar::<_, i64>(HEAVY).fetch_one(&mut *conn),
    )
    .await
    .expect("the database stops the statement; it does not run on");
    let error = outcome.expect_err("stopped, not finished");
    assert!(
        error.to_string().contains("statement timeout"),
        "cancelled by statement_timeout: {error}"
    );
    assert!(started.elapsed() >= limit);
    // The same connection answers the next statement at once: a backend runs one statement at
    // a time, so the count is gone from the server, not queued ahead.
    let one: i64 = tokio::time::timeout(
        Duration::from_secs(5),
        sqlx::query_scalar("SELECT 1").fetch_one(&mut *conn),
    )
    .await
    .expect("the connection is free")
    .unwrap();
    assert_eq!(one, 1);
    drop(conn);
    // The indexer's own store sets no limit.
    let unlimited = Store::open(&url).await.unwrap();
    let setting: String = sqlx::query_scalar("SHOW statement_timeout")
        .fetch_one(unlimited.reader())
        .await
        .unwrap();
    assert_eq!(setting, "0");
    unlimited.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_stops_a_statement_its_caller_gave_up_on_at_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("index.db").display());
    let limit = Duration::from_secs(1);
    let store = Store::open_with(
        &url,
        OpenOptions {
            read_statement_timeout: Some(limit),
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap();
    // One connection of the API's pool: a statement runs on it until it ends or is stopped.
    let mut conn = store.reader().acquire().await.unwrap();
    let started = Instant::now();
    // The caller gives up, as the API does past its query time limit.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(300),
        sqlx::query_scalar::<_, i64>(HEAVY).fetch_one(&mut *conn),
    )
    .await;
    assert!(gave_up.is_err(), "the count outlasts its caller");
    // The same connection answers once the count has reached the limit and stopped, not
    // minutes later when it would have finished.
    let one: i64 = tokio::time::timeout(
        Duration::from_secs(5),
        sqlx::query_scalar("SELECT 1").fetch_one(&mut *conn),
    )
    .await
    .expect("the abandoned count was stopped")
    .unwrap();
    assert_eq!(one, 1);
    assert!(started.elapsed() >= limit, "{:?}", started.elapsed());
    // Awaited, the count ends with the database's error.
    let started = Instant::now();
    // A safety bound only: a statement that is not stopped would run for minutes.
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        sqlx::query_scalar::<_, i64>(HEAVY).fetch_one(&mut *conn),
    )
    .await
    .expect("the database stops the statement; it does not run on");
    let error = outcome.expect_err("stopped, not finished");
    assert!(
        error.to_string().contains("interrupted"),
        "interrupted by SQLite: {error}"
    );
    assert!(started.elapsed() >= limit);
    drop(conn);
    // The indexer's own store sets no limit: its read URL carries none.
    let unlimited = Store::open(&url).await.unwrap();
    let read_url = &unlimited.reader().connect_options().database_url;
    assert!(!read_url.as_str().contains("statement_limit"), "{read_url}");
    let limited_url = &store.reader().connect_options().database_url;
    assert!(
        limited_url.as_str().contains("statement_limit_ms=1000"),
        "{limited_url}"
    );
    unlimited.close().await;
    store.close().await;
}
