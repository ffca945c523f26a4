//! ERC-8004 `getSummary` reproduced from the index equals the contract's own answer, for 20
//! agents with random feedback: values across the whole range, every decimals from 0 to 18,
//! tags, revocations, and client lists with repeats.

use crate::support;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::{Devnet, confirm, demo};
use agentindex_indexer::reputation::get_summary;
use alloy::primitives::{Address, B256};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const TAGS1: [&str; 3] = ["", "speed", "quality"];
const TAGS2: [&str; 3] = ["", "a", "b"];

fn random_value(rng: &mut StdRng) -> i128 {
    let magnitude: i128 = match rng.random_range(0..4) {
        0 => rng.random_range(0..100),
        1 => rng.random_range(0..1_000_000_000),
        2 => rng.random_range(0..10i128.pow(20)),
        _ => rng.random_range(0..10i128.pow(37)),
    };
    if rng.random_bool(0.3) {
        -magnitude
    } else {
        magnitude
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_summary_from_the_index_equals_the_contracts() {
    let devnet = Devnet::start().await.unwrap();
    let accounts = devnet.accounts();
    let clients: Vec<Address> = accounts[1..=6].to_vec();
    let reputation = devnet.reputation();
    let mut rng = StdRng::seed_from_u64(8004);

    let mut agents = Vec::new();
    for round in 0..20 {
        let id = demo::via_erc8004(&devnet, accounts[9], &format!("ipfs://summary-{round}"))
            .await
            .unwrap();
        let mut given: Vec<(Address, u64)> = Vec::new();
        for _ in 0..rng.random_range(3..10) {
            let client = clients[rng.random_range(0..clients.len())];
            let decimals = rng.random_range(0..=18u8);
            confirm(
                "giving feedback",
                reputation
                    .giveFeedback(
                        id,
                        random_value(&mut rng),
                        decimals,
                        TAGS1[rng.random_range(1..3)].into(),
                        TAGS2[rng.random_range(0..3)].into(),
                        String::new(),
                        String::new(),
                        B256::ZERO,
                    )
                    .from(client)
                    .send(),
            )
            .await
            .unwrap();
            let index = given.iter().filter(|(c, _)| *c == client).count() as u64 + 1;
            given.push((client, index));
        }
        for (client, index) in &given {
            if rng.random_bool(0.3) {
                confirm(
                    "revoking feedback",
                    reputation.revokeFeedback(id, *index).from(*client).send(),
                )
                .await
                .unwrap();
            }
        }
        agents.push(id);
    }

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    let identity = devnet.deployment().identity;

    let mut compared = 0;
    let mut counted = 0;
    let mut decimal_mixes = 0;
    for id in &agents {
        let feedback = store
            .feedback(devnet.chain_id(), &identity, id)
            .await
            .unwrap();
        assert!(!feedback.is_empty());
        for _ in 0..3 {
            let mut asked: Vec<Address> = clients
                .iter()
                .copied()
                .filter(|_| rng.random_bool(0.6))
                .collect();
            if asked.is_empty() || rng.random_bool(0.3) {
                asked.push(clients[rng.random_range(0..clients.len())]);
            }
            let (tag1, tag2) = (TAGS1[rng.random_range(0..3)], TAGS2[rng.random_range(0..3)]);
            let onchain = reputation
                .getSummary(*id, asked.clone(), tag1.into(), tag2.into())
                .call()
                .await
                .unwrap();
            let ours = get_summary(&feedback, &asked, tag1, tag2).unwrap();
            assert_eq!(
                (ours.count, ours.value, ours.decimals),
                (
                    onchain.count,
                    onchain.summaryValue,
                    onchain.summaryValueDecimals
                ),
                "agent {id}, clients {asked:?}, tags {tag1:?}/{tag2:?}"
            );
            compared += 1;
            counted += usize::from(ours.count > 0);
            decimal_mixes += usize::from(ours.decimals != 0);
        }
    }
    assert_eq!(compared, 60);
    assert!(counted >= 20, "only {counted} queries matched any feedback");
    assert!(
        decimal_mixes >= 5,
        "only {decimal_mixes} answers in non-zero decimals"
    );
    assert!(
        get_summary(&[], &[], "", "").is_none(),
        "no clients reverts on-chain"
    );
}
