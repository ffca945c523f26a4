//! Unit tests of root lists read walking an index in their order (`Field::walk`), on a real
//! SQLite store: agents by `updatedAt`, a third of them sharing each time and spread over two
//! registries of one chain (so the index's own key order is not `id`'s), with agent contracts
//! among them. Every page, walked or not, equals the one sorted from every agent in Rust, ties
//! broken by `id`; the walk is chosen only when no clause of the filter narrows the rows down;
//! and its plan reads the index in order, sorting the rows of a tie only.

use super::*;
use crate::row_budget::RowBudget;
use crate::subgraph::execute::Source;
use crate::subgraph::plan::first_list;
use agentindex_indexer::schema::{agent_activity, agent_registrations, agents};
use agentindex_indexer::store::Store;

/// Agents written, numbered from 0.
const AGENTS: u64 = 300;

/// Agent `n` is an agent contract (no token, not listed) when this holds.
fn is_contract(n: u64) -> bool {
    n % 7 == 6
}

/// Agent `n` has a registration file when this holds.
fn has_file(n: u64) -> bool {
    !n.is_multiple_of(3)
}

/// The time agent `n` was last active: nine times, each shared by a ninth of the agents.
fn updated_at(n: u64) -> u64 {
    1_000 + n % 9
}

/// The key of agent `n` (SQL over `i`): ERC-8004 token `i` of registry 0x…0a when even, of
/// 0x…0b when odd, or an agent contract.
const KEY: &str = "CASE WHEN i % 7 = 6 THEN '1:' || printf('0x%040x', i) \
     WHEN i % 2 = 0 THEN '1:0x000000000000000000000000000000000000000a:' || i \
     ELSE '1:0x000000000000000000000000000000000000000b:' || i END";

/// The agents, their activity and registration files, written straight into a fresh store.
async fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("walk.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let last = AGENTS - 1;
    let agents_of = |select: &str, table: &str, columns: &str| {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
             INSERT INTO {table} ({columns}) SELECT {select} FROM n"
        )
    };
    for statement in [
        agents_of(
            &format!(
                "{KEY}, 1, CASE WHEN i % 7 = 6 THEN 'factory' ELSE 'erc8004' END,
                 CASE WHEN i % 7 = 6 THEN printf('0x%040x', i) END,
                 CASE WHEN i % 7 = 6 THEN NULL WHEN i % 2 = 0
                      THEN '0x000000000000000000000000000000000000000a'
                      ELSE '0x000000000000000000000000000000000000000b' END,
                 CASE WHEN i % 7 = 6 THEN NULL ELSE CAST(i AS TEXT) END,
                 printf('0x%040x', i % 5), '[]', 1, 1, 12, 1"
            ),
            agents::NAME,
            "agent_key, chain_id, source, address, registry, token_id, owner, operators, active,
             registered_block, registered_at, last_event_block",
        ),
        agents_of(
            &format!("{KEY}, 1, 1, 1000 + i % 9"),
            agent_activity::NAME,
            "agent_key, chain_id, last_block, updated_at",
        ),
        format!(
            "{} WHERE i % 3 != 0 AND i % 7 != 6",
            agents_of(
                &format!("{KEY}, 'ipfs://file-' || i, 1, '[]', '[]', '[]', '[]'"),
                agent_registrations::NAME,
                "agent_key, uri, active, supported_trusts, services, oasf_skills, oasf_domains",
            )
        ),
    ] {
        sqlx::query(&statement).execute(&pool).await.unwrap();
    }
    pool.close().await;
    (dir, store)
}

/// The ids and `updatedAt`s of the page `query` asks for, read from `store`.
async fn page(store: &Store, query: &str) -> Vec<(String, String)> {
    let rows = RowBudget::new(1_000_000);
    let answer = Source {
        pool: store.reader(),
        chain: Some(1),
        rows: &rows,
    }
    .list_json(&first_list(Dialect::Sqlite, query))
    .await
    .unwrap();
    answer
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| {
            let text = |field: &str| agent[field].as_str().unwrap().to_string();
            (text("id"), text("updatedAt"))
        })
        .collect()
}

/// The same page sorted in Rust from every listed agent `keep` keeps: by `updatedAt`, then by
/// `id` (as text), the same way, then `skip` and `first`.
fn sorted(
    keep: impl Fn(u64) -> bool,
    descending: bool,
    first: usize,
    skip: usize,
) -> Vec<(String, String)> {
    let mut rows: Vec<(u64, String)> = (0..AGENTS)
        .filter(|n| !is_contract(*n) && keep(*n))
        .map(|n| (updated_at(n), format!("1:{n}")))
        .collect();
    rows.sort();
    if descending {
        rows.reverse();
    }
    rows.into_iter()
        .skip(skip)
        .take(first)
        .map(|(at, id)| (id, at.to_string()))
        .collect()
}

