//! Unit tests of derived lists read a page per parent, on a real SQLite store holding an agent
//! sent thousands of feedback: every page equals the same page read as a root list (another
//! statement, filtered by the agent) in every order and filter the subgraph allows, and the
//! query plan reads each agent's page from an index in the page's order instead of sorting
//! all the agent's feedback.

use super::*;
use crate::subgraph::plan::{Root, first_list, plan};
use agentindex_indexer::schema::{
    agents, feedback, feedback_revocations, identity_metadata, validation_requests,
};
use agentindex_indexer::store::Store;
use async_graphql::Variables;

/// The identity registry of the agents, as their keys and rows spell it.
const REGISTRY: &str = "0x000000000000000000000000000000000000000a";

/// Feedback sent to agent 7; agent 8 has 30, agent 9 none.
const SPAM: i64 = 5_000;

/// Agents 7, 8 and 9 with their feedback, some of it revoked, and agent 7's validation
/// requests and metadata. Agent 7's feedback comes from 13 clients (feedback indexes past 9,
/// so text and number orders differ), 50 a block (createdAt ties), with values, decimals and
/// tags that vary.
async fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("derived.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let last = SPAM - 1;
    for statement in [
        format!(
            "INSERT INTO {} (agent_key, chain_id, source, registry, token_id, owner, operators,
                active, registered_block, registered_at, last_event_block)
             SELECT '1:{REGISTRY}:' || t, 1, 'erc8004', '{REGISTRY}', CAST(t AS TEXT), '0xowner',
                    '[]', 1, 1, 12, 1
               FROM (SELECT 7 AS t UNION ALL SELECT 8 UNION ALL SELECT 9)",
            agents::NAME
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
             INSERT INTO {} (chain_id, registry, token_id, client, feedback_index, value,
                value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                block_number, log_index, tx_hash, timestamp)
             SELECT 1, '{REGISTRY}', '7', printf('0x%040x', i % 13), i / 13 + 1,
                    CAST((i * 7919) % 1000 AS TEXT), i % 3, 'tag' || (i % 5), '', '', '', '0x',
                    'v2', 10 + i / 50, i % 50, '0x', 1000 + i / 50
               FROM n",
            feedback::NAME
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 29)
             INSERT INTO {} (chain_id, registry, token_id, client, feedback_index, value,
                value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                block_number, log_index, tx_hash, timestamp)
             SELECT 1, '{REGISTRY}', '8', printf('0x%040x', i % 4), i + 1, CAST(i AS TEXT), 0,
                    'tag' || (i % 5), '', '', '', '0x', 'v2', 1000 + i, 0, '0x', 5000 + i
               FROM n",
            feedback::NAME
        ),
        format!(
            "INSERT INTO {} (chain_id, registry, token_id, client, feedback_index,
                block_number, log_index)
             SELECT chain_id, registry, token_id, client, feedback_index, block_number, log_index
               FROM {} WHERE log_index % 7 = 3",
            feedback_revocations::NAME,
            feedback::NAME
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39)
             INSERT INTO {} (chain_id, registry, request_hash, validator,
                token_id, request_uri, block_number, log_index, tx_hash)
             SELECT 1, '{REGISTRY}', printf('0x%064x', (i * 37) % 1009), '0xvalidator', '7', '',
                    2000 + i, 0, '0x'
               FROM n",
            validation_requests::NAME
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 11)
             INSERT INTO {} (chain_id, registry, token_id, key, value,
                block_number, log_index)
             SELECT 1, '{REGISTRY}', '7', 'key' || ((i * 5) % 12), x'00', 3000 + i, 0
               FROM n",
            identity_metadata::NAME
        ),
    ] {
        sqlx::query(&statement).execute(&pool).await.unwrap();
    }
    pool.close().await;
    (dir, store)
}

/// The first root list of `query`, as JSON.
async fn list(store: &Store, query: &str) -> Json {
    let list = &first_list(Dialect::Sqlite, query);
    let rows = RowBudget::new(1_000_000);
    Source {
        pool: store.reader(),
        chain: None,
        rows: &rows,
    }
    .list_json(list)
    .await
    .unwrap()
}

/// Each page of `field` (with `arguments` and the `where` fields `filter`) under agents 7, 8
/// and 9 equals the root list `plural` filtered by the agent with the same arguments; returns
/// agent 7's page.
async fn same_as_root(
    store: &Store,
    (field, plural): (&str, &str),
    arguments: &str,
    filter: &str,
    selection: &str,
) -> Vec<Json> {
    let nested = list(
        store,
        &format!(
            "{{ agents(where: {{ id_in: [\"1:7\", \"1:8\", \"1:9\"] }}) {{ id
                {field}({arguments} where: {{ {filter} }}) {{ {selection} }} }} }}"
        ),
    )
    .await;
    let agents = nested.as_array().unwrap();
    assert_eq!(agents.len(), 3);
    let mut first = Vec::new();
    for agent in agents {
        let id = agent["id"].as_str().unwrap();
        let root = list(
            store,
            &format!(
                "{{ {plural}({arguments} where: {{ agent: \"{id}\" {filter} }}) {{ {selection} }} }}"
            ),
        )
        .await;
        assert_eq!(
            agent[field], root,
            "{field}({arguments} where: {{ {filter} }}) of {id}"
        );
        if id == "1:7" {
            first = root.as_array().unwrap().clone();
        }
    }
    first
}

