//! Filtered agent lists in reputation and newest order, paged to the end through `/graphql` on
//! the run's backend (`AGENTINDEX_TEST_BACKEND`), against the order worked out here from the
//! agents written. The terms are common enough that a page walks the order's index (SQLite
//! through an index hint, PostgreSQL through a subquery its planner keeps in order), and the
//! other filters rare enough that some walks come up short and the matches are collected.

use crate::support;

use agentindex_indexer::config::Config;
use agentindex_indexer::store::Store;
use serde_json::{Value, json};
use std::path::Path;

/// Agents written; two in three have skill `common`, so its lists are walked.
const AGENTS: usize = 3_000;

/// One agent as written, and as the expected orders read it.
struct Written {
    key: String,
    block: i64,
    score: f64,
    active: bool,
    x402: bool,
    common: bool,
    half: bool,
}

fn written(i: usize) -> Written {
    Written {
        key: format!("1:{i:05}"),
        // Ten agents a block: the newest order has ties to break by key.
        block: (i / 10) as i64,
        // 101 distinct scores: the reputation order has ties too.
        score: ((i * 37) % 101) as f64,
        active: !i.is_multiple_of(11),
        x402: i.is_multiple_of(50),
        common: !i.is_multiple_of(3),
        half: i.is_multiple_of(2),
    }
}

/// A database holding [`AGENTS`] agents with scores, profiles and skills, written straight into
/// their tables.
async fn agents_written(db: &Path) -> (Store, String) {
    let url = support::database_url(db);
    let store = Store::open(&url).await.unwrap();
    let writer = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows: Vec<Written> = (0..AGENTS).map(written).collect();
    for chunk in rows.chunks(500) {
        let values =
            |row: &dyn Fn(&Written) -> String| chunk.iter().map(row).collect::<Vec<_>>().join(", ");
        let statements = [
            format!(
                "INSERT INTO agents (agent_key, chain_id, source, owner, operators, active,
                   registered_block, registered_at, last_event_block) VALUES {}",
                values(&|w| format!(
                    "('{}', 1, 'factory', '0x01', '[]', {}, {}, {}, {})",
                    w.key,
                    i64::from(w.active),
                    w.block,
                    w.block * 12,
                    w.block
                ))
            ),
            format!(
                "INSERT INTO agent_reputation (agent_key, chain_id, as_of_block, as_of_timestamp,
                   score, payment_score, payment_count, unique_payers, excluded_payments,
                   feedback_count, evaluation) VALUES {}",
                values(&|w| format!(
                    "('{}', 1, 1, 12, {:.1}, 0, 0, 0, 0, 0, '{{}}')",
                    w.key, w.score
                ))
            ),
            format!(
                "INSERT INTO agent_profiles (agent_key, name, x402, input_modes, output_modes,
                   payments, chain_block) VALUES {}",
                values(&|w| format!(
                    "('{}', 'Agent {}', {}, '[]', '[]', '[]', 1)",
                    w.key,
                    w.key,
                    i64::from(w.x402)
                ))
            ),
            format!(
                "INSERT INTO agent_skills (agent_key, skill_id, name, tags) VALUES {}",
                values(&|w| {
                    let skill = if w.common { "common" } else { "other" };
                    let tags = if w.half { "[\"half\"]" } else { "[]" };
                    format!("('{}', '{skill}', '{skill}', '{tags}')", w.key)
                })
            ),
        ];
        for statement in statements {
            sqlx::query(&statement).execute(&writer).await.unwrap();
        }
    }
    writer.close().await;
    (store, url)
}

/// A config serving `url` to a client that pages through thousands of agents a few at a time.
fn config(url: &str) -> Config {
    let text = format!(
        "[database]\nurl = \"{url}\"\n\n[api]\nrequests_per_minute_per_client = 1000000\n\
         client_burst = 100000\n"
    );
    Config::from_toml_and_env(&text, Path::new("test.toml"), Vec::new()).unwrap()
}

/// Every agent id of `filter` in `order`, `first` at a time, following the cursors.
async fn page_through(endpoint: &str, filter: &Value, order: &str, first: i64) -> Vec<String> {
    const LIST: &str =
        "query($filter: AgentFilter, $orderBy: AgentOrder, $first: Int, $after: String) {
        agents(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
            edges { node { id } } pageInfo { hasNextPage endCursor } } }";
    let variables = json!({ "filter": filter, "orderBy": order, "first": first });
    let what = format!("{filter} in {order} order");
    support::api::agent_ids_paged(endpoint, LIST, variables, usize::MAX, &what).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_lists_walked_or_collected_page_in_the_order_of_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = agents_written(&dir.path().join("walks.db")).await;
    let served = support::api::serve(store, &config(&url)).await;
    let endpoint = format!("{}/graphql", served.base);
    type Keep = fn(&Written) -> bool;
    let cases: [(Value, Keep); 5] = [
        (json!({ "skill": "Common" }), |w| w.common),
        (json!({ "skill": "common", "x402": true }), |w| {
            w.common && w.x402
        }),
        (json!({ "skill": "common", "minReputation": 60 }), |w| {
            w.common && w.score >= 60.0
        }),
        (
            json!({ "skill": "common", "tags": ["half"], "active": true }),
            |w| w.common && w.half && w.active,
        ),
        (
            json!({ "tags": ["half"], "x402": false, "minReputation": 99 }),
            |w| w.half && !w.x402 && w.score >= 99.0,
        ),
    ];
    for (filter, keep) in cases {
        let mut expected: Vec<Written> = (0..AGENTS).map(written).filter(keep).collect();
        assert!(!expected.is_empty(), "{filter} matches agents");
        expected.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| b.key.cmp(&a.key)));
        let by_reputation: Vec<String> = expected.iter().map(|w| w.key.clone()).collect();
        expected.sort_by(|a, b| b.block.cmp(&a.block).then_with(|| b.key.cmp(&a.key)));
        let newest: Vec<String> = expected.iter().map(|w| w.key.clone()).collect();
        for first in [7, 100] {
            assert_eq!(
                page_through(&endpoint, &filter, "REPUTATION", first).await,
                by_reputation,
                "{filter} in reputation order, {first} at a time"
            );
            assert_eq!(
                page_through(&endpoint, &filter, "NEWEST", first).await,
                newest,
                "{filter} newest first, {first} at a time"
            );
        }
    }
    served.stop().await;
}