#[tokio::test]
async fn every_page_in_update_order_is_the_page_sorted_from_every_agent() {
    let (_dir, store) = store().await;
    let filters: [(&str, &dyn Fn(u64) -> bool); 4] = [
        ("", &|_| true),
        ("where: { registrationFile_not: null },", &has_file),
        (
            "where: { registrationFile_not: null, registrationFile_: { active: true } },",
            &has_file,
        ),
        (
            "where: { owner_in: [\"0x0000000000000000000000000000000000000003\"] },",
            &|n| n % 5 == 3,
        ),
    ];
    for (filter, keep) in filters {
        for descending in [true, false] {
            let direction = if descending { "desc" } else { "asc" };
            for (first, skip) in [(1000, 0), (10, 0), (7, 3), (25, 40), (5, 190), (30, 250)] {
                let query = format!(
                    "{{ agents({filter} first: {first}, skip: {skip}, orderBy: updatedAt,
                        orderDirection: {direction}) {{ id updatedAt }} }}"
                );
                assert_eq!(
                    page(&store, &query).await,
                    sorted(keep, descending, first, skip),
                    "{query}"
                );
            }
        }
    }
}

#[tokio::test]
async fn only_a_page_no_clause_narrows_walks_the_activity_index() {
    let walks = |query: &str| {
        let sql = list(Dialect::Sqlite, &first_list(Dialect::Sqlite, query), None);
        sql.text.contains(&format!(
            "FROM {} u INDEXED BY agent_activity_updated CROSS JOIN",
            agent_activity::NAME
        ))
    };
    let order = "orderBy: updatedAt, orderDirection: desc";
    assert!(walks(&format!("{{ agents({order}) {{ id }} }}")));
    assert!(walks(&format!(
        "{{ agents(where: {{ registrationFile_not: null }}, {order}) {{ id }} }}"
    )));
    assert!(walks(&format!(
        "{{ agents(where: {{ registrationFile_: {{ x402Support: true }} }}, {order}) {{ id }} }}"
    )));
    // A clause that finds its rows by an index: those are sorted, as before.
    for filter in [
        "owner_in: [\"0x0000000000000000000000000000000000000003\"]",
        "registrationFile_: { name_contains_nocase: \"agent 12\" }",
        "registrationFile_: { a2aSkills_contains: [\"translate\"] }",
        "id_in: [\"1:4\"]",
    ] {
        let query = format!(
            "{{ agents(where: {{ registrationFile_not: null, {filter} }}, {order}) {{ id }} }}"
        );
        assert!(!walks(&query), "{query}");
    }
    // Other orders are read as before.
    assert!(!walks(
        "{ agents(orderBy: createdAt, orderDirection: desc) { id } }"
    ));
}

#[tokio::test]
async fn the_walk_reads_the_index_in_order_and_sorts_only_within_a_tie() {
    let (_dir, store) = store().await;
    let query = "{ agents(where: { registrationFile_not: null }, first: 20, orderBy: updatedAt,
        orderDirection: desc) { id updatedAt } }";
    let sql = list(
        Dialect::Sqlite,
        &first_list(Dialect::Sqlite, query),
        Some(1),
    );
    // The chain compared plainly: the walk is the plan whatever the comparison.
    assert!(
        sql.text.contains(" AND a.chain_id = ? AND "),
        "{}",
        sql.text
    );
    let text = format!("EXPLAIN QUERY PLAN {}", sql.text);
    let mut explain = sqlx::query_as::<_, (i64, i64, i64, String)>(&text);
    for bind in sql.binds {
        explain = match bind {
            Bind::Text(text) => explain.bind(text),
            Bind::Int(int) => explain.bind(int),
            Bind::Real(real) => explain.bind(real),
        };
    }
    let details: Vec<String> = explain
        .fetch_all(store.reader())
        .await
        .unwrap()
        .into_iter()
        .map(|(.., detail)| detail)
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.starts_with("SCAN u USING") && d.ends_with("INDEX agent_activity_updated")),
        "{details:?}"
    );
    // SQLite names a sort of the rows of each tie on the first term "FOR RIGHT PART OF ORDER
    // BY" (before 3.44) or "FOR LAST TERM OF ORDER BY".
    assert!(
        details.iter().any(|d| d.starts_with("USE TEMP B-TREE FOR")
            && (d.contains("RIGHT PART") || d.contains("LAST TERM"))),
        "ties sorted by id only: {details:?}"
    );
    assert!(
        !details.iter().any(|d| d.starts_with("SCAN a")),
        "no agent read but those the walk passes: {details:?}"
    );
    let walk = details
        .iter()
        .position(|d| d.starts_with("SCAN u USING"))
        .unwrap();
    assert_eq!(
        details[walk + 1],
        "SEARCH a USING INDEX sqlite_autoindex_agents_1 (agent_key=?)",
        "each agent the walk passes found by its key: {details:?}"
    );
}