#[tokio::test]
async fn each_agents_page_equals_its_root_list_in_every_order_and_filter() {
    let (_dir, store) = store().await;
    let feedback = ("feedback", "feedbacks");
    let selection = "id createdAt value isRevoked clientAddress";
    for (arguments, filter, expected) in [
        ("", "", 100),
        ("first: 5, skip: 3, orderDirection: desc,", "", 5),
        ("first: 7, orderBy: createdAt, orderDirection: desc,", "", 7),
        // Past the first block's 50 feedback: a tie on createdAt broken by id.
        ("first: 7, skip: 46, orderBy: createdAt,", "", 7),
        ("first: 6, orderBy: value, orderDirection: desc,", "", 6),
        ("first: 6, skip: 2, orderBy: clientAddress,", "", 6),
        ("first: 4, orderBy: isRevoked, orderDirection: desc,", "", 4),
        (
            "first: 4, orderBy: feedbackIndex, orderDirection: desc,",
            "",
            4,
        ),
        (
            "first: 5, orderBy: createdAt,",
            &format!("clientAddress: \"0x{:040x}\"", 3),
            5,
        ),
        ("first: 5, skip: 1,", "tag1: \"tag2\", isRevoked: false", 5),
        ("first: 1000, skip: 4990,", "", 10),
    ] {
        let page = same_as_root(&store, feedback, arguments, filter, selection).await;
        assert_eq!(page.len(), expected, "{arguments} {filter}");
    }
    let validations = ("validations", "validations");
    for arguments in ["first: 5, skip: 2,", "first: 3, orderDirection: desc,"] {
        let page = same_as_root(&store, validations, arguments, "", "id").await;
        assert!(!page.is_empty(), "{arguments}");
    }
    let metadata = ("metadata", "agentMetadatas");
    let page = same_as_root(
        &store,
        metadata,
        "first: 4, skip: 1, orderDirection: desc,",
        "",
        "id key",
    )
    .await;
    assert_eq!(page.len(), 4);
}

