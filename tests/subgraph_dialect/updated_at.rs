//! `updatedAt` as the subgraph endpoint reads it (the activity the writer keeps per agent)
//! against the same time computed here from the facts, and the agent0 SDK's default page
//! (newest first, read down the activity index) in that order.

use crate::support;
use crate::support::graphql::data;
use agentindex_indexer::schema::{
    agent_activity, agents, events, feedback, feedback_revocations, identity_metadata,
};
use agentindex_indexer::store::Dialect;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;

/// Each ERC-8004 agent's token and when it last changed, computed from its facts as the
/// subgraph endpoint computed `updatedAt` before the writer kept it (`agent_activity`): the
/// newest block time of the agent's own last event (its registration's time when that block
/// holds no stored event), the metadata its owner set, the feedback given to it and revoked.
fn updated_from_facts(dialect: Dialect) -> String {
    let of_token = |t: &str| {
        format!(
            "{t}.chain_id = a.chain_id AND {t}.registry = a.registry AND {t}.token_id = a.token_id"
        )
    };
    let newest_event = |table: &str, t: &str| {
        format!(
            "coalesce((SELECT max(e.block_timestamp) FROM {table} {t} JOIN {} e ON e.chain_id = {t}.chain_id AND e.block_number = {t}.block_number AND e.log_index = {t}.log_index WHERE {}), 0)",
            events::NAME,
            of_token(t)
        )
    };
    let own = format!(
        "coalesce((SELECT e.block_timestamp FROM {} e WHERE e.chain_id = a.chain_id AND e.block_number = a.last_event_block LIMIT 1), a.registered_at)",
        events::NAME
    );
    let feedback = format!(
        "coalesce((SELECT max(f.timestamp) FROM {} f WHERE {}), 0)",
        feedback::NAME,
        of_token("f")
    );
    let newest = dialect.greatest_of(&[
        &own,
        &newest_event(identity_metadata::NAME, "m"),
        &feedback,
        &newest_event(feedback_revocations::NAME, "r"),
    ]);
    format!(
        "SELECT a.token_id, {newest} FROM {} a WHERE a.source = 'erc8004'",
        agents::NAME
    )
}

/// Checks every ERC-8004 agent's `updatedAt` at `endpoint` (of `chain`, indexed into `db`)
/// against its facts, and the pages newest first against that order; returns each agent's
/// token and time, as computed.
pub(super) async fn matches_the_facts(
    endpoint: &str,
    chain: u64,
    db: &Path,
) -> BTreeSet<(String, String)> {
    let updated: BTreeSet<(String, String)> = data(
        endpoint,
        "{ agents(first: 1000) { agentId updatedAt } }",
        json!({}),
    )["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["agentId"].as_str().unwrap().to_string(),
                a["updatedAt"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let facts = support::open(db).await;
    let computed: Vec<(String, i64)> = sqlx::query_as(&updated_from_facts(facts.dialect()))
        .fetch_all(facts.reader())
        .await
        .unwrap();
    // On PostgreSQL the subgraph compares `agent_activity`'s keys with `agents`' as they are
    // (`api/src/subgraph/catalogue/agents.rs`): both must be `COLLATE "C"`, as every key of the
    // schema is, or no index serves the comparison and each lookup reads the whole table.
    if matches!(facts.dialect(), Dialect::Postgres) {
        let collation: Option<String> = sqlx::query_scalar(
            "SELECT CAST(collation_name AS TEXT) FROM information_schema.columns
              WHERE table_name = $1 AND column_name = 'agent_key'",
        )
        .bind(agent_activity::NAME)
        .fetch_one(facts.reader())
        .await
        .unwrap();
        assert_eq!(
            collation.as_deref(),
            Some("C"),
            "agent_activity.agent_key's collation"
        );
    }
    facts.close().await;
    let from_facts: BTreeSet<(String, String)> = computed
        .iter()
        .map(|(token, at)| (token.clone(), at.to_string()))
        .collect();
    assert_eq!(
        updated, from_facts,
        "every ERC-8004 agent's updatedAt is its newest fact's time"
    );
    // The SDK's default page (newest first, read down the activity index) is in that order,
    // ties broken by id the same way; with a filter no index narrows, the same walk filtered.
    let mut newest: Vec<(i64, String)> = computed
        .iter()
        .map(|(token, at)| (*at, format!("{chain}:{token}")))
        .collect();
    newest.sort();
    newest.reverse();
    let ids = |query: &str| -> Vec<String> {
        data(endpoint, query, json!({}))["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap().to_string())
            .collect()
    };
    let order = "first: 1000, orderBy: updatedAt, orderDirection: desc";
    let expected: Vec<String> = newest.into_iter().map(|(_, id)| id).collect();
    assert_eq!(ids(&format!("{{ agents({order}) {{ id }} }}")), expected);
    // The five agents registered in one block share their time: a tie broken by id alone.
    let same_block = "agentURI_starts_with: \"ipfs://same-block-\"";
    let tied: BTreeSet<String> = ids(&format!(
        "{{ agents(first: 1000, where: {{ {same_block} }}) {{ id }} }}"
    ))
    .into_iter()
    .collect();
    assert_eq!(tied.len(), 5, "{tied:?}");
    assert_eq!(
        ids(&format!(
            "{{ agents(where: {{ {same_block} }}, {order}) {{ id }} }}"
        )),
        expected
            .iter()
            .filter(|id| tied.contains(*id))
            .cloned()
            .collect::<Vec<_>>()
    );
    from_facts
}
