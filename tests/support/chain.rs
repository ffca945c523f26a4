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
