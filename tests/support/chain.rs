//! Driving the devnet's chain from tests: reorgs, mining, and waiting for the indexer.

use agentindex_contracts::Devnet;
use agentindex_indexer::store::Store;
use agentindex_indexer::store::StoreRead;
use alloy::eips::BlockNumberOrTag;
use alloy::primitives::{Address, Bytes};
use alloy::providers::Provider;
use serde_json::json;
use std::time::{Duration, Instant};

/// A transaction for anvil to sign from an unlocked account: (from, to, calldata).
pub(crate) type Call = (Address, Address, Bytes);

/// A USDC transfer of `amount` from `from` to `to`, for a reorg's new branch.
pub(crate) fn usdc_payment(devnet: &Devnet, from: Address, to: Address, amount: u64) -> Call {
    use alloy::sol_types::SolCall;
    let input = agentindex_contracts::TestUSDC::transferCall {
        to,
        value: alloy::primitives::U256::from(amount),
    }
    .abi_encode();
    (from, devnet.deployment().usdc, input.into())
}

/// Replaces the newest `depth` blocks with `depth` new ones holding `calls` (each at the given
/// offset into the new branch).
pub(crate) async fn reorg(devnet: &Devnet, depth: u64, calls: &[(Call, u64)]) {
    let pairs: Vec<serde_json::Value> = calls
        .iter()
        .map(|((from, to, input), offset)| {
            json!([{ "from": from, "to": to, "input": input, "gas": "0x1e8480" }, offset])
        })
        .collect();
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_reorg".into(), (depth, pairs))
        .await
        .expect("anvil_reorg");
}

/// Mines `blocks` empty blocks.
pub(crate) async fn mine(devnet: &Devnet, blocks: u64) {
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_mine".into(), (format!("{blocks:#x}"),))
        .await
        .expect("anvil_mine");
}

/// Waits until the index holds the chain's current head block (same hash), or panics after
/// `limit`.
pub(crate) async fn wait_for_head(devnet: &Devnet, store: &Store, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let head = devnet
            .provider()
            .get_block_by_number(BlockNumberOrTag::Latest)
            .await
            .unwrap()
            .expect("a head block");
        let progress = store.progress(devnet.chain_id()).await.unwrap();
        if let Some(progress) = &progress
            && progress.next_block == head.header.number + 1
            && progress.indexed_hash == Some(head.header.hash)
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the index did not reach head {} ({}) within {limit:?}; it is at {progress:?}",
            head.header.number,
            head.header.hash
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Pays `agent` 5 USDC from account 5 at the tip, replaces that block by a reorg with one where
/// account 6 pays 6, then account 7 pays 7 and both are made final (`depth` ≤ 4), waiting for
/// the index each time. Returns the payments a subscriber must hear, as (payer, amount): the
/// undone one never.
pub(crate) async fn pay_reorg_pay(
    devnet: &Devnet,
    store: &Store,
    agent: Address,
) -> Vec<(String, String)> {
    let a = devnet.accounts();
    let limit = Duration::from_secs(30);
    let pay = |payer: Address, amount: u64| {
        let usdc = devnet.usdc();
        async move {
            let send = usdc
                .transfer(agent, alloy::primitives::U256::from(amount))
                .from(payer);
            agentindex_contracts::confirm("paying the agent", send.send())
                .await
                .unwrap();
        }
    };
    pay(a[5], 5).await;
    wait_for_head(devnet, store, limit).await;
    reorg(devnet, 1, &[(usdc_payment(devnet, a[6], agent, 6), 0)]).await;
    mine(devnet, 4).await;
    wait_for_head(devnet, store, limit).await;
    pay(a[7], 7).await;
    mine(devnet, 4).await;
    wait_for_head(devnet, store, limit).await;
    vec![
        (format!("{:#x}", a[6]), "6".to_string()),
        (format!("{:#x}", a[7]), "7".to_string()),
    ]
}
