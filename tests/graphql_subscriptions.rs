//! Subscriptions driven by the npm `graphql-ws` client: they report committed registrations,
//! payments and reputation changes, replay from `sinceBlock` without gap or repeat, and wait for
//! finality so a payment a reorg undoes is never reported.

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use alloy::primitives::U256;
use alloy::providers::Provider;
use serde_json::json;
use support::doc_server::Route;
use support::graphql::{events_of, subscriber};

/// Pays `agent` 1 USDC from account 5, then 2 USDC from account 6.
async fn pay_from_two_accounts(devnet: &Devnet, agent: alloy::primitives::Address) {
    let a = devnet.accounts();
    let usdc = devnet.usdc();
    for (payer, amount) in [(a[5], 1_000_000u64), (a[6], 2_000_000)] {
        let send = usdc.transfer(agent, U256::from(amount)).from(payer);
        confirm("paying the agent", send.send()).await.unwrap();
    }
}

/// `event` is `key`'s reputation with both payments of [`pay_from_two_accounts`] counted.
fn assert_scored_on_both_payments(event: &serde_json::Value, key: &str) {
    assert_eq!(event["reputationChanged"]["id"], key);
    assert_eq!(
        event["reputationChanged"]["reputation"],
        json!({ "paymentCount": 2, "uniquePayers": 2 })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_report_committed_registrations_payments_and_reputation() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 0);
    config.chains[0].poll_interval_ms = 20;
    let store = support::open(&db).await;
    let indexing = support::api::index_in_background(&config);
    let served = support::api::serve(store.clone(), &config).await;
    let address = served.base.trim_start_matches("http://").to_string();
    support::chain::wait_for_head(&devnet, &store, std::time::Duration::from_secs(30)).await;
    let since = support::indexed_block(&store, devnet.chain_id()).await;

    // What happens on chain after `since`: a factory agent paid twice, and an ERC-8004 agent
    // the filter leaves out.
    let agent = demo::via_factory(&devnet, a[1], demo::sample_card(&devnet, "Live", None))
        .await
        .unwrap();
    demo::via_erc8004(&devnet, a[2], "data:application/json,{}")
        .await
        .unwrap();
    let key = format!("{}:{agent:#x}", devnet.chain_id());
    let ws = format!("ws://{address}/graphql/ws");
    let registered = subscriber(
        &ws,
        "subscription($since: Int) { agentsChanged(filter: { sources: [FACTORY] }, sinceBlock: $since) { id name source } }",
        json!({ "since": since }),
        1,
    );
    let payments = subscriber(
        &ws,
        "subscription($id: ID, $since: Int) { newPayments(agentId: $id, sinceBlock: $since) { agentId payer amount x402 } }",
        json!({ "id": key, "since": since }),
        2,
    );
    pay_from_two_accounts(&devnet, agent).await;
    // A reputation row is replaced as it is rescored, so what a late subscriber replays is the
    // agent as it stands: both payments counted.
    support::chain::wait_for_head(&devnet, &store, std::time::Duration::from_secs(30)).await;
    let rescored = subscriber(
        &ws,
        "subscription($id: ID!, $since: Int) { reputationChanged(agentId: $id, sinceBlock: $since) { id reputation { paymentCount uniquePayers } } }",
        json!({ "id": key, "since": since }),
        1,
    );

    let registered = events_of(registered);
    assert_eq!(registered[0]["agentsChanged"]["id"], key);
    assert_eq!(registered[0]["agentsChanged"]["source"], "FACTORY");
    let payments = events_of(payments);
    let paid: Vec<(&str, &str)> = payments
        .iter()
        .map(|p| {
            (
                p["newPayments"]["payer"].as_str().unwrap(),
                p["newPayments"]["amount"].as_str().unwrap(),
            )
        })
        .collect();
    let (five, six) = (format!("{:#x}", a[5]), format!("{:#x}", a[6]));
    assert_eq!(
        paid,
        vec![(five.as_str(), "1000000"), (six.as_str(), "2000000")]
    );
    let rescored = events_of(rescored);
    assert_scored_on_both_payments(&rescored[0], &key);
    indexing.stop().await;
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_wait_for_finality_and_never_report_a_payment_a_reorg_undid() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let agent = demo::via_factory(&devnet, a[1], demo::sample_card(&devnet, "Final", None))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 3);
    config.chains[0].poll_interval_ms = 20;
    let store = support::open(&db).await;
    let indexing = support::api::index_in_background(&config);
    let served = support::api::serve(store.clone(), &config).await;
    let address = served.base.trim_start_matches("http://").to_string();
    let limit = std::time::Duration::from_secs(30);
    support::chain::wait_for_head(&devnet, &store, limit).await;
    let since = support::indexed_block(&store, devnet.chain_id()).await;
    let key = format!("{}:{agent:#x}", devnet.chain_id());
    let payments = subscriber(
        &format!("ws://{address}/graphql/ws"),
        "subscription($id: ID, $since: Int) { newPayments(agentId: $id, sinceBlock: $since) { payer amount } }",
        json!({ "id": key, "since": since }),
        2,
    );
    // Paid by a[5]; indexed at the tip, not yet final; then a reorg replaces that block with
    // one where a[6] pays instead; then a[7] pays. The stream must hold a[6]'s then a[7]'s,
    // nothing else.
    let expected = support::chain::pay_reorg_pay(&devnet, &store, agent).await;
    assert_eq!(
        support::graphql::payments_heard(&events_of(payments)),
        expected,
        "the undone payment never fires, the others fire once each"
    );
    indexing.stop().await;
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_new_card_matches_the_filter_is_reported_once_fetched() {
    let devnet = Devnet::start().await.unwrap();
    let server = support::doc_server::DocServer::start().await;
    let card = |skill: &str| {
        json!({
            "name": "Shifting", "description": "changes what it does", "version": "1.0.0",
            "supportedInterfaces": [{"url": "https://agents.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": skill, "name": skill, "description": skill, "tags": []}]
        })
        .to_string()
        .into_bytes()
    };
    let registration = |card_url: &str| {
        json!({
            "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
            "name": "Shifting", "description": "changes what it does",
            "services": [{"name": "A2A", "endpoint": card_url, "version": "1.0"}]
        })
        .to_string()
        .into_bytes()
    };
    let card_1 = server.route(
        "/card-1.json",
        Route::Body("application/json", card("translate")),
    );
    let reg_1 = server.route(
        "/reg-1.json",
        Route::Body("application/json", registration(&card_1)),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 0);
    config.chains[0].poll_interval_ms = 20;
    config.documents.allow_private_addresses = true;
    config.documents.allow_http = true;
    config.documents.retry_secs = 1;
    let store = support::open(&db).await;
    let indexing = support::api::index_with_documents_in_background(&config);
    let served = support::api::serve(store.clone(), &config).await;
    let endpoint = format!("{}/graphql", served.base);
    let id = demo::via_erc8004(&devnet, devnet.accounts()[1], &reg_1)
        .await
        .unwrap();
    let key = format!(
        "{}:{:#x}:{id}",
        devnet.chain_id(),
        devnet.deployment().identity
    );
    let with_skill = |skill: &str| {
        support::graphql::data(
            &endpoint,
            "query($skill: String!) { agents(filter: { skill: $skill }) { totalCount } }",
            json!({ "skill": skill }),
        )["agents"]["totalCount"]
            .as_i64()
            .unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while with_skill("translate") == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the first card was never read"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    // Subscribed for agents that summarize (none does yet), and for any change.
    let ws = format!(
        "ws://{}/graphql/ws",
        served.base.trim_start_matches("http://")
    );
    let mut summarizers = subscriber(
        &ws,
        "subscription { agentsChanged(filter: { skill: \"summarize\" }) { id name skills { id } } }",
        json!({}),
        1,
    );
    let mut anything = subscriber(&ws, "subscription { agentsChanged { id } }", json!({}), 1);
    support::graphql::wait_connected(&mut summarizers);
    support::graphql::wait_connected(&mut anything);
    // The agent moves to a registration file whose card cannot be fetched yet: the on-chain
    // change is reported, and the agent does not summarize.
    let card_2 = server.route("/card-2.json", Route::Status(503));
    let reg_2 = server.route(
        "/reg-2.json",
        Route::Body("application/json", registration(&card_2)),
    );
    confirm(
        "setAgentURI",
        devnet
            .identity()
            .setAgentURI(id, reg_2)
            .from(devnet.accounts()[1])
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(events_of(anything)[0]["agentsChanged"]["id"], key);
    // The card comes up; its retry, not the chain, makes the agent a summarizer.
    server.route(
        "/card-2.json",
        Route::Body("application/json", card("summarize")),
    );
    let events = events_of(summarizers);
    assert_eq!(events.len(), 1);
    let agent = &events[0]["agentsChanged"];
    assert_eq!(agent["id"], key);
    assert_eq!(
        agent["skills"],
        json!([{ "id": "summarize" }]),
        "reported with its new card"
    );
    assert_eq!(with_skill("translate"), 0);
    indexing.stop().await;
    served.stop().await;
}

/// During a backfill agents are rescored only when it reaches the head, so their reputation rows
/// are written as of blocks indexed long before. A subscriber listening during the backfill still
/// hears of the agent's reputation: the feed publishes no further than the block up to which
/// reputation is settled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reputation_settled_at_the_end_of_a_backfill_reaches_a_live_subscriber() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let agent = demo::via_factory(&devnet, a[1], demo::sample_card(&devnet, "Early", None))
        .await
        .unwrap();
    pay_from_two_accounts(&devnet, agent).await;
    // Many blocks after the payments, fetched two at a time: the feed polls several times while
    // the backfill is on its way to the head.
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_mine".into(), ("0x64",))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 0);
    config.chains[0].max_block_range = 2;
    let store = support::open(&db).await;
    let served = support::api::serve(store.clone(), &config).await;
    let address = served.base.trim_start_matches("http://").to_string();
    let key = format!("{}:{agent:#x}", devnet.chain_id());
    let mut rescored = subscriber(
        &format!("ws://{address}/graphql/ws"),
        "subscription($id: ID!, $since: Int) { reputationChanged(agentId: $id, sinceBlock: $since) { id reputation { paymentCount uniquePayers } } }",
        json!({ "id": key, "since": 0 }),
        1,
    );
    support::graphql::wait_connected(&mut rescored);
    let indexing = support::api::index_in_background(&config);

    let rescored = events_of(rescored);
    assert_eq!(rescored.len(), 1, "{rescored:?}");
    assert_scored_on_both_payments(&rescored[0], &key);
    indexing.stop().await;
    served.stop().await;
}
