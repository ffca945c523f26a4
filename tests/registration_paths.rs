//! End to end on a real anvil with the real contracts: an agent registered through each path
//! agentindex follows (factory, registry, ERC-8004) can be read back from the chain's logs with
//! the fields the transactions put there.

use agentindex_contracts::{
    AgentCard, AgentFactory, AgentRegistry, Devnet, IdentityRegistry, demo,
};
use alloy::primitives::{Address, U256};
use alloy::providers::Provider;
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;

async fn logs_of(devnet: &Devnet, address: Address) -> Vec<Log> {
    let filter = Filter::new()
        .address(address)
        .from_block(devnet.deployment().start_block)
        .to_block(devnet.block_number().await.unwrap());
    devnet.provider().get_logs(&filter).await.unwrap()
}

fn decode_all<E: SolEvent>(logs: &[Log]) -> Vec<E> {
    logs.iter()
        .filter(|log| log.topic0() == Some(&E::SIGNATURE_HASH))
        .map(|log| E::decode_log(&log.inner).expect("well-formed event").data)
        .collect()
}

#[tokio::test]
async fn each_registration_path_leaves_events_that_read_back() {
    let devnet = Devnet::start().await.expect("devnet starts");
    let accounts = devnet.accounts();
    let (alice, bob, carol) = (accounts[1], accounts[2], accounts[3]);

    // Factory: the child and its owner in AgentCreated, the card in the child's CardUpdated.
    let card = demo::sample_card(&devnet, "Factory Agent", None);
    let child = demo::via_factory(&devnet, alice, card.clone())
        .await
        .unwrap();
    let created = decode_all::<AgentFactory::AgentCreated>(
        &logs_of(&devnet, devnet.deployment().factory).await,
    );
    assert_eq!(created.len(), 1);
    assert_eq!(
        (created[0].agent, created[0].owner, created[0].index),
        (child, alice, U256::ZERO)
    );
    let child_logs = logs_of(&devnet, child).await;
    let updates = decode_all::<AgentCard::CardUpdated>(&child_logs);
    assert_eq!(updates.len(), 1, "initialisation emits the card once");
    assert_eq!(updates[0].card.name, "Factory Agent");
    assert_eq!(updates[0].card.skills[0].tags, card.skills[0].tags);
    assert_eq!(updates[0].card.payment.asset, devnet.deployment().usdc);
    let owners = decode_all::<AgentCard::OwnershipTransferred>(&child_logs);
    assert_eq!(
        (owners[0].previousOwner, owners[0].newOwner),
        (Address::ZERO, alice)
    );
    let json = devnet.agent(child).agentCard().call().await.unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("agentCard() is JSON");
    assert_eq!(parsed["name"], "Factory Agent");
    assert_eq!(parsed["skills"][0]["id"], "translate");

    // Registry: an independently deployed agent enrolled by its owner.
    let enrolled = demo::via_registry(
        &devnet,
        bob,
        demo::sample_card(&devnet, "Registry Agent", None),
        "https://agents.example/meta.json",
    )
    .await
    .unwrap();
    let registered = decode_all::<AgentRegistry::AgentRegistered>(
        &logs_of(&devnet, devnet.deployment().registry).await,
    );
    assert_eq!(registered.len(), 1);
    assert_eq!((registered[0].agent, registered[0].owner), (enrolled, bob));
    assert_eq!(
        registered[0].metadataURI,
        "https://agents.example/meta.json"
    );
    assert!(!registered[0].pending, "the open registry lists at once");

    // ERC-8004: Registered with the URI and owner, then the default agentWallet.
    let id = demo::via_erc8004(&devnet, carol, "ipfs://bafy-registration")
        .await
        .unwrap();
    assert_eq!(id, U256::ZERO, "the reference registry numbers from zero");
    let identity_logs = logs_of(&devnet, devnet.deployment().identity).await;
    let minted = decode_all::<IdentityRegistry::Registered>(&identity_logs);
    assert_eq!(minted.len(), 1);
    assert_eq!((minted[0].agentId, minted[0].owner), (id, carol));
    assert_eq!(minted[0].agentURI, "ipfs://bafy-registration");
    let metadata = decode_all::<IdentityRegistry::MetadataSet>(&identity_logs);
    assert_eq!(metadata[0].metadataKey, "agentWallet");
    assert_eq!(
        metadata[0].metadataValue.as_ref(),
        carol.as_slice(),
        "wallet defaults to the owner"
    );
}

#[tokio::test]
async fn devnet_funds_accounts_and_stops_its_chain_when_dropped() {
    let devnet = Devnet::start().await.expect("devnet starts");
    let accounts = devnet.accounts();
    assert_eq!(accounts.len(), 10);
    let usdc = devnet.usdc();
    for account in &accounts {
        assert_eq!(
            usdc.balanceOf(*account).call().await.unwrap(),
            U256::from(1_000_000_000_000u64)
        );
        assert!(devnet.provider().get_balance(*account).await.unwrap() > U256::ZERO);
    }
    assert_eq!(
        devnet.identity().getVersion().call().await.unwrap(),
        "2.0.0"
    );
    assert_eq!(
        devnet.provider().get_chain_id().await.unwrap(),
        devnet.chain_id()
    );

    // Past the states anvil keeps in memory it writes each block's to disk: into the devnet's
    // folder, which goes with it.
    let states = devnet.past_states_folder().to_path_buf();
    let _: () = devnet
        .provider()
        .raw_request("anvil_mine".into(), ("0x400",))
        .await
        .unwrap();
    let written = std::fs::read_dir(&states).unwrap().count();
    assert!(written > 0, "anvil wrote no past states in {states:?}");

    let endpoint = devnet.endpoint();
    assert!(endpoint.starts_with("http://127.0.0.1:"));
    let provider = devnet.provider().clone();
    drop(devnet);
    assert!(
        provider.get_block_number().await.is_err(),
        "anvil at {endpoint} still answers after the devnet was dropped"
    );
    assert!(
        !states.exists(),
        "anvil's past states outlived the devnet in {states:?}"
    );
}
