//! Masumi's payment contract on Cardano: escrows locked for agents in ada or a stablecoin, on
//! both contract versions, followed to their outcome (released to the seller, refunded to the
//! buyer, split after a dispute, or still open). No Cardano node runs here: the transactions
//! are built with pycardano in the shapes Masumi's payment service writes and served by the
//! Blockfrost emulator (`tools/cardano/`), every answer checked against Blockfrost's schema.

use crate::support::{self, api::serve, blockfrost::Emulator};
use agentindex_indexer::primitives::CardanoNetwork;
use serde_json::{Value, json};

/// What the API says of an agent's escrows.
const PAYMENTS: &str = "query($id: ID!) { agent(id: $id) { reputation { paymentCount uniquePayers score excludedPayments asOfBlock } masumi {
    paymentCounts { open released refunded disputed }
    payments(first: 10) { escrowKey contractVersion buyer seller unit amount state outcome lockedBlock settledBlock lockTx } } } }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escrow_payments_are_followed_to_their_outcome() {
    let emulator = Emulator::start(&[]).await;
    let info = emulator.info().await;
    let stablecoin = info["stablecoin_unit"].as_str().unwrap().to_string();
    let v2 = emulator.register("v2", json!({"name": "Seller two"})).await;
    let v1 = emulator.register("v1", json!({"name": "Seller one"})).await;
    let lock = |unit: &str, contract: &str, amount: Value| {
        // The stablecoin purchase comes from a second buyer.
        let buyer = if amount[0]["unit"] == "lovelace" {
            "buyer-0"
        } else {
            "buyer-1"
        };
        json!({"agent_unit": unit, "contract": contract, "amount": amount, "buyer": buyer})
    };
    let ada = |quantity: &str| json!([{"unit": "lovelace", "quantity": quantity}]);
    let mut escrows = Vec::new();
    for (unit, contract, amount, outcome) in [
        (&v2, "v2", ada("7000000"), Some("released")),
        (
            &v2,
            "v2",
            json!([{"unit": stablecoin, "quantity": "2500000"}]),
            Some("released"),
        ),
        (&v2, "v2", ada("3000000"), Some("refunded")),
        (&v2, "v2", ada("4000000"), Some("disputed")),
        (&v2, "v2", ada("5000000"), None),
        (&v1, "v1", ada("6000000"), Some("released")),
    ] {
        let locked = emulator
            .control("escrow/lock", lock(unit, contract, amount))
            .await;
        let id = locked["escrow_id"].as_str().unwrap().to_string();
        if let Some(outcome) = outcome {
            emulator
                .control(
                    "escrow/settle",
                    json!({"escrow_id": id, "outcome": outcome}),
                )
                .await;
        }
        escrows.push((id, outcome));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("escrows.db");
    let config = emulator.config(&db, "").await;
    support::index_until_synced(&config).await;
    let served = serve(support::open(&db).await, &config).await;
    let chain = CardanoNetwork::Preprod.chain_id();
    let ask = |unit: &str, stem_len: usize| {
        let id = format!("{chain}:{}", &unit[..stem_len]);
        let base = served.base.clone();
        async move {
            let answer = support::api::post_json(
                &format!("{base}/graphql"),
                &json!({"query": PAYMENTS, "variables": {"id": id}}),
            )
            .await;
            assert!(answer.get("errors").is_none(), "{answer}");
            answer["data"]["agent"].clone()
        }
    };
    let agent_two = ask(&v2, v2.len() - 6).await;
    // Only payouts to the seller count, as payments do on EVM chains: two, from two buyers.
    let reputation = &agent_two["reputation"];
    assert_eq!(
        (
            reputation["paymentCount"].as_i64(),
            reputation["uniquePayers"].as_i64()
        ),
        (Some(2), Some(2)),
        "{reputation}"
    );
    assert!(reputation["score"].as_f64().unwrap() > 0.0, "{reputation}");
    let two = &agent_two["masumi"];
    assert_eq!(
        two["paymentCounts"],
        json!({"open": 1, "released": 2, "refunded": 1, "disputed": 1}),
        "{two}"
    );
    let payments = two["payments"].as_array().unwrap();
    assert_eq!(payments.len(), 5);
    let by_amount = |amount: &str| {
        payments
            .iter()
            .find(|p| p["amount"] == amount)
            .unwrap_or_else(|| panic!("no payment of {amount} in {payments:?}"))
    };
    let token = by_amount("2500000");
    assert_eq!(
        (token["unit"].as_str(), token["outcome"].as_str()),
        (Some(stablecoin.as_str()), Some("released"))
    );
    let open = by_amount("5000000");
    assert_eq!(
        (open["outcome"].clone(), open["state"].clone()),
        (Value::Null, json!("FundsLocked"))
    );
    assert!(open["settledBlock"].is_null());
    let disputed = by_amount("4000000");
    assert_eq!(
        disputed["state"], "Disputed",
        "paid out from the state it left"
    );
    let released = by_amount("7000000");
    assert!(released["settledBlock"].as_i64() > released["lockedBlock"].as_i64());
    assert_eq!(released["contractVersion"], 2);
    let lock_tx = escrows[0].0.split('#').next().unwrap();
    assert_eq!(released["lockTx"], lock_tx);
    let agent_one = ask(&v1, v1.len()).await;
    assert_eq!(agent_one["reputation"]["paymentCount"], 1);
    let one = &agent_one["masumi"];
    assert_eq!(
        one["paymentCounts"]["released"], 1,
        "a V1 escrow names its agent in the seller nonce: {one}"
    );
    assert_eq!(one["payments"][0]["contractVersion"], 1);
    // The reputation feed of the Cardano network, as of any chain: a line per Masumi agent.
    let feed = support::api::feed(&served.base, &format!("?chain={chain}")).await;
    let lines: Vec<Value> = feed
        .body
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "both Masumi agents: {}", feed.body);
    let seller = format!("{chain}:{}", &v2[..v2.len() - 6]);
    let line = lines
        .iter()
        .find(|line| line["agent"] == seller)
        .unwrap_or_else(|| panic!("no line for {seller}: {}", feed.body));
    assert_eq!(line["chain_id"], chain);
    let counted = &line["evaluation"]["payments"];
    assert_eq!(
        (
            counted["payment_count"].as_i64(),
            counted["unique_payers"].as_i64()
        ),
        (Some(2), Some(2)),
        "{line}"
    );
    served.stop().await;
    emulator.assert_valid_answers().await;
}

