//! The agent0 SDK's searches on the subgraph endpoint over PostgreSQL read about what they find,
//! not every agent one of their filters matches: a search by name with a skill no agent holds
//! ends at the skill, and a name search asks the trigram index for the rare part of the name
//! ("4567" of "agent 4567" when most names hold "agent"), then checks the whole of it. Counted
//! by PostgreSQL's own statistics (rows read from a table, pages read from an index) under
//! plans made for no values in particular. Runs on the test PostgreSQL server whichever
//! backend the rest of the suite uses.

use crate::postgres_plans::{
    alone_on, run_planned_for_no_values, served_without_limits, table_reads,
};
use crate::support;
use crate::support::postgres;

use agentindex_indexer::store::Store;
use serde_json::json;

/// ERC-8004 agents in these tests: agent `n` is named `Bot {n}` for every 50th, `Agent {n}`
/// otherwise, and holds `skill{n % SKILLS}`.
const NAMED: i64 = 100_000;
/// Distinct skills among them.
const SKILLS: i64 = 400;

/// Agent `n`'s name.
fn name(n: i64) -> String {
    if n % 50 == 0 {
        format!("Bot {n}")
    } else {
        format!("Agent {n}")
    }
}

/// The store of `url` filled with [`NAMED`] registered agents with registration files,
/// searchable names and a skill each, its trigram index's pending entries merged (`VACUUM`),
/// with plans made for no values and the statistics reset.
async fn named(url: &str) -> Store {
    Store::open(url).await.unwrap().close().await;
    let key = "'1:0x00000000000000000000000000000000000000aa:' || n";
    let name = "CASE WHEN n % 50 = 0 THEN 'Bot ' ELSE 'Agent ' END || n";
    let statements = [
        // The statistics count the server's own upkeep too: its vacuum of the new rows would
        // read the whole trigram index.
        "ALTER TABLE agent_registration_text SET (autovacuum_enabled = off)".to_string(),
        format!(
            "INSERT INTO agents (agent_key, chain_id, source, registry, token_id, owner, operators,
               uri, active, registered_block, registered_at, last_event_block)
             SELECT {key}, 1, 'erc8004', '0x00000000000000000000000000000000000000aa', n::text,
                    '0x01', '[]', 'ipfs://file' || n, 1, n, n * 12, n
               FROM generate_series(1, {NAMED}) AS n"
        ),
        format!(
            "INSERT INTO agent_registrations (agent_key, uri, name, x402, supported_trusts,
               services, oasf_skills, oasf_domains)
             SELECT {key}, 'ipfs://file' || n, {name}, 1, '[]', '[]', '[]', '[]'
               FROM generate_series(1, {NAMED}) AS n"
        ),
        format!(
            "INSERT INTO agent_registration_text (agent_key, name, description)
             SELECT {key}, {name}, '' FROM generate_series(1, {NAMED}) AS n"
        ),
        format!(
            "INSERT INTO agent_a2a_skills (agent_key, position, skill)
             SELECT {key}, 0, 'skill' || (n % {SKILLS}) FROM generate_series(1, {NAMED}) AS n"
        ),
        "VACUUM agent_registration_text".to_string(),
    ];
    run_planned_for_no_values(url, &statements).await;
    // A backend hands its counts over when it ends: reset once the filling one has.
    let pool = alone_on(url).await;
    sqlx::query("SELECT pg_stat_reset()")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    Store::open(url).await.unwrap()
}

