//! The agent0 subgraph's current schema: its timeseries (`AgentRegistrationPoint`,
//! `FeedbackPoint`, `ValidationPoint`) and their hourly and daily aggregations, read through the
//! subgraph endpoint in graph-node's aggregation dialect (`interval`, `current`,
//! `timestamp_gte`/`_lt`, newest bucket first) by the npm `graphql-request` client, every value
//! checked against the chain's own logs (`expected`): feedback given and revoked and
//! validations over three days, hours apart, then an agent registered days later whose bucket
//! is still open.

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use alloy::primitives::B256;
use alloy::providers::Provider;
use expected::{Point, Row, rollup};
use serde_json::{Value, json};
use support::graphql::{data, gql};

mod expected;

const HOUR: u64 = 3_600;
const DAY: u64 = 86_400;

/// Moves the devnet's clock `seconds` ahead.
async fn warp(devnet: &Devnet, seconds: u64) {
    let _: Value = devnet
        .provider()
        .raw_request("evm_increaseTime".into(), (seconds,))
        .await
        .unwrap();
    support::chain::mine(devnet, 1).await;
}

/// An aggregation's rows as [`Row`]s: agent, bucket start in seconds, the `fields` as numbers.
fn rows(answer: &Value, fields: &[&str]) -> Vec<Row> {
    let list = answer
        .as_array()
        .unwrap_or_else(|| panic!("a list: {answer}"));
    let starts: Vec<u64> = list
        .iter()
        .map(|row| row["timestamp"].as_str().unwrap().parse::<u64>().unwrap() / 1_000_000)
        .collect();
    assert!(
        starts.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {starts:?}"
    );
    let mut rows: Vec<Row> = list
        .iter()
        .zip(starts)
        .map(|(row, start)| {
            let agent = row["agent"]["id"].as_str().unwrap_or_default().to_string();
            let values = fields
                .iter()
                .map(|f| row[*f].as_str().unwrap().parse::<f64>().unwrap())
                .collect();
            (agent, start, values)
        })
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rows
}

