//! Signatures made off-chain by alloy's EIP-712 code are accepted by the contracts: an x402-style
//! EIP-3009 settlement lands as AuthorizationUsed immediately followed by Transfer and cannot be
//! replayed, and an ERC-8004 agentWallet consent binds the wallet.

use agentindex_contracts::{Devnet, IdentityRegistry, TestUSDC, demo, signing};
use alloy::primitives::U256;
use alloy::sol_types::SolEvent;

#[tokio::test]
async fn eip3009_settlement_pairs_authorization_with_transfer_and_rejects_replay() {
    let devnet = Devnet::start().await.unwrap();
    let accounts = devnet.accounts();
    let (owner, payer_index, facilitator) = (accounts[1], 4, accounts[5]);
    let payer = accounts[payer_index];
    let agent = demo::via_factory(&devnet, owner, demo::sample_card(&devnet, "Paid", None))
        .await
        .unwrap();
    let before = devnet.usdc().balanceOf(payer).call().await.unwrap();

    let nonce = signing::nonce("x402-1");
    let value = U256::from(10_000u64);
    let receipt =
        demo::pay_with_authorization(&devnet, payer_index, facilitator, agent, value, nonce)
            .await
            .unwrap();
    let logs = receipt.inner.logs();
    let used = logs
        .iter()
        .position(|l| l.topic0() == Some(&TestUSDC::AuthorizationUsed::SIGNATURE_HASH))
        .expect("AuthorizationUsed emitted");
    let auth = TestUSDC::AuthorizationUsed::decode_log(&logs[used].inner)
        .unwrap()
        .data;
    assert_eq!((auth.authorizer, auth.nonce), (payer, nonce));
    let transfer = TestUSDC::Transfer::decode_log(&logs[used + 1].inner)
        .expect("the next log is the Transfer")
        .data;
    assert_eq!(
        (transfer.from, transfer.to, transfer.value),
        (payer, agent, value)
    );
    assert_eq!(
        logs[used].log_index.unwrap() + 1,
        logs[used + 1].log_index.unwrap()
    );

    let replay =
        demo::pay_with_authorization(&devnet, payer_index, facilitator, agent, value, nonce).await;
    assert!(replay.is_err(), "a reused nonce must be rejected");
    assert_eq!(
        devnet.usdc().balanceOf(agent).call().await.unwrap(),
        value,
        "paid exactly once"
    );
    assert_eq!(
        devnet.usdc().balanceOf(payer).call().await.unwrap(),
        before - value
    );
}

#[tokio::test]
async fn agent_wallet_consent_binds_the_wallet() {
    let devnet = Devnet::start().await.unwrap();
    let accounts = devnet.accounts();
    let (owner, wallet_index) = (accounts[1], 6);
    let id = demo::via_erc8004(&devnet, owner, "ipfs://reg")
        .await
        .unwrap();

    let receipt = demo::set_agent_wallet(&devnet, owner, id, wallet_index)
        .await
        .unwrap();
    let set = receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| IdentityRegistry::MetadataSet::decode_log(&l.inner).ok())
        .expect("MetadataSet emitted")
        .data;
    assert_eq!(set.metadataKey, "agentWallet");
    assert_eq!(
        set.metadataValue.as_ref(),
        accounts[wallet_index].as_slice()
    );
    assert_eq!(
        devnet.identity().getAgentWallet(id).call().await.unwrap(),
        accounts[wallet_index]
    );

    // A consent naming someone else as the owner does not verify.
    let now = devnet.latest_timestamp().await.unwrap();
    let deadline = U256::from(now + 60);
    let domain = signing::identity_domain(devnet.chain_id(), devnet.deployment().identity);
    let wrong_owner =
        signing::sign_agent_wallet(devnet.signer(7), &domain, id, accounts[2], deadline);
    let rejected = devnet
        .identity()
        .setAgentWallet(id, accounts[7], deadline, wrong_owner.as_bytes().into())
        .from(owner)
        .call()
        .await;
    assert!(
        rejected.is_err(),
        "a consent for another owner must be rejected"
    );
}
