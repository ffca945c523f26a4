//! Payments on anvil (plain USDC transfers, an EIP-3009 settlement, the owner paying its own
//! agent, a dust payment) read back from the index give the features and payment score computed
//! here by hand.

mod support;

use agentindex_contracts::{Devnet, confirm, demo, signing};
use agentindex_indexer::reputation::{
    AgentSide, Exclusion, ScoreParams, TokenRule, exclusion, features, payment_score,
};
use agentindex_indexer::store::contract_agent_key;
use alloy::primitives::{Address, U256};
use std::collections::BTreeMap;

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
    transfer(&devnet, owner, agent, 5_000_000).await;
    transfer(&devnet, dusty, agent, 500).await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    let key = contract_agent_key(devnet.chain_id(), &agent);
    let credited = store.payments(&key, u64::MAX).await.unwrap();
    assert_eq!(
        credited.len(),
        5,
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
        .map(|p| exclusion(p, &side, &tokens))
        .collect();
    assert_eq!(
        reasons,
        vec![
            None,
            None,
            None,
            Some(Exclusion::Owner),
            Some(Exclusion::Dust)
        ]
    );
    let counted: Vec<_> = credited[..3].to_vec();
    assert!(counted[1].eip3009 && !counted[0].eip3009);

    // As of the block of the last payment, a day later.
    let as_of = credited.last().unwrap().timestamp + 86_400;
    let params = ScoreParams::default();
    let f = features(&counted, &tokens, as_of, params.half_life_secs);
    assert_eq!((f.payment_count, f.x402_count, f.unique_payers), (3, 1, 2));
    assert!((f.volume[&usdc] - 4.5).abs() < 1e-12, "{:?}", f.volume);
    assert!((f.top_payer_share - 2.0 / 3.0).abs() < 1e-12);

    // By hand: alice's two payments and bob's one, each weighing 0.5^(age / 30 days).
    let weight = |t: u64| 0.5f64.powf((as_of - t) as f64 / (30.0 * 86_400.0));
    let alice_n = weight(counted[0].timestamp) + weight(counted[2].timestamp);
    let bob_n = weight(counted[1].timestamp);
    let sum = (1.0 + alice_n).ln() + (1.0 + bob_n).ln();
    let expected = 100.0 * (1.0 - (-sum / 8.0).exp());
    let score = payment_score(&counted, &[], as_of, &params);
    assert!(
        (score.score - expected).abs() < 1e-9,
        "{} vs {expected}",
        score.score
    );
    assert!(
        (score.score - 19.6).abs() < 0.5,
        "about 19.6: {}",
        score.score
    );
}
