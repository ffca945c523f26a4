//! An agent's relations over GraphQL, read by the npm `graphql-request` client: credited
//! payments with why each does or does not count, feedback with revocations and responses,
//! validations with every response, and the on-chain history, each a connection paged by
//! (block, log index) cursors.

use crate::support;

use agentindex_contracts::Devnet;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use support::graphql::{data, gql};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_shows_its_payments_feedback_and_validations() {
    let devnet = Devnet::start().await.unwrap();
    let s = support::scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = support::config(&devnet, &db, 0);
    support::index_until_synced(&config).await;
    let store = support::open(&db).await;
    let served = support::api::serve(store, &config).await;
    let endpoint = format!("{}/graphql", served.base);
    let key = format!(
        "{}:{:#x}:{}",
        devnet.chain_id(),
        devnet.deployment().identity,
        s.erc8004_id
    );
    let relations = "query($id: ID!) { agent(id: $id) {
            payments { totalCount nodes { payer amount x402 counts excludedBecause } }
            feedback { nodes { client index value valueDecimals revoked responses } }
            validations { nodes { validator responses } }
            reputation { paymentCount excludedPayments feedbackCount }
            history(first: 100) { totalCount nodes { blockNumber logIndex kind detail } }
        } }";
    let agent = data(&endpoint, relations, json!({ "id": key }))["agent"].clone();
    let hex = |a: alloy::primitives::Address| format!("{a:#x}");
    assert_eq!(agent["payments"]["totalCount"], 3);
    assert_eq!(
        agent["payments"]["nodes"],
        json!([
            { "payer": hex(s.erin), "amount": "4", "x402": false, "counts": false, "excludedBecause": "operator" },
            { "payer": hex(s.dave), "amount": "40", "x402": true, "counts": true, "excludedBecause": null },
            { "payer": hex(s.dave), "amount": "3", "x402": false, "counts": true, "excludedBecause": null },
        ]),
        "newest first, each with whether it counts and why not"
    );
    let feedback = agent["feedback"]["nodes"].as_array().unwrap();
    assert_eq!(feedback.len(), 3);
    let revoked: Vec<bool> = feedback
        .iter()
        .map(|f| f["revoked"].as_bool().unwrap())
        .collect();
    assert_eq!(
        revoked,
        vec![false, false, true],
        "newest first; dave's first was revoked"
    );
    let answered = feedback
        .iter()
        .find(|f| f["client"] == hex(s.dave) && f["index"] == 2)
        .unwrap();
    assert_eq!(answered["value"], "-250");
    assert_eq!(answered["valueDecimals"], 2);
    assert_eq!(answered["responses"].as_array().unwrap().len(), 2);
    assert_eq!(answered["responses"][0]["uri"], "ipfs://r1");
    let responses: Vec<i64> = agent["validations"]["nodes"][0]["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["response"].as_i64().unwrap())
        .collect();
    assert_eq!(responses, vec![0, 100], "every response, oldest first");
    assert_eq!(agent["validations"]["nodes"][0]["validator"], hex(s.grace));
    assert_eq!(
        agent["reputation"],
        json!({ "paymentCount": 2, "excludedPayments": 1, "feedbackCount": 2 })
    );
    let history = agent["history"]["nodes"].as_array().unwrap();
    assert_eq!(agent["history"]["totalCount"], history.len());
    let kinds: BTreeSet<&str> = history
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    for kind in ["registered", "metadata_set", "approval", "transferred"] {
        assert!(kinds.contains(kind), "{kind} missing from {kinds:?}");
    }
    let positions: Vec<(i64, i64)> = history
        .iter()
        .map(|h| {
            (
                h["blockNumber"].as_i64().unwrap(),
                h["logIndex"].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] > w[1]),
        "newest first: {positions:?}"
    );
    let transfer = history.iter().find(|h| h["kind"] == "transferred").unwrap();
    assert_eq!(transfer["detail"]["to"], hex(s.dave));

    // Paging through the history two at a time gives the whole list, in order, once.
    let mut paged: Vec<Value> = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = data(
            &endpoint,
            "query($id: ID!, $after: String) { agent(id: $id) {
                history(first: 2, after: $after) {
                    pageInfo { hasNextPage endCursor } nodes { blockNumber logIndex kind detail } } } }",
            json!({ "id": key, "after": after }),
        )["agent"]["history"]
            .clone();
        paged.extend(page["nodes"].as_array().unwrap().iter().cloned());
        if page["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = page["pageInfo"]["endCursor"].as_str().map(String::from);
    }
    assert_eq!(&paged, history, "pages of two add up to the whole history");
    let wrong = gql(
        &endpoint,
        json!([{ "query": "query($id: ID!) { agent(id: $id) { payments(after: \"nope\") { totalCount } } }",
                 "variables": { "id": key } }]),
    );
    assert!(
        wrong[0]["errors"][0]
            .as_str()
            .unwrap_or("")
            .contains("not a cursor of this list"),
        "{}",
        wrong[0]
    );
    served.stop().await;

    // A client served at low priority (it owes any time at all, and time hardly drains) gets
    // the same answer, read through loaders of its own on the low-priority connections.
    let mut low = config.clone();
    low.api.low_priority_after_ms_per_client = 0;
    low.api.server_ms_per_second_per_client = 1;
    let options = agentindex_indexer::store::OpenOptions {
        low_priority_readers: 1,
        ..Default::default()
    };
    let store = agentindex_indexer::store::Store::open_with(&support::database_url(&db), options)
        .await
        .unwrap();
    let served = support::api::serve(store, &low).await;
    let endpoint = format!("{}/graphql", served.base);
    // A first question of some milliseconds, sent at once: owed at 1 ms a second, it is not
    // paid off for seconds, well after the next question starts.
    let first = support::api::post_json(
        &endpoint,
        &json!({ "query": "query($id: ID!) { agent(id: $id) {
            history(first: 100) { nodes { blockNumber kind detail } } } }",
            "variables": { "id": key } }),
    )
    .await;
    assert!(
        first["data"]["agent"]["history"]["nodes"].is_array(),
        "{first}"
    );
    let again = data(&endpoint, relations, json!({ "id": key }))["agent"].clone();
    assert_eq!(
        again, agent,
        "the low-priority lane answers as the ordinary path"
    );
    served.stop().await;

    // A client owing nothing whose question is costlier than `low_priority_above_complexity`
    // has its reads moved to the low-priority connections all the same; a cheap one does not.
    let mut costly = config.clone();
    costly.api.low_priority_above_complexity = 100;
    let store = agentindex_indexer::store::Store::open_with(&support::database_url(&db), options)
        .await
        .unwrap();
    let served = support::api::serve(store, &costly).await;
    let endpoint = format!("{}/graphql", served.base);
    let cheap = data(
        &endpoint,
        "query($id: ID!) { agent(id: $id) { id } }",
        json!({ "id": key }),
    );
    assert_eq!(cheap["agent"]["id"], key);
    let read_low = data(&endpoint, relations, json!({ "id": key }))["agent"].clone();
    assert_eq!(read_low, agent, "read at low priority, the same answer");
    // The first scrape renders afresh (later ones are kept for a second).
    let metrics = reqwest::get(format!("{}/metrics", served.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lowered = support::api::metric(&metrics, "agentindex_api_low_priority_requests_total");
    assert_eq!(lowered, Some(1.0), "only the costly question is lowered");
    served.stop().await;
}