/// The holder of an agent's registry NFT stands on its side, as an ERC-8004 agent's owner does:
/// an escrow its holder pays, like one its seller pays, is the agent paying itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escrows_paid_from_the_agents_own_wallets_do_not_count() {
    let emulator = Emulator::start(&[]).await;
    // Minted to node-wallet-0, selling through node-wallet-1.
    let unit = emulator.register("v2", json!({"name": "Own buyer"})).await;
    for buyer in ["node-wallet-0", "node-wallet-1", "buyer-0"] {
        let locked = emulator
            .control(
                "escrow/lock",
                json!({"agent_unit": unit, "contract": "v2", "seller": "node-wallet-1",
                       "buyer": buyer, "amount": [{"unit": "lovelace", "quantity": "8000000"}]}),
            )
            .await;
        let id = locked["escrow_id"].as_str().unwrap().to_string();
        emulator
            .control(
                "escrow/settle",
                json!({"escrow_id": id, "outcome": "released"}),
            )
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("own.db");
    let config = emulator.config(&db, "").await;
    support::index_until_synced(&config).await;
    let served = serve(support::open(&db).await, &config).await;
    let chain = CardanoNetwork::Preprod.chain_id();
    let feed = support::api::feed(&served.base, &format!("?chain={chain}")).await;
    let line: Value = serde_json::from_str(feed.body.lines().next().expect("a line")).unwrap();
    let evaluation = &line["evaluation"];
    assert_eq!(
        evaluation["excluded"],
        json!({"owner": 1, "self_payment": 1}),
        "{line}"
    );
    assert_eq!(evaluation["payments"]["payment_count"], 1, "{line}");
    served.stop().await;
    emulator.assert_valid_answers().await;
}
