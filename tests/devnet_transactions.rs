//! The local chain every test stands on: its transactions must not fail for reasons of the
//! chain's own making. anvil estimates gas at the latest block's timestamp and mines a block
//! later; a call that stores `block.timestamp` then costs more than estimated once the clock
//! has moved (a flaky `validationResponse` revert in CI). The devnet adds headroom to its gas
//! estimates; this test moves the clock between estimate and mining on purpose.

use agentindex_contracts::devnet::confirm;
use agentindex_contracts::{Devnet, IdentityRegistry, demo};
use alloy::primitives::B256;
use alloy::providers::Provider;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timestamp_write_mined_after_the_clock_moves_still_succeeds() {
    let devnet = Devnet::start().await.unwrap();
    let accounts = devnet.accounts();
    let (owner, validator) = (accounts[1], accounts[2]);
    let identity = devnet.identity();
    let receipt = confirm("register", identity.register_0().from(owner).send())
        .await
        .unwrap();
    let id = demo::first_event::<IdentityRegistry::Registered>(&receipt, "Registered")
        .unwrap()
        .agentId;
    let validation = devnet.validation();
    let request = B256::repeat_byte(7);
    confirm(
        "request",
        validation
            .validationRequest(validator, id, "ipfs://req".into(), request)
            .from(owner)
            .send(),
    )
    .await
    .unwrap();

    // The request stored its block's timestamp as lastUpdate. With blocks held to that
    // timestamp, the response's gas is estimated rewriting the same value (cheap); then the
    // clock moves 7 s before the block that holds the response is mined.
    let rpc = devnet.provider();
    let requested_at = rpc
        .get_block_by_number(Default::default())
        .await
        .unwrap()
        .unwrap()
        .header
        .timestamp;
    anvil(rpc, "anvil_setBlockTimestampInterval", json!([0])).await;
    anvil(rpc, "evm_setAutomine", json!([false])).await;
    let pending = validation
        .validationResponse(request, 90, "ipfs://v".into(), B256::ZERO, "zk".into())
        .from(validator)
        .send()
        .await
        .unwrap();
    anvil(rpc, "anvil_removeBlockTimestampInterval", json!([])).await;
    anvil(rpc, "evm_setNextBlockTimestamp", json!([requested_at + 7])).await;
    anvil(rpc, "evm_mine", json!([])).await;
    let receipt = pending.get_receipt().await.unwrap();
    assert!(receipt.status(), "the response ran out of gas or reverted");
    let mined_at = devnet
        .provider()
        .get_block_by_number(receipt.block_number.unwrap().into())
        .await
        .unwrap()
        .unwrap()
        .header
        .timestamp;
    assert_eq!(mined_at, requested_at + 7, "the clock moved as asked");
    let status = validation
        .getValidationStatus(request)
        .call()
        .await
        .unwrap();
    assert_eq!(status.response, 90);
    assert_eq!(status.lastUpdate, alloy::primitives::U256::from(mined_at));
}

/// Calls one of anvil's own methods and ignores its answer.
async fn anvil(rpc: &impl Provider, method: &'static str, params: serde_json::Value) {
    let _: serde_json::Value = rpc
        .raw_request(method.into(), params)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"));
}
