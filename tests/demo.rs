//! The README's demo command on a fresh checkout: `agentindex dev` starts a chain, registers
//! its demo agents with documents from its own server, indexes and serves them; an SDK client
//! (graphql-request) then finds them by skill, and SIGTERM stops it all cleanly.

use crate::support::graphql::data;

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BY_SKILL: &str = "query($skill: String!) { agents(filter: { skill: $skill }, first: 100) {
    totalCount edges { node { name source x402 skills { id } card { signature } } } } }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_command_serves_demo_agents_an_sdk_finds_by_skill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .args(["dev", "--listen", "127.0.0.1:0"])
        .current_dir(dir.path())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let graphiql = loop {
        let line = lines
            .next()
            .expect("agentindex dev printed its GraphiQL address")
            .unwrap();
        if let Some(url) = line.strip_prefix("GraphiQL") {
            break url.trim().to_string();
        }
    };
    assert!(graphiql.starts_with("http://127.0.0.1:"), "{graphiql}");
    let example = lines.next().unwrap().unwrap();
    assert!(
        example.starts_with("try"),
        "example queries follow: {example}"
    );

    // Indexing and document fetching run in the background (an ERC-8004 agent's card is
    // reached through its registration file, one fetch later): wait until translators from
    // every path are found with their cards read (each then has a signature status).
    let deadline = Instant::now() + Duration::from_secs(120);
    let translators = loop {
        let found = data(&graphiql, BY_SKILL, json!({ "skill": "translate" }))["agents"].clone();
        let nodes: Vec<Value> = found["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["node"].clone())
            .collect();
        let paths: BTreeSet<&str> = nodes.iter().filter_map(|n| n["source"].as_str()).collect();
        if paths.len() == 3 && nodes.iter().all(|n| n["card"]["signature"].is_string()) {
            break nodes;
        }
        assert!(
            Instant::now() < deadline,
            "demo translators not indexed in time: {found}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    for agent in &translators {
        assert!(
            agent["skills"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["id"] == "translate"),
            "{agent}"
        );
    }
    let sources: BTreeSet<&str> = translators
        .iter()
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, BTreeSet::from(["ERC8004", "FACTORY", "REGISTRY"]));
    let signatures: BTreeSet<&str> = translators
        .iter()
        .map(|a| a["card"]["signature"].as_str().unwrap())
        .collect();
    assert!(
        signatures.contains("valid") && signatures.contains("unsigned"),
        "{signatures:?}"
    );

    let all = data(
        &graphiql,
        "{ all: agents { totalCount } paying: agents(filter: { x402: true }) { totalCount }
           best: agents(orderBy: REPUTATION, first: 1) { edges { node { reputation { score paymentCount } } } } }",
        json!({}),
    );
    let total = all["all"]["totalCount"].as_i64().unwrap();
    assert!(total >= 24, "a few dozen demo agents, got {total}");
    let paying = all["paying"]["totalCount"].as_i64().unwrap();
    assert!(
        paying > 0 && paying < total,
        "some take x402, some not: {paying}/{total}"
    );
    let best = &all["best"]["edges"][0]["node"]["reputation"];
    assert!(
        best["score"].as_f64().unwrap() > 0.0 && best["paymentCount"].as_i64().unwrap() > 0,
        "payments made reputations: {best}"
    );

    let terminated = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "still running after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0));
}