fn assert_rows(actual: &[Row], expected: &[Row], what: &str) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "{what}: {actual:?} vs {expected:?}"
    );
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!((&a.0, a.1), (&e.0, e.1), "{what}");
        for (x, y) in a.2.iter().zip(&e.2) {
            assert!((x - y).abs() < 1e-9, "{what}: {a:?} vs {e:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregations_answer_as_graph_node_from_the_chains_own_events() {
    let devnet = Devnet::start().await.unwrap();
    let s = support::scenario::run(&devnet).await;
    let accounts = devnet.accounts();
    let reputation = devnet.reputation();
    let validation = devnet.validation();
    let client = accounts[9];
    let give = |value: i128, decimals: u8| {
        reputation
            .giveFeedback(
                s.erc8004_id,
                value,
                decimals,
                "q".into(),
                "".into(),
                "".into(),
                "".into(),
                B256::ZERO,
            )
            .from(client)
    };
    // Two days on: feedback and a validation; an hour and a half later, more feedback and
    // the first of it revoked.
    warp(&devnet, 2 * DAY).await;
    confirm("feedback", give(7, 0).send()).await.unwrap();
    let request = B256::repeat_byte(0x77);
    let owner = devnet
        .identity()
        .ownerOf(s.erc8004_id)
        .call()
        .await
        .unwrap();
    confirm(
        "request",
        validation
            .validationRequest(s.grace, s.erc8004_id, "ipfs://r".into(), request)
            .from(owner)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "response",
        validation
            .validationResponse(request, 55, "".into(), B256::ZERO, "".into())
            .from(s.grace)
            .send(),
    )
    .await
    .unwrap();
    warp(&devnet, HOUR + HOUR / 2).await;
    confirm("feedback", give(45, 1).send()).await.unwrap();
    confirm(
        "revoke",
        reputation
            .revokeFeedback(s.erc8004_id, 1)
            .from(client)
            .send(),
    )
    .await
    .unwrap();
    // Three days on, a last registration: its bucket is the one still open.
    warp(&devnet, 3 * DAY).await;
    demo::via_erc8004(&devnet, accounts[5], "ipfs://late")
        .await
        .unwrap();
    let points = expected::points(&devnet).await;
    assert!(
        points.feedback.iter().any(|p| p.values[1] == 1.0),
        "a revocation"
    );

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = support::config(&devnet, &db, 0);
    support::index_until_synced(&config).await;
    let store = support::open(&db).await;
    let served = support::api::serve(store, &config).await;
    let endpoint = format!(
        "{}/subgraphs/name/agent0/{}",
        served.base,
        devnet.chain_id()
    );

    let answer = data(
        &endpoint,
        "{
          agentsDay: protocolAgentStats_collection(interval: day) { timestamp agentRegistrations protocol { id } }
          agentsNow: protocolAgentStats_collection(interval: day, current: include) { timestamp agentRegistrations }
          feedbackHour: protocolFeedbackStats_collection(interval: hour, current: include, first: 1000) {
            timestamp feedbackCreated feedbackRevoked valueSum valueDeltaSum }
          feedbackDay: protocolFeedbackStats(interval: day) { timestamp feedbackCreated feedbackRevoked valueSum valueDeltaSum }
          perAgent: agentFeedbackStats_collection(interval: day, first: 1000) {
            timestamp agent { id } feedbackCreated feedbackRevoked valueSum valueDeltaSum }
          validations: protocolValidationStats_collection(interval: day) { timestamp validationRequests validationResponses scoreSum }
          validationsPerAgent: agentValidationStats_collection(interval: hour, first: 1000) {
            timestamp agent { id } validationRequests validationResponses scoreSum }
        }",
        json!({}),
    );
    let newest = points.newest;
    assert_eq!(
        answer["agentsDay"][0]["protocol"]["id"],
        devnet.chain_id().to_string()
    );
    let registrations: Vec<Point> = points
        .registrations
        .iter()
        .map(|p| Point {
            values: vec![1.0],
            ..p.clone()
        })
        .collect();
    let agents_day = rollup(&registrations, DAY, false, false, newest);
    let agents_now = rollup(&registrations, DAY, false, true, newest);
    assert_eq!(
        agents_now.len(),
        agents_day.len() + 1,
        "the open bucket only with current: include"
    );
    assert_rows(
        &rows(&answer["agentsDay"], &["agentRegistrations"]),
        &agents_day,
        "agents by day",
    );
    assert_rows(
        &rows(&answer["agentsNow"], &["agentRegistrations"]),
        &agents_now,
        "agents by day, current included",
    );
    let feedback = [
        "feedbackCreated",
        "feedbackRevoked",
        "valueSum",
        "valueDeltaSum",
    ];
    let by_hour = rollup(&points.feedback, HOUR, false, true, newest);
    assert!(
        by_hour.len() >= 3,
        "feedback over several hours: {by_hour:?}"
    );
    assert_rows(
        &rows(&answer["feedbackHour"], &feedback),
        &by_hour,
        "feedback by hour",
    );
    assert_rows(
        &rows(&answer["feedbackDay"], &feedback),
        &rollup(&points.feedback, DAY, false, false, newest),
        "feedback by day (the plural-less name)",
    );
    assert_rows(
        &rows(&answer["perAgent"], &feedback),
        &rollup(&points.feedback, DAY, true, false, newest),
        "feedback by agent and day",
    );
    let validation_fields = ["validationRequests", "validationResponses", "scoreSum"];
    assert_rows(
        &rows(&answer["validations"], &validation_fields),
        &rollup(&points.validations, DAY, false, false, newest),
        "validations by day",
    );
    assert_rows(
        &rows(&answer["validationsPerAgent"], &validation_fields),
        &rollup(&points.validations, HOUR, true, false, newest),
        "validations by agent and hour",
    );

    // A window of buckets, oldest first; one agent's buckets.
    let by_hour_asc: Vec<Row> = by_hour.iter().rev().cloned().collect();
    let (from, to) = (by_hour_asc[1].1, by_hour_asc[by_hour_asc.len() - 1].1);
    let windowed = data(
        &endpoint,
        "query($gte: Timestamp!, $lt: Timestamp!) { protocolFeedbackStats_collection(interval: hour,
            current: include, orderBy: timestamp, orderDirection: asc,
            where: { timestamp_gte: $gte, timestamp_lt: $lt }) { timestamp feedbackCreated } }",
        json!({ "gte": (from * 1_000_000).to_string(), "lt": (to * 1_000_000).to_string() }),
    );
    let starts: Vec<u64> = windowed["protocolFeedbackStats_collection"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["timestamp"].as_str().unwrap().parse::<u64>().unwrap() / 1_000_000)
        .collect();
    let wanted: Vec<u64> = by_hour_asc
        .iter()
        .map(|r| r.1)
        .filter(|start| (from..to).contains(start))
        .collect();
    assert_eq!(starts, wanted, "timestamp_gte/_lt, ascending");
    let agent = format!("{}:{}", devnet.chain_id(), s.erc8004_id);
    let one = data(
        &endpoint,
        "query($agent: String!) { agentFeedbackStats_collection(interval: day, where: { agent: $agent }) {
            agent { id } feedbackCreated } }",
        json!({ "agent": agent }),
    );
    let only: Vec<&Value> = one["agentFeedbackStats_collection"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(!only.is_empty() && only.iter().all(|r| r["agent"]["id"] == agent));

    // The points themselves, by id, equal to the logs'.
    let listed = data(
        &endpoint,
        "{ feedbackPoints(first: 1000, orderBy: id) { id timestamp agent { id } value valueDelta
             isRevocation createdCount revokedCount valueForSum }
           validationPoints(first: 1000, orderBy: id) { id isRequest isResponse score responseScore }
           agentRegistrationPoints(first: 1000, orderBy: id) { id agent { id } } }",
        json!({}),
    );
    let mut feedback_points = points.feedback.clone();
    feedback_points.sort_by_key(|p| p.id);
    let got = listed["feedbackPoints"].as_array().unwrap();
    assert_eq!(got.len(), feedback_points.len());
    for (row, point) in got.iter().zip(&feedback_points) {
        assert_eq!(row["id"], point.id.to_string());
        assert_eq!(row["timestamp"], (point.timestamp * 1_000_000).to_string());
        assert_eq!(row["agent"]["id"], point.agent);
        assert_eq!(row["isRevocation"], point.values[1] == 1.0);
        let delta: f64 = row["valueDelta"].as_str().unwrap().parse().unwrap();
        assert!((delta - point.values[3]).abs() < 1e-9, "{row}");
        let counted: f64 = row["valueForSum"].as_str().unwrap().parse().unwrap();
        assert!((counted - point.values[2]).abs() < 1e-9, "{row}");
    }
    assert_eq!(
        listed["validationPoints"].as_array().unwrap().len(),
        points.validations.len()
    );
    assert_eq!(
        listed["agentRegistrationPoints"].as_array().unwrap().len(),
        points.registrations.len()
    );
    let single = data(
        &endpoint,
        "query($id: ID!) { feedbackPoint(id: $id) { id createdCount } }",
        json!({ "id": feedback_points[0].id.to_string() }),
    );
    assert_eq!(single["feedbackPoint"]["createdCount"], "1");

    // graph-node's words for what an aggregation needs.
    for (query, words) in [
        (
            "{ protocolAgentStats_collection { id } }",
            "No value provided for required argument: `interval`",
        ),
        (
            "{ protocolAgentStats_collection(interval: week) { id } }",
            "`Aggregation_interval`",
        ),
        (
            "{ protocolAgentStats_collection(interval: day, current: now) { id } }",
            "`Aggregation_current`",
        ),
        ("{ agents(interval: day) { id } }", "interval"),
    ] {
        let answer = gql(&endpoint, json!([{ "query": query }])).remove(0);
        let message = answer["errors"][0].as_str().unwrap_or_default().to_string();
        assert!(message.contains(words), "{query}: {answer}");
    }
    served.stop().await;
}
