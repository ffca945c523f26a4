//! Subscriptions driven by the npm `graphql-ws` client: they report committed registrations,
//! payments and reputation changes, replay from `sinceBlock` without gap or repeat, and wait for
//! finality so a payment a reorg undoes is never reported.

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use alloy::primitives::U256;
use serde_json::json;
use support::graphql::{events_of, subscriber};

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
    for (payer, amount) in [(a[5], 1_000_000u64), (a[6], 2_000_000)] {
        let usdc = devnet.usdc();
        let send = usdc.transfer(agent, U256::from(amount)).from(payer);
        confirm("paying the live agent", send.send()).await.unwrap();
    }
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
    assert_eq!(rescored[0]["reputationChanged"]["id"], key.as_str());
    assert_eq!(
        rescored[0]["reputationChanged"]["reputation"],
        json!({ "paymentCount": 2, "uniquePayers": 2 })
    );
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
    let pay = |payer: alloy::primitives::Address, amount: u64| {
        let usdc = devnet.usdc();
        async move {
            let send = usdc.transfer(agent, U256::from(amount)).from(payer);
            confirm("paying the agent", send.send()).await.unwrap();
        }
    };

    // Paid by a[5]; indexed at the tip, not yet final; then a reorg replaces that block with
    // one where a[6] pays instead.
    pay(a[5], 5).await;
    support::chain::wait_for_head(&devnet, &store, limit).await;
    let instead = {
        use alloy::sol_types::SolCall;
        let input = agentindex_contracts::TestUSDC::transferCall {
            to: agent,
            value: U256::from(6u64),
        }
        .abi_encode();
        (a[6], devnet.deployment().usdc, input.into())
    };
    support::chain::reorg(&devnet, 1, &[(instead, 0)]).await;
    support::chain::mine(&devnet, 4).await;
    support::chain::wait_for_head(&devnet, &store, limit).await;
    // A later payment, made final too: the stream must hold a[6]'s then a[7]'s, nothing else.
    pay(a[7], 7).await;
    support::chain::mine(&devnet, 4).await;

    let events = events_of(payments);
    let got: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e["newPayments"]["payer"].as_str().unwrap().to_string(),
                e["newPayments"]["amount"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (format!("{:#x}", a[6]), "6".to_string()),
            (format!("{:#x}", a[7]), "7".to_string())
        ],
        "the undone payment never fires, the others fire once each"
    );
    indexing.stop().await;
    served.stop().await;
}