/// The query plan of the page of the derived list `query` asks for (a root list with one
/// derived field, last), for each of `parents` (their values of the list's links): the
/// details of each parent's branch.
async fn branch_plans(store: &Store, query: &str, parents: &[Json]) -> Vec<Vec<String>> {
    let list = &first_list(Dialect::Sqlite, query);
    let Some(What::Derived(field, derived)) = list.items.last().map(|i| &i.what) else {
        panic!("a derived list last")
    };
    let Shape::Derived { paging, .. } = field.shape else {
        panic!("a derived field")
    };
    let parents: Vec<(String, Vec<Bind>)> = parents
        .iter()
        .map(|key| {
            let values = link_values(key, paging.links.len()).expect("a parent's link values");
            (key.to_string(), values)
        })
        .collect();
    let sql = statements::pages(
        Dialect::Sqlite,
        derived,
        paging,
        &parents,
        MAX_NESTED_ROWS + 1,
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
    let nodes = explain.fetch_all(store.reader()).await.unwrap();
    // Each branch is a subquery named `page{n}`; its plan is the nodes below it.
    let below = |root: i64| -> Vec<String> {
        let mut found = Vec::new();
        let mut pending = vec![root];
        while let Some(parent) = pending.pop() {
            for (id, of, _, detail) in &nodes {
                if *of == parent {
                    found.push(detail.clone());
                    pending.push(*id);
                }
            }
        }
        found
    };
    let names: Vec<String> = (0..parents.len())
        .flat_map(|n| ["CO-ROUTINE", "MATERIALIZE"].map(|way| format!("{way} page{n}")))
        .collect();
    let branches: Vec<Vec<String>> = nodes
        .iter()
        .filter(|(_, _, _, detail)| names.contains(detail))
        .map(|(id, ..)| below(*id))
        .collect();
    assert_eq!(
        branches.len(),
        parents.len(),
        "a branch per parent: {nodes:?}"
    );
    branches
}

#[tokio::test]
async fn a_page_per_agent_reads_the_agents_index_in_order_without_sorting_its_feedback() {
    let (_dir, store) = store().await;
    let agents = [
        serde_json::json!([1, REGISTRY, "7"]),
        serde_json::json!([1, REGISTRY, "8"]),
    ];
    for (list, index) in [
        ("feedback(first: 1)", "feedback_agent_id"),
        (
            "feedback(first: 1, skip: 5, orderDirection: desc)",
            "feedback_agent_id",
        ),
        (
            "feedback(first: 3, orderBy: createdAt)",
            "feedback_agent_time",
        ),
        (
            "feedback(first: 3, orderBy: createdAt, orderDirection: desc, where: { tag1: \"tag1\" })",
            "feedback_agent_time",
        ),
        ("validations(first: 2)", "validation_requests_agent_id"),
    ] {
        let query = format!("{{ agents {{ id {list} {{ id }} }} }}");
        for branch in branch_plans(&store, &query, &agents).await {
            assert!(
                branch
                    .iter()
                    .any(|d| d.contains(&format!(" INDEX {index} "))),
                "{list} reads {index}: {branch:?}"
            );
            assert!(
                !branch.iter().any(|d| d.contains("TEMP B-TREE")),
                "{list} must not sort the agent's list: {branch:?}"
            );
        }
    }
    // An order no index holds sorts the parent's own rows, found by its columns (not the
    // primary key's `chain_id`, which would read the chain's rows for every parent).
    let feedback = [serde_json::json!([
        1,
        REGISTRY,
        "7",
        format!("0x{:040x}", 3),
        4
    ])];
    for (query, parents, index) in [
        (
            "{ agents { id feedback(first: 2, orderBy: value) { id } } }",
            &agents[..],
            "feedback_agent_position (chain_id=? AND registry=? AND token_id=?)",
        ),
        (
            "{ agents { id metadata(first: 2) { id } } }",
            &agents[..],
            "identity_metadata_token (chain_id=? AND registry=? AND token_id=?)",
        ),
        (
            "{ feedbacks { id responses(first: 1) { id } } }",
            &feedback[..],
            "feedback_responses_feedback (chain_id=? AND registry=? AND token_id=? AND client=? AND feedback_index=?)",
        ),
    ] {
        for branch in branch_plans(&store, query, parents).await {
            assert!(
                branch
                    .iter()
                    .any(|d| d.contains(&format!(" INDEX {index}"))),
                "{query}: {branch:?}"
            );
        }
    }
}

#[tokio::test]
async fn parents_past_one_statement_each_get_their_own_page_and_share_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("many.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    // 250 agents (three statements' worth), 81 feedback each: 20,250 in all.
    for statement in [
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 249)
             INSERT INTO {} (agent_key, chain_id, source, registry, token_id, owner,
                operators, active, registered_block, registered_at, last_event_block)
             SELECT '1:{REGISTRY}:' || i, 1, 'erc8004', '{REGISTRY}', CAST(i AS TEXT), '0xowner',
                    '[]', 1, 1, 12, 1
               FROM n",
            agents::NAME
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20249)
             INSERT INTO {} (chain_id, registry, token_id, client, feedback_index, value,
                value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                block_number, log_index, tx_hash, timestamp)
             SELECT 1, '{REGISTRY}', CAST(i / 81 AS TEXT), '0xclient', i % 81 + 1, '1', 0, '', '',
                    '', '', '0x', 'v2', 10 + i / 81, i % 81, '0x', 24
               FROM n",
            feedback::NAME
        ),
    ] {
        sqlx::query(&statement).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let agents = list(
        &store,
        "{ agents(first: 250) { id feedback(first: 2, skip: 1, orderDirection: desc) { id } } }",
    )
    .await;
    let agents = agents.as_array().unwrap();
    assert_eq!(agents.len(), 250);
    for agent in agents {
        let id = agent["id"].as_str().unwrap();
        let ids: Vec<&str> = agent["feedback"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap())
            .collect();
        // The agent's own, by id as text, descending: 9, then 81 and 80.
        let token = id.split(':').nth(1).unwrap();
        assert_eq!(
            ids,
            [
                format!("1:{token}:0xclient:81"),
                format!("1:{token}:0xclient:80")
            ],
            "{id}"
        );
    }

    // A hundred agents' 81 feedback a statement pass the bound in the third: refused.
    let plan = plan(
        Dialect::Sqlite,
        "{ agents(first: 250) { id feedback(first: 100) { id } } }",
        None,
        &Variables::default(),
        &Default::default(),
    )
    .unwrap();
    let (_, Root::List(query)) = &plan.roots[0] else {
        panic!("a list")
    };
    let rows = RowBudget::new(1_000_000);
    let refused = Source {
        pool: store.reader(),
        chain: None,
        rows: &rows,
    }
    .list_json(query)
    .await
    .unwrap_err();
    assert!(
        matches!(&refused, RunError::Refused(m) if m.contains("`feedback` would read more than 20000")),
        "{refused}"
    );
    assert!(
        rows.spent() >= 250 + 2 * 100 * 81,
        "the first two statements' rows were charged: {}",
        rows.spent()
    );
}
