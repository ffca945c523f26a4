//! Every x402 settlement path on EVM, on anvil with contracts that emit the real proxies' and
//! batch-settlement contract's events (`contracts/src/x402/`): a payment through each counts once,
//! with the right payer and scheme, and a facilitator's own transfer does not count; fetched by
//! address chunks or by scanning, in any range size, the index is the same.

use crate::support;
use agentindex_contracts::{Devnet, X402BatchSettlement, X402Permit2Proxy, confirm, demo, signing};
use agentindex_indexer::config::FetchStrategy;
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::Exclusion;
use agentindex_indexer::store::StoreRead;
use alloy::primitives::{Address, B256, U256};
use std::collections::BTreeMap;

async fn approve(devnet: &Devnet, owner: Address, spender: Address) {
    let usdc = devnet.usdc();
    let send = usdc.approve(spender, U256::MAX).from(owner);
    confirm("approving a settlement contract", send.send())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_x402_path_counts_once_with_its_real_payer() {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let d = devnet.deployment().clone();
    let (facilitator, owner, receiver_key) = (a[0], a[1], a[3]);
    let mut agents = Vec::new();
    for name in ["Exact", "Upto", "Batch"] {
        let card = demo::sample_card(&devnet, name, None);
        agents.push(demo::via_factory(&devnet, owner, card).await.unwrap());
    }
    let (exact_agent, upto_agent, batch_agent) = (agents[0], agents[1], agents[2]);
    let provider = devnet.provider().clone();

    // Permit2 `exact`: the payer's tokens move to the agent, the proxy says Settled().
    approve(&devnet, a[5], d.permit2_exact).await;
    let exact = X402Permit2Proxy::new(d.permit2_exact, provider.clone());
    let amount = U256::from(1_000_000u64);
    let settle = exact.settle(d.usdc, a[5], exact_agent, amount, amount);
    confirm(
        "settling through the exact proxy",
        settle.from(facilitator).send(),
    )
    .await
    .unwrap();
    // Permit2 `upto`: less than permitted, through settleWithPermit.
    approve(&devnet, a[6], d.permit2_upto).await;
    let upto = X402Permit2Proxy::new(d.permit2_upto, provider.clone());
    let settle = upto.settleWithPermit(
        d.usdc,
        a[6],
        upto_agent,
        U256::from(2_000_000u64),
        U256::from(1_500_000u64),
    );
    confirm(
        "settling through the upto proxy",
        settle.from(facilitator).send(),
    )
    .await
    .unwrap();
    // EIP-3009 `exact`, as before.
    demo::pay_with_authorization(
        &devnet,
        9,
        facilitator,
        exact_agent,
        U256::from(700_000u64),
        signing::nonce("x402 paths"),
    )
    .await
    .unwrap();
    // The facilitator's own transfer to an agent: not a customer paying.
    let usdc = devnet.usdc();
    let own = usdc
        .transfer(exact_agent, U256::from(900_000u64))
        .from(facilitator);
    confirm("a facilitator's own transfer", own.send())
        .await
        .unwrap();

    // Batch settlement: two payers open channels to the batch agent, its server key claims from
    // both, and one settlement pays the agent from the contract.
    let batch = X402BatchSettlement::new(d.batch_settlement, provider.clone());
    let config = |payer: Address| X402BatchSettlement::ChannelConfig {
        payer,
        payerAuthorizer: Address::ZERO,
        receiver: batch_agent,
        receiverAuthorizer: receiver_key,
        token: d.usdc,
        withdrawDelay: alloy::primitives::Uint::from(3_600u64),
        salt: B256::repeat_byte(7),
    };
    for (payer, claimed) in [(a[7], 1_000_000u128), (a[8], 2_000_000)] {
        approve(&devnet, payer, d.batch_settlement).await;
        let deposit = batch.deposit(config(payer), 5_000_000);
        confirm("depositing into a channel", deposit.from(payer).send())
            .await
            .unwrap();
        let claim = batch.claim(config(payer), claimed);
        confirm("claiming from a channel", claim.from(receiver_key).send())
            .await
            .unwrap();
    }
    let settle = batch.settle(batch_agent, d.usdc);
    confirm("settling the claims", settle.from(facilitator).send())
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 0);
    config.chains[0].x402.facilitators = vec![facilitator];
    support::index_until_synced(&config).await;
    let store = support::open(&db).await;
    let key = |agent| AgentKey::contract(devnet.chain_id(), agent).to_string();
    let rows = |agent| {
        let store = &store;
        let key = key(agent);
        async move {
            let rows: Vec<(String, Option<String>, String)> = sqlx::query_as(
                "SELECT payer, scheme, amount FROM payments WHERE agent_key = $1
                 ORDER BY block_number, log_index",
            )
            .bind(key)
            .fetch_all(store.reader())
            .await
            .unwrap();
            rows
        }
    };
    let hex = |a: Address| format!("{a:#x}");
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        rows(exact_agent).await,
        vec![
            (hex(a[5]), some("permit2_exact"), "1000000".into()),
            (hex(a[9]), some("eip3009"), "700000".into()),
            (hex(facilitator), None, "900000".into()),
        ]
    );
    assert_eq!(
        rows(upto_agent).await,
        vec![(hex(a[6]), some("permit2_upto"), "1500000".into())]
    );
    assert_eq!(
        rows(batch_agent).await,
        vec![
            (hex(a[7]), some("batch"), "1000000".into()),
            (hex(a[8]), some("batch"), "2000000".into()),
            (hex(d.batch_settlement), None, "3000000".into()),
        ],
        "claims are the channels' payers paying; the payout is the contract's"
    );

    let reputation = |agent| {
        let store = &store;
        let key = key(agent);
        async move { store.reputation(&key).await.unwrap().unwrap().evaluation }
    };
    let e = reputation(exact_agent).await;
    assert_eq!((e.payments.payment_count, e.payments.x402_count), (2, 2));
    assert_eq!(e.excluded, BTreeMap::from([(Exclusion::Facilitator, 1)]));
    let e = reputation(upto_agent).await;
    assert_eq!((e.payments.payment_count, e.payments.x402_count), (1, 1));
    let e = reputation(batch_agent).await;
    assert_eq!(
        (
            e.payments.payment_count,
            e.payments.x402_count,
            e.payments.unique_payers
        ),
        (2, 2, 2)
    );
    assert_eq!(
        e.excluded,
        BTreeMap::from([(Exclusion::SettlementPayout, 1)])
    );
    let by_default = store.canonical_dump().await.unwrap();
    store.close().await;

    // Scanning the token (the proxies' events come with its scan) or reading block by block
    // finds the same settlements.
    for (range, strategy) in [(2_000, FetchStrategy::Scan), (1, FetchStrategy::Addresses)] {
        let db = dir.path().join(format!("{strategy:?}-{range}.db"));
        let mut config = support::config(&devnet, &db, 0);
        config.chains[0].x402.facilitators = vec![facilitator];
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
