//! Payments on anvil (plain USDC transfers, an EIP-3009 settlement, an x402 payment signed by the
//! official x402 client and settled as a facilitator would, the owner paying its own agent, a dust
//! payment) read back from the index give the features and payment score computed here by hand.

use crate::support;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::{Devnet, confirm, demo, signing};
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::{
    AgentSide, Exclusion, ScoreParams, TokenRule, exclusion, features, payment_score,
};
use alloy::primitives::{Address, B256, Bytes, U256};
use std::collections::BTreeMap;

/// Signs a payment of `amount` to `to` with the official x402 Python client for account
/// `payer_index`, and settles it with `transferWithAuthorization` from `facilitator`; returns the
/// authorisation's nonce.
async fn settle_x402(
    devnet: &Devnet,
    payer_index: usize,
    facilitator: Address,
    to: Address,
    amount: u64,
) -> B256 {
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let key = format!(
        "0x{}",
        alloy::hex::encode(devnet.signer(payer_index).to_bytes())
    );
    let usdc = devnet.deployment().usdc;
    let output = std::process::Command::new(tools.join(".venv/bin/python"))
        .arg(tools.join("x402/authorize.py"))
        .args([
            key,
            devnet.chain_id().to_string(),
            usdc.to_string(),
            "USD Coin".into(),
            "2".into(),
            to.to_string(),
            amount.to_string(),
        ])
        .output()
        .expect("running the x402 client (run scripts/install-tools)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let payload: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let auth = &payload["authorization"];
    let field = |name: &str| auth[name].as_str().unwrap().to_string();
    let nonce: B256 = field("nonce").parse().unwrap();
    let signature: Bytes = payload["signature"].as_str().unwrap().parse().unwrap();
    confirm(
        "settling the x402 payment",
        devnet
            .usdc()
            .transferWithAuthorization_0(
                field("from").parse().unwrap(),
                field("to").parse().unwrap(),
                field("value").parse().unwrap(),
                field("validAfter").parse().unwrap(),
                field("validBefore").parse().unwrap(),
                nonce,
                signature,
            )
            .from(facilitator)
            .send(),
    )
    .await
    .unwrap();
    nonce
}

async fn transfer(devnet: &Devnet, from: Address, to: Address, amount: u64) {
    confirm(
        "paying in USDC",
        devnet
            .usdc()
            .transfer(to, U256::from(amount))
            .from(from)
            .send(),
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn features_and_score_of_an_agent_paid_on_chain_match_a_hand_computation() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let (owner, alice, bob, dusty, facilitator) = (a[1], a[2], a[3], a[4], a[8]);
    let agent = demo::via_factory(&devnet, owner, demo::sample_card(&devnet, "Paid", None))
        .await
        .unwrap();

    transfer(&devnet, alice, agent, 2_500_000).await;
    let bob_index = a.iter().position(|x| *x == bob).unwrap();
    demo::pay_with_authorization(
        &devnet,
        bob_index,
        facilitator,
        agent,
        U256::from(1_000_000u64),
        signing::nonce("reputation-1"),
    )
    .await
    .unwrap();
    transfer(&devnet, alice, agent, 1_000_000).await;
    // Carol pays through the official x402 client, a facilitator settles it.
    let carol_index = 5;
    let carol = a[carol_index];
    let x402_nonce = settle_x402(&devnet, carol_index, facilitator, agent, 750_000).await;
    transfer(&devnet, owner, agent, 5_000_000).await;
    transfer(&devnet, dusty, agent, 500).await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    let key = AgentKey::contract(devnet.chain_id(), agent).to_string();
    let credited = store.payments(&key, u64::MAX).await.unwrap();
    assert_eq!(
        credited.len(),
        6,
        "every transfer into the agent is credited"
    );
    let as_of_second = store.payments(&key, credited[1].block).await.unwrap();
    assert_eq!(
        as_of_second,
        credited[..2],
        "payments after the block are not read"
    );

    let usdc = devnet.deployment().usdc;
    let tokens = BTreeMap::from([(
        usdc,
        TokenRule {
            decimals: 6,
            dust: U256::from(1_000u64),
        },
    )]);
    let side = AgentSide {
        owner: Some(owner),
        ..AgentSide::default()
    };
    let reasons: Vec<Option<Exclusion>> = credited
        .iter()
        .map(|p| exclusion(p, &side, &tokens, &Default::default()))
        .collect();
    assert_eq!(
        reasons,
        vec![
            None,
            None,
            None,
            None,
            Some(Exclusion::Owner),
            Some(Exclusion::Dust)
        ]
    );
    let counted: Vec<_> = credited[..4].to_vec();
    assert!(counted[1].x402 && !counted[0].x402);
    assert!(
        counted[3].x402 && counted[3].payer == carol,
        "settled from the x402 client's payload"
    );
    let nonce: Option<String> = sqlx::query_scalar("SELECT nonce FROM payments WHERE payer = $1")
        .bind(format!("{carol:#x}"))
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(nonce, Some(format!("{x402_nonce:#x}")));

    // As of the block of the last payment, a day later.
    let as_of = credited.last().unwrap().timestamp + 86_400;
    let params = ScoreParams::default();
    let f = features(&counted, &tokens, as_of, params.half_life_secs);
    assert_eq!((f.payment_count, f.x402_count, f.unique_payers), (4, 2, 3));
    assert!((f.volume[&usdc] - 5.25).abs() < 1e-12, "{:?}", f.volume);
    assert!((f.top_payer_share - 0.5).abs() < 1e-12);

    // By hand: alice's two payments and bob's one, each weighing 0.5^(age / 30 days).
    let weight = |t: u64| 0.5f64.powf((as_of - t) as f64 / (30.0 * 86_400.0));
    let alice_n = weight(counted[0].timestamp) + weight(counted[2].timestamp);
    let bob_n = weight(counted[1].timestamp);
    let carol_n = weight(counted[3].timestamp);
    let sum = (1.0 + alice_n).ln() + (1.0 + bob_n).ln() + (1.0 + carol_n).ln();
    let expected = 100.0 * (1.0 - (-sum / 8.0).exp());
    let score = payment_score(&counted, &[], as_of, &params, None);
    assert!(
        (score.score - expected).abs() < 1e-9,
        "{} vs {expected}",
        score.score
    );
    assert!(
        (score.score - 26.3).abs() < 0.5,
        "about 26.3: {}",
        score.score
    );

    // The stored row: as of the last payment's block, with the exclusions by reason.
    let stored = store.reputation(&key).await.unwrap().expect("a stored row");
    let last = credited.last().unwrap();
    assert_eq!(
        (stored.as_of_block, stored.as_of_timestamp),
        (last.block, last.timestamp)
    );
    let e = &stored.evaluation;
    assert_eq!(
        (e.payments.payment_count, e.payments.unique_payers),
        (5, 4),
        "the config sets no dust threshold, so the small payment counts"
    );
    assert_eq!(e.excluded, BTreeMap::from([(Exclusion::Owner, 1)]));
    let not_owner: Vec<_> = credited
        .iter()
        .filter(|p| p.payer != owner)
        .cloned()
        .collect();
    let at_last = payment_score(&not_owner, &[], last.timestamp, &params, None).score;
    assert!((e.payment_score.score - at_last).abs() < 1e-9);
    assert!(
        (stored.score - at_last).abs() < 1e-9,
        "with payments only, the composite is the payment score"
    );
    store.close().await;

    // A feed stored under the rules in force (as the indexer stores each final epoch boundary's).
    let original = support::config(&devnet, &db, 0);
    let indexed = support::indexed_block(&support::open(&db).await, devnet.chain_id()).await;
    support::store_feeds(&original, &[indexed - 1]).await;

    // A dust threshold added to the config rescores the stored rows on the next start, to what a
    // fresh index under the new rules holds, and drops the feed stored under the old rules.
    let mut dusty_config = support::config(&devnet, &db, 0);
    dusty_config.chains[0].payment_tokens[0].dust = Some("0.001".into());
    support::index_until_synced(&dusty_config).await;
    let store = support::open(&db).await;
    assert_eq!(
        store.stored_feeds(devnet.chain_id()).await.unwrap(),
        [],
        "no feed scored under the old rules is left"
    );
    let rescored = store.reputation(&key).await.unwrap().unwrap();
    assert_eq!(
        rescored.evaluation.excluded,
        BTreeMap::from([(Exclusion::Owner, 1), (Exclusion::Dust, 1)])
    );
    store.close().await;
    let fresh = dir.path().join("fresh.db");
    let mut fresh_config = support::config(&devnet, &fresh, 0);
    fresh_config.chains[0].payment_tokens[0].dust = Some("0.001".into());
    support::index_until_synced(&fresh_config).await;
    support::assert_same_index(
        &support::dump(&db).await,
        &support::dump(&fresh).await,
        "rescored after a rules change",
    );
}
