//! Circular flow on anvil: a payer that received funds from the agent's side shortly before
//! paying it counts at the circular discount, both for an ERC-8004 agent (USDC sent out of its
//! agentWallet) and for an agent contract (its owner withdrawing to the payer). A payer with no
//! such funding counts in full.

use crate::support;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::{AgentCard, Devnet, confirm, demo};
use agentindex_indexer::config::FetchStrategy;
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::ScoreParams;
use alloy::primitives::{Address, U256};

async fn pay(devnet: &Devnet, from: Address, to: Address, amount: u64) {
    let usdc = devnet.usdc();
    let send = usdc.transfer(to, U256::from(amount)).from(from);
    confirm("paying in USDC", send.send()).await.unwrap();
}

/// Each payer's weight in the stored score of `key`.
async fn weights(store: &agentindex_indexer::store::Store, key: &str) -> Vec<(Address, f64)> {
    let stored = store.reputation(key).await.unwrap().expect("a stored row");
    stored
        .evaluation
        .payment_score
        .payers
        .iter()
        .map(|p| (p.payer, p.weight))
        .collect()
}

/// The stored outflows, each its sender and recipient, in chain order.
async fn outflows(store: &agentindex_indexer::store::Store) -> Vec<(String, String)> {
    sqlx::query_as("SELECT from_address, to_address FROM outflows ORDER BY block_number, log_index")
        .fetch_all(store.reader())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payers_funded_by_the_agent_count_at_the_circular_discount() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let (owner, wallet_index, funded, independent) = (a[1], 3, a[5], a[6]);
    let wallet = a[wallet_index];

    // An ERC-8004 agent paid at its wallet; the wallet first funds one payer.
    let id = demo::via_erc8004(&devnet, owner, "ipfs://circular")
        .await
        .unwrap();
    demo::set_agent_wallet(&devnet, owner, id, wallet_index)
        .await
        .unwrap();
    pay(&devnet, wallet, funded, 5_000_000).await;
    pay(&devnet, funded, wallet, 1_000_000).await;
    pay(&devnet, independent, wallet, 1_000_000).await;

    // An agent contract whose owner withdraws to one payer before that payer pays it.
    let contract = demo::via_factory(&devnet, owner, demo::sample_card(&devnet, "Loop", None))
        .await
        .unwrap();
    pay(&devnet, independent, contract, 2_000_000).await;
    let card = AgentCard::new(contract, devnet.provider().clone());
    confirm(
        "withdrawing to a payer",
        card.withdraw(devnet.deployment().usdc, funded, U256::from(1_500_000u64))
            .from(owner)
            .send(),
    )
    .await
    .unwrap();
    pay(&devnet, funded, contract, 1_000_000).await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    let discount = ScoreParams::default().circular_discount;

    let erc8004 =
        AgentKey::erc8004(devnet.chain_id(), devnet.deployment().identity, id).to_string();
    let outflows = outflows(&store).await;
    assert!(
        outflows.contains(&(format!("{wallet:#x}"), format!("{funded:#x}"))),
        "the wallet's transfer is the agent's outflow: {outflows:?}"
    );
    let mut expected = vec![(funded, discount), (independent, 1.0)];
    expected.sort_by_key(|(payer, _)| *payer);
    assert_eq!(weights(&store, &erc8004).await, expected);

    let contract_key = AgentKey::contract(devnet.chain_id(), contract).to_string();
    assert_eq!(weights(&store, &contract_key).await, expected);
    let by_default = store.canonical_dump().await.unwrap();
    store.close().await;

    // Outflows and payments found by scanning the token's transfers, in one range or block by
    // block, are the ones address chunks find.
    for (range, strategy) in [
        (2_000, FetchStrategy::Scan),
        (1, FetchStrategy::Scan),
        (1, FetchStrategy::Addresses),
    ] {
        let db = dir.path().join(format!("{strategy:?}-{range}.db"));
        let mut config = support::config(&devnet, &db, 0);
        config.chains[0].fetch_strategy = strategy;
        config.chains[0].max_block_range = range;
        support::index_until_synced(&config).await;
        support::assert_same_index(
            &support::dump(&db).await,
            &by_default,
            &format!("{strategy:?} in ranges of {range}"),
        );
    }
}

/// An account that registered several agents is each one's payment address until it names
/// another: what it sends is stored once, and is the outflow of every agent bound to it at the
/// time, not of one that had moved its payments elsewhere before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outflow_of_an_address_bound_to_many_agents_is_stored_once_and_counts_for_each() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let (platform, moved_index, funded) = (a[1], 4, a[5]);
    let moved_wallet = a[moved_index];
    let mut ids = Vec::new();
    for n in 0..3 {
        let uri = format!("ipfs://platform-{n}");
        ids.push(demo::via_erc8004(&devnet, platform, &uri).await.unwrap());
    }
    // The third agent is paid at a wallet of its own before the platform sends anything.
    demo::set_agent_wallet(&devnet, platform, ids[2], moved_index)
        .await
        .unwrap();
    pay(&devnet, platform, funded, 5_000_000).await;
    pay(&devnet, funded, platform, 1_000_000).await;
    pay(&devnet, funded, moved_wallet, 1_000_000).await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    assert_eq!(
        outflows(&store).await,
        vec![(format!("{platform:#x}"), format!("{funded:#x}"))],
        "one row for the one transfer out of the platform"
    );
    let discount = ScoreParams::default().circular_discount;
    let key =
        |id| AgentKey::erc8004(devnet.chain_id(), devnet.deployment().identity, id).to_string();
    for id in &ids[..2] {
        assert_eq!(weights(&store, &key(*id)).await, vec![(funded, discount)]);
    }
    assert_eq!(
        weights(&store, &key(ids[2])).await,
        vec![(funded, 1.0)],
        "the platform's transfer came after the third agent's payments moved"
    );
    store.close().await;
}
