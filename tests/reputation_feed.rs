//! The reputation feed as operators compare it: two independent instances (one in-process server,
//! one `agentindex run` process, each with its own database) index the same anvil chain and
//! serve byte-identical feeds whose digest header is the SHA-256 of the body, at the indexed
//! block and at the final epoch boundary each indexer stored by itself; after a reorg both move
//! to the same new digest, and the stored feed below the reorg stays as it was.

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use agentindex_indexer::feed::Snapshot;
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::store::StoreRead;
use alloy::primitives::{B256, U256};
use std::time::Duration;
use support::api::feed;
use support::chain;

const DEPTH: u64 = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_publish_one_digest_and_move_together_on_a_reorg() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let agent = demo::via_factory(&devnet, a[1], demo::sample_card(&devnet, "Fed", None))
        .await
        .unwrap();
    let erc8004 = demo::via_erc8004(&devnet, a[2], "ipfs://feed")
        .await
        .unwrap();
    for (payer, amount) in [(a[5], 1_000_000u64), (a[6], 2_000_000), (a[5], 500_000)] {
        let usdc = devnet.usdc();
        let send = usdc.transfer(agent, U256::from(amount)).from(payer);
        confirm("paying the agent", send.send()).await.unwrap();
    }
    confirm(
        "giving feedback",
        devnet
            .reputation()
            .giveFeedback(
                erc8004,
                87,
                0,
                "quality".into(),
                String::new(),
                String::new(),
                String::new(),
                B256::ZERO,
            )
            .from(a[7])
            .send(),
    )
    .await
    .unwrap();
    chain::mine(&devnet, DEPTH + 2).await;

    // Instance one: indexed in this process, served by the API library.
    let dir = tempfile::tempdir().unwrap();
    let db_one = dir.path().join("one.db");
    let mut config_one = support::config(&devnet, &db_one, DEPTH);
    config_one.chains[0].poll_interval_ms = 20;
    // A trust rank that moves every other block, seeded with one payer: the feed carries it, at
    // the head and at blocks of earlier epochs.
    config_one.reputation.trust.interval_blocks = 2;
    config_one.reputation.trust.seeds = vec![a[5]];
    config_one.reputation.feeds_kept = 10;
    // This test is the operator comparing feeds, many times over: its own client, not counted
    // against a share of feeds.
    config_one.api.unlimited_clients = vec!["127.0.0.1/32".parse().unwrap()];
    let store_one = support::open(&db_one).await;
    let indexing = support::api::index_in_background(&config_one);
    let served = support::api::serve(store_one.clone(), &config_one).await;
    let one = served.base.clone();

    // Instance two: the `agentindex run` binary on a database of its own.
    let db_two = dir.path().join("two.db");
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db_two, DEPTH, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\nunlimited_clients = [\"127.0.0.1/32\"]\n"
        + &format!(
            "\n[reputation]\nfeeds_kept = 10\n\n[reputation.trust]\ninterval_blocks = 2\nseeds = [\"{:#x}\"]\n",
            a[5]
        );
    let config_two = dir.path().join("two.toml");
    std::fs::write(&config_two, toml).unwrap();
    let (_run, two) = support::binary::start(&["run", "--config"], &config_two);
    let store_two = support::open(&db_two).await;

    let limit = Duration::from_secs(60);
    chain::wait_for_head(&devnet, &store_one, limit).await;
    chain::wait_for_head(&devnet, &store_two, limit).await;
    let head = support::indexed_block(&store_one, devnet.chain_id()).await;
    let at_head = format!("?block={head}");
    let (first_one, first_two) = (feed(&one, &at_head).await, feed(&two, &at_head).await);
    assert_eq!(
        first_one.digest, first_two.digest,
        "same chain, same block, same feed"
    );
    assert_eq!(first_one.body, first_two.body);
    let lines: Vec<serde_json::Value> = first_one
        .body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "both agents are listed: {}", first_one.body);
    let keys: Vec<&str> = lines.iter().map(|l| l["agent"].as_str().unwrap()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "agents come in key order");
    let paid = lines
        .iter()
        .find(|l| l["agent"] == AgentKey::contract(devnet.chain_id(), agent).to_string())
        .expect("the paid agent is in the feed");
    assert_eq!(paid["evaluation"]["payments"]["payment_count"], 3);
    assert_eq!(paid["evaluation"]["payments"]["unique_payers"], 2);
    assert!(paid["score"].as_f64().unwrap() > 0.0);
    assert!(
        paid["evaluation"]["trust"]["relative"].as_f64().unwrap() > 0.0,
        "the seed's trust reaches the agent it pays: {paid}"
    );
    // The latest feed lists what is stored for each agent (what GraphQL's `reputation` shows).
    for (text, line) in first_one.body.lines().zip(&lines) {
        let key = line["agent"].as_str().unwrap();
        let stored = store_one.reputation(key).await.unwrap().unwrap();
        assert_eq!(text, serde_jcs::to_string(&stored).unwrap(), "{key}");
        assert!(line["as_of_block"].as_u64().unwrap() <= head);
    }
    let rated = lines
        .iter()
        .find(|l| l["agent"] != AgentKey::contract(devnet.chain_id(), agent).to_string())
        .unwrap();
    assert_eq!(rated["evaluation"]["feedback"]["overall"]["average"], 87.0);
    assert_eq!(
        feed(&one, "").await.digest,
        first_one.digest,
        "without ?block the feed is the latest, as at the indexed block"
    );
    // The final epoch boundary's feed, which each indexer stores by itself: the same on both,
    // and what the feed computes at that block.
    let finalized = store_one
        .progress(devnet.chain_id())
        .await
        .unwrap()
        .unwrap()
        .finalized_block;
    let boundary = finalized - finalized % 2;
    let stored_one = support::api::stored_feed(&one, boundary, limit).await;
    let stored_two = support::api::stored_feed(&two, boundary, limit).await;
    assert_eq!(stored_one.body, stored_two.body, "one stored feed on both");
    let rules = agentindex_indexer::reputation::ReputationRules::of_chain(
        &config_one.chains[0],
        &config_one.reputation,
    );
    let snapshot = Snapshot::AsOf {
        block: boundary,
        rules: &rules,
    };
    let computed = agentindex_indexer::feed::body(&store_one, devnet.chain_id(), snapshot)
        .await
        .unwrap();
    assert_eq!(stored_one.body.as_bytes(), computed, "stored as computed");
    assert!(
        stored_one
            .body
            .lines()
            .all(|l| l.contains(&format!("\"as_of_block\":{boundary},"))),
        "every line is as of the boundary: {}",
        stored_one.body
    );

    // A reorg replaces the newest three blocks with a branch where a new payer pays the agent.
    chain::reorg(
        &devnet,
        3,
        &[(chain::usdc_payment(&devnet, a[8], agent, 3_000_000), 1)],
    )
    .await;
    chain::wait_for_head(&devnet, &store_one, limit).await;
    chain::wait_for_head(&devnet, &store_two, limit).await;
    let (after_one, after_two) = (feed(&one, &at_head).await, feed(&two, &at_head).await);
    assert_eq!(
        after_one.digest, after_two.digest,
        "both moved to the same feed"
    );
    assert_ne!(
        after_one.digest, first_one.digest,
        "the new branch changed the feed"
    );
    let line = after_one
        .body
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["agent"] == AgentKey::contract(devnet.chain_id(), agent).to_string())
        .unwrap();
    assert_eq!(line["evaluation"]["payments"]["unique_payers"], 3);
    for base in [&one, &two] {
        assert_eq!(
            feed(base, &format!("?block={boundary}")).await.digest,
            stored_one.digest,
            "the stored feed below the reorg stays as it was"
        );
    }

    indexing.stop().await;
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_feed_requests_get_a_clear_error() {
    let devnet = Devnet::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = support::config(&devnet, &db, 0);
    support::index_until_synced(&config).await;
    let store = support::open(&db).await;
    let indexed = support::indexed_block(&store, devnet.chain_id()).await;
    let stored = indexed - 1;
    support::store_feeds(&config, &[stored]).await;
    let served = support::api::serve(store, &config).await;
    let base = format!("{}/feeds/reputation.jsonl", served.base);
    let unstored = format!("?block={}", indexed - 2);
    let not_stored = format!("the epoch boundaries stored ({stored})");
    for (query, status, names) in [
        ("?block=abc", 400, "block=\"abc\""),
        ("?block=-1", 400, "block=\"-1\""),
        (
            &format!("?block={}", indexed + 1) as &str,
            400,
            "not indexed yet",
        ),
        ("?chain=999", 404, "chain 999"),
        (&unstored as &str, 404, &not_stored as &str),
    ] {
        let response = reqwest::get(format!("{base}{query}")).await.unwrap();
        assert_eq!(response.status(), status, "{query}");
        let body: serde_json::Value = response.json().await.unwrap();
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(names), "{query}: {error}");
    }
    // A block without a feed is told which blocks have one, in fields too.
    let response = reqwest::get(format!("{base}{unstored}")).await.unwrap();
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["stored_blocks"], serde_json::json!([stored]), "{body}");
    assert_eq!(body["indexed_block"], indexed, "{body}");
    let response = reqwest::get(format!("{base}?block={stored}"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "the stored block is served");
    served.stop().await;
}
