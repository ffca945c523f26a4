//! The README's demo command on a fresh checkout: `agentindex dev` starts a chain, registers
//! its demo agents with documents from its own server, indexes and serves them; an SDK client
//! (graphql-request) then finds them by skill, and SIGTERM stops it all cleanly. The explorer's
//! address is the first it prints.

use crate::support::dev::Dev;
use crate::support::graphql::data;

use serde_json::json;
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_command_serves_demo_agents_an_sdk_finds_by_skill() {
    let mut dev = Dev::start();
    assert!(
        dev.explorer.starts_with("http://127.0.0.1:") && dev.explorer.ends_with('/'),
        "{}",
        dev.explorer
    );
    assert_eq!(dev.graphiql, format!("{}graphql", dev.explorer));
    let graphiql = dev.graphiql.clone();
    let example = dev.lines.next().unwrap().unwrap();
    assert!(
        example.starts_with("try"),
        "example queries follow: {example}"
    );

    let translators = dev.translators_once_read();
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
    assert_eq!(
        sources,
        BTreeSet::from(["ERC8004", "FACTORY", "MASUMI", "REGISTRY"]),
        "translators of every path, Masumi on Cardano among them"
    );
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

    let status = dev.terminate();
    assert_eq!(status.code(), Some(0));
}
