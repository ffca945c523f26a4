//! Lookups of single agents by id on PostgreSQL, many at once: each answers its own agent,
//! or null for an id nobody has, an id asked twice alike; lookups waiting together share
//! statements (`agentindex_api_agent_lookup_reads_total` in `/metrics`); an id the server
//! refuses fails only its own lookup; and a read that fails fails each lookup it held instead
//! of leaving it waiting. Runs on the test PostgreSQL server whichever backend the rest of the
//! suite uses.

use crate::postgres_plans::agents_numbered;
use crate::support;
use crate::support::postgres;

use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use serde_json::{Value, json};
use sqlx::{AnyConnection, Connection};
use std::path::Path;
use std::time::{Duration, Instant};

/// Agents in the database, `1:000001` to `1:000080` registered at blocks 1 to 80.
const AGENTS: i64 = 80;
/// The API's lookup workers, and the most lookups one of their statements reads.
const WORKERS: usize = 4;
const MOST_IN_ONE_READ: usize = 32;

/// Ids asked in one query with the block each was registered at: every agent, the first ten
/// each asked twice in a row, then ten nobody has.
fn asked() -> Vec<(String, Option<i64>)> {
    let known = (1..=AGENTS).flat_map(|n| {
        let times = if n <= 10 { 2 } else { 1 };
        std::iter::repeat_n((key(n), Some(n)), times)
    });
    let unknown = (1..=10).map(|n| (key(500_000 + n), None));
    known.chain(unknown).collect()
}

fn key(n: i64) -> String {
    format!("1:{n:06}")
}

/// One query asking for every agent of `ids` under its own alias: GraphQL resolves a query's
/// fields together, so the lookups all wait at once.
fn aliased(ids: &[(String, Option<i64>)]) -> String {
    let fields: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(i, (id, _))| {
            // A JSON string is a GraphQL string, escapes included.
            let id = serde_json::to_string(id).unwrap();
            format!("a{i}: agent(id: {id}) {{ id registeredBlock }}")
        })
        .collect();
    format!("{{ {} }}", fields.join(" "))
}

/// Checks each alias of `body` answered the agent of its id (or null).
fn assert_answers(body: &Value, ids: &[(String, Option<i64>)]) {
    for (i, (id, block)) in ids.iter().enumerate() {
        let expected = match block {
            Some(block) => json!({ "id": id, "registeredBlock": block }),
            None => Value::Null,
        };
        assert_eq!(
            body["data"][format!("a{i}")],
            expected,
            "the answer for {id}"
        );
    }
}

/// The API over `store` at `url`, with room for a query of [`asked`]'s aliases.
async fn served(store: Store, url: &str) -> support::api::Served {
    let text = format!("[database]\nurl = \"{url}\"\n\n[api.query_limits]\nmax_aliases = 200\n");
    let config = Config::from_toml_and_env(&text, Path::new("test.toml"), Vec::new()).unwrap();
    support::api::serve(store, &config).await
}

/// The value of the counter `name` in `/metrics` at `base`.
async fn counter(base: &str, name: &str) -> f64 {
    let text = support::api::metrics_text(base).await;
    support::api::metric(&text, name).unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
}

async fn execute(sql: &str, url: &str) {
    let mut conn = AnyConnection::connect(url).await.unwrap();
    sqlx::query(sql).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}

/// Waits until `count` lookup statements wait for a lock.
async fn until_lookups_wait(admin: &mut AnyConnection, count: i64) {
    let by = Instant::now() + Duration::from_secs(30);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'
                AND query LIKE '%agent_key IN%'",
        )
        .fetch_one(&mut *admin)
        .await
        .unwrap();
        if waiting >= count {
            return;
        }
        assert!(
            Instant::now() < by,
            "{waiting} lookup statements wait, not {count}"
        );
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_waiting_together_share_statements_and_each_gets_its_own_agent() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    execute(&agents_numbered(AGENTS), &url).await;
    let served = served(store, &url).await;
    let endpoint = format!("{}/graphql", served.base);
    let ids = asked();

    // The table held, so each worker's first statement waits and every other lookup queues
    // behind them; let go once all the workers wait.
    let mut holder = AnyConnection::connect(&url).await.unwrap();
    let mut held = holder.begin().await.unwrap();
    sqlx::query("LOCK TABLE agents IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *held)
        .await
        .unwrap();
    let query = json!({ "query": aliased(&ids) });
    let asking = {
        let endpoint = endpoint.clone();
        tokio::spawn(async move { support::api::post_json(&endpoint, &query).await })
    };
    let mut admin = AnyConnection::connect(&url).await.unwrap();
    until_lookups_wait(&mut admin, WORKERS as i64).await;
    held.rollback().await.unwrap();

    let body = asking.await.unwrap();
    assert!(body["errors"].is_null(), "{body}");
    assert_answers(&body, &ids);
    let reads = counter(&served.base, "agentindex_api_agent_lookup_reads_total").await;
    let most = WORKERS + ids.len().div_ceil(MOST_IN_ONE_READ);
    assert!(
        (1.0..=most as f64).contains(&reads),
        "{} lookups waiting together were read in {reads} statements, not at most {most}",
        ids.len()
    );

    // An id PostgreSQL cannot take as text (a NUL character) among others: it fails alone.
    let mut poisoned: Vec<(String, Option<i64>)> = (1..=20).map(|n| (key(n), Some(n))).collect();
    poisoned.insert(10, ("1:\u{0}".to_string(), None));
    let body = support::api::post_json(&endpoint, &json!({ "query": aliased(&poisoned) })).await;
    let errors = body["errors"].as_array().expect("the refused id failed");
    assert_eq!(errors.len(), 1, "only the refused id failed: {body}");
    assert_eq!(errors[0]["path"], json!(["a10"]), "{body}");
    assert_answers(&body, &poisoned);

    // A read that fails (the table gone from under the API) fails every lookup it held.
    execute("ALTER TABLE agents RENAME TO agents_moved", &url).await;
    let body = support::api::post_json(&endpoint, &json!({ "query": aliased(&ids[..20]) })).await;
    let errors = body["errors"].as_array().expect("the lookups failed");
    assert_eq!(errors.len(), 20, "each lookup says it failed: {body}");
    for error in errors {
        assert_eq!(
            error["extensions"]["code"], "INTERNAL_SERVER_ERROR",
            "a failed read is the server's, told without its SQL: {error}"
        );
    }
    served.stop().await;
}