/// The ids of the agents the SDK's search with `filter` (its `where`) finds on the subgraph
/// endpoint at `base`, sorted.
async fn sdk_search(base: &str, filter: serde_json::Value) -> Vec<String> {
    let query = "query($where: Agent_filter) { agents(where: $where, first: 1000, \
        orderBy: updatedAt, orderDirection: desc) { id } }";
    let body = support::api::post_json(
        &format!("{base}/subgraphs/name/agent0"),
        &json!({ "query": query, "variables": { "where": filter } }),
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    let mut ids: Vec<String> = body["data"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| agent["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// `searchAgents` with a name, x402 and a skill, as the SDK writes it.
fn with_skill(name: &str, skill: &str) -> serde_json::Value {
    json!({ "and": [
        { "registrationFile_not": null,
          "registrationFile_": { "name_contains_nocase": name, "x402Support": true } },
        { "or": [ { "registrationFile_": { "a2aSkills_contains": [skill] } } ] }
    ]})
}

/// The ids of the agents whose name holds `text` (any case) and that `also` keeps, sorted.
fn named_with(text: &str, also: impl Fn(i64) -> bool) -> Vec<String> {
    let mut ids: Vec<String> = (1..=NAMED)
        .filter(|&n| name(n).to_lowercase().contains(text) && also(n))
        .map(|n| format!("1:{n}"))
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdks_search_starts_from_a_rare_skill_not_from_every_name_it_matches() {
    let url = postgres::server().fresh_database();
    let store = named(&url).await;
    let served = served_without_limits(store, &url).await;
    // "agent 1" is in 11,000 of the names; skill7's 250 agents are the smaller side.
    let found = sdk_search(&served.base, with_skill("agent 1", "skill7")).await;
    let expected = named_with("agent 1", |n| n % SKILLS == 7);
    assert!(!expected.is_empty());
    assert_eq!(found, expected, "the agents with the name and the skill");
    // A skill no agent holds finds none, whatever the name matches.
    for name in ["agent 1", "agent 2", "agent 3"] {
        let found = sdk_search(&served.base, with_skill(name, "nobody")).await;
        assert!(found.is_empty(), "{found:?}");
    }
    served.stop().await;

    let (by_index, scans) = table_reads(&url, "agent_registrations").await;
    let in_turn = sequential_reads(&url, "agent_registrations").await;
    assert!(
        scans > 0,
        "the statistics counted no read of the registrations"
    );
    // Testing the skill on every agent the name matches reads 11,000 registrations a search.
    assert!(
        by_index + in_turn < 5_000,
        "four searches read {by_index} registrations by index ({scans} scans) and {in_turn} in turn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_search_asks_the_trigram_index_for_the_rare_part_of_the_name() {
    let url = postgres::server().fresh_database();
    let store = named(&url).await;
    let served = served_without_limits(store, &url).await;
    // "Bot 4567"-like names hold the rare part too: the whole text still decides.
    for number in ["450", "4567", "9100"] {
        let text = format!("agent {number}");
        let found = sdk_search(
            &served.base,
            json!({ "registrationFile_not": null,
                    "registrationFile_": { "name_contains_nocase": text } }),
        )
        .await;
        assert_eq!(
            found,
            named_with(&text, |_| true),
            "the agents named {text}"
        );
    }
    served.stop().await;

    let pages = index_pages(&url, "agent_registration_text_name").await;
    // Every name holds "agent"'s trigrams: looking them up walks four posting lists of 100,000
    // entries, about 130 pages a search; the rare part alone reads about 15.
    assert!(
        pages < 150,
        "three name searches read {pages} pages of the name's trigram index"
    );
}

/// Rows of `table` read by sequential scans, once no other connection to the database is left.
async fn sequential_reads(url: &str, table: &str) -> i64 {
    counted_alone(
        url,
        "SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = $1",
        table,
    )
    .await
}

/// Pages of the index `index` read (from the server's cache or from disk), once no other
/// connection to the database is left.
async fn index_pages(url: &str, index: &str) -> i64 {
    counted_alone(
        url,
        "SELECT coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0)
           FROM pg_statio_user_indexes WHERE indexrelname = $1",
        index,
    )
    .await
}

/// The count `sql` gives for `name` (its `$1`), read once every other connection to the
/// database has ended and handed its statistics over.
async fn counted_alone(url: &str, sql: &str, name: &str) -> i64 {
    let pool = alone_on(url).await;
    let count: i64 = sqlx::query_scalar(sql)
        .bind(name)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    count
}
