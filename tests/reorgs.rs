//! Reorgs during tip following: after each one the database must equal a fresh index of the
//! chain as it now is. A reorg deeper than the remembered window stops the follower, or rewinds
//! to the last finalized block when configured so.

use crate::support;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::config::{Config, DeepReorg, FetchStrategy};
use agentindex_indexer::engine::{self, EngineError, IndexOptions};
use agentindex_indexer::follower::FollowerError;
use alloy::primitives::{Address, B256, U256};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::Duration;
use support::chain::{self, Call};
use tokio::sync::watch;

const FINALITY_DEPTH: u64 = 20;

struct World {
    devnet: Devnet,
    agents: Vec<Address>,
    erc8004_ids: Vec<U256>,
}

async fn world() -> World {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let mut agents = Vec::new();
    for (i, owner) in [a[1], a[2]].into_iter().enumerate() {
        agents.push(
            demo::via_factory(
                &devnet,
                owner,
                demo::sample_card(&devnet, &format!("Agent {i}"), None),
            )
            .await
            .unwrap(),
        );
    }
    let mut erc8004_ids = Vec::new();
    for owner in [a[3], a[4]] {
        erc8004_ids.push(
            demo::via_erc8004(&devnet, owner, "ipfs://reorg")
                .await
                .unwrap(),
        );
    }
    World {
        devnet,
        agents,
        erc8004_ids,
    }
}

/// A random transaction that emits events the indexer cares about.
fn random_call(world: &World, rng: &mut StdRng) -> Call {
    use agentindex_contracts::{AgentFactory, IdentityRegistry, ReputationRegistry, TestUSDC};
    use alloy::sol_types::SolCall;
    let d = &world.devnet;
    let a = d.accounts();
    let deployment = d.deployment();
    let payer = a[5 + rng.random_range(0..4)];
    let amount = U256::from(rng.random_range(1..1000u64));
    let (from, to, input) = match rng.random_range(0..6) {
        0 => {
            let to = world.agents[rng.random_range(0..world.agents.len())];
            (
                payer,
                deployment.usdc,
                TestUSDC::transferCall { to, value: amount }.abi_encode(),
            )
        }
        1 => {
            // Paid into an ERC-8004 owner's default wallet.
            let to = a[3 + rng.random_range(0..2)];
            (
                payer,
                deployment.usdc,
                TestUSDC::transferCall { to, value: amount }.abi_encode(),
            )
        }
        2 => {
            let call = ReputationRegistry::giveFeedbackCall {
                agentId: world.erc8004_ids[rng.random_range(0..world.erc8004_ids.len())],
                value: rng.random_range(-100i128..100),
                valueDecimals: 0,
                tag1: "reorg".into(),
                tag2: String::new(),
                endpoint: String::new(),
                feedbackURI: String::new(),
                feedbackHash: B256::from(rng.random::<[u8; 32]>()),
            };
            (payer, deployment.reputation, call.abi_encode())
        }
        3 => {
            let call = IdentityRegistry::register_2Call {
                agentURI: format!("ipfs://agent-{}", rng.random::<u32>()),
            };
            (payer, deployment.identity, call.abi_encode())
        }
        4 => {
            let call = AgentFactory::createAgentCall {
                owner: payer,
                card: demo::sample_card(d, &format!("Made {}", rng.random::<u16>()), None),
                heartbeatInterval: 60,
            };
            (payer, deployment.factory, call.abi_encode())
        }
        _ => {
            // One account funds the payers: the funding transfers their later payments reach
            // (and the clusters they make) must follow every reorg too.
            (
                a[9],
                deployment.usdc,
                TestUSDC::transferCall {
                    to: payer,
                    value: amount * U256::from(1_000u64),
                }
                .abi_encode(),
            )
        }
    };
    (from, to, input.into())
}

async fn send(world: &World, call: Call) {
    let (from, to, input) = call;
    let tx = alloy::rpc::types::TransactionRequest::default()
        .from(from)
        .to(to)
        .input(input.into());
    use alloy::providers::Provider;
    let receipt = world
        .devnet
        .provider()
        .send_transaction(tx)
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert!(receipt.status(), "scenario transaction reverted");
}

fn config(world: &World, db: &Path, window: u64, deep: DeepReorg) -> Config {
    let mut config = support::config(&world.devnet, db, FINALITY_DEPTH);
    config.chains[0].reorg_window = window;
    config.chains[0].on_deep_reorg = deep;
    config.chains[0].poll_interval_ms = 20;
    // The trust rank moves every few blocks, so reorgs cross its epochs: after each one the rank
    // (in the dump) must equal a fresh index's.
    config.reputation.trust.interval_blocks = 5;
    config
}

fn background(
    config: Config,
) -> (
    watch::Sender<bool>,
    tokio::task::JoinHandle<Result<(), EngineError>>,
) {
    let (stop, shutdown) = watch::channel(false);
    let options = IndexOptions {
        retry: support::quick_retry(),
        skip_documents: true,
        ..IndexOptions::default()
    };
    let task =
        tokio::spawn(async move { engine::index(&config, options, shutdown, |_, _| {}).await });
    (stop, task)
}

async fn fresh_dump(world: &World, dir: &Path, name: &str) -> String {
    let db = dir.join(name);
    support::index_until_synced(&config(world, &db, 128, DeepReorg::Stop)).await;
    support::dump(&db).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reorgs_of_depth_1_to_12_leave_the_index_equal_to_a_fresh_one() {
    let seed: u64 = std::env::var("REORG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = StdRng::seed_from_u64(seed);
    let world = world().await;
    chain::mine(&world.devnet, FINALITY_DEPTH).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let store = support::open(&db).await;
    // The live index scans event signatures; the fresh ones fetch by address: every trial also
    // checks that the two ways agree across reorgs.
    let mut live = config(&world, &db, 128, DeepReorg::Stop);
    live.chains[0].fetch_strategy = FetchStrategy::Scan;
    let (stop, task) = background(live);

    for trial in 0..36u64 {
        for _ in 0..rng.random_range(1..5) {
            let call = random_call(&world, &mut rng);
            send(&world, call).await;
        }
        chain::wait_for_head(&world.devnet, &store, Duration::from_secs(30)).await;

        let depth = 1 + trial % 12;
        let replacements: Vec<(Call, u64)> = (0..rng.random_range(1..4))
            .map(|_| (random_call(&world, &mut rng), rng.random_range(0..depth)))
            .collect();
        chain::reorg(&world.devnet, depth, &replacements).await;
        chain::wait_for_head(&world.devnet, &store, Duration::from_secs(30)).await;

        let live = store.canonical_dump().await.unwrap();
        let fresh = fresh_dump(&world, dir.path(), &format!("fresh-{trial}.db")).await;
        assert!(
            live == fresh,
            "trial {trial} (seed {seed}, depth {depth}): the index after the reorg differs from a fresh index"
        );
    }
    stop.send(true).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reorg_deeper_than_the_window_stops_the_follower_by_default() {
    let world = world().await;
    chain::mine(&world.devnet, FINALITY_DEPTH).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let store = support::open(&db).await;
    let (_stop, task) = background(config(&world, &db, 3, DeepReorg::Stop));
    chain::wait_for_head(&world.devnet, &store, Duration::from_secs(30)).await;

    let mut rng = StdRng::seed_from_u64(7);
    let call = random_call(&world, &mut rng);
    chain::reorg(&world.devnet, 6, &[(call, 0)]).await;
    let outcome = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the follower stops")
        .unwrap();
    match outcome {
        Err(EngineError::Follower(FollowerError::DeepReorg { window, .. })) => {
            assert_eq!(window, 3)
        }
        other => panic!("expected a deep-reorg stop, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reorg_deeper_than_the_window_rewinds_to_finalized_when_configured() {
    let world = world().await;
    chain::mine(&world.devnet, FINALITY_DEPTH).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let store = support::open(&db).await;
    let (stop, task) = background(config(&world, &db, 3, DeepReorg::Rewind));
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..4 {
        let call = random_call(&world, &mut rng);
        send(&world, call).await;
    }
    chain::wait_for_head(&world.devnet, &store, Duration::from_secs(30)).await;

    let replacements: Vec<(Call, u64)> =
        (0..3).map(|i| (random_call(&world, &mut rng), i)).collect();
    chain::reorg(&world.devnet, 8, &replacements).await;
    chain::wait_for_head(&world.devnet, &store, Duration::from_secs(30)).await;
    assert_eq!(
        store.canonical_dump().await.unwrap(),
        fresh_dump(&world, dir.path(), "fresh.db").await,
        "after rewinding to the finalized block and re-indexing, the index equals a fresh one"
    );
    stop.send(true).unwrap();
    task.await.unwrap().unwrap();
}
