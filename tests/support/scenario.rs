//! A scripted scenario that drives every event kind through every source on a devnet, and
//! remembers what it did so tests can check the index field by field.

use agentindex_contracts::devnet::confirm;
use agentindex_contracts::{Devnet, IdentityRegistry, demo, signing};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, B256, Bytes, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;

/// What the scenario created.
pub(crate) struct Scenario {
    pub(crate) factory_agent: Address,
    pub(crate) registry_agent: Address,
    pub(crate) erc8004_id: U256,
    /// Account indexes by role.
    pub(crate) alice: Address,
    pub(crate) bob: Address,
    pub(crate) carol: Address,
    pub(crate) dave: Address,
    pub(crate) erin: Address,
    pub(crate) frank: Address,
    pub(crate) grace: Address,
    pub(crate) facilitator: Address,
}

pub(crate) const CAROL: usize = 3;
pub(crate) const DAVE: usize = 4;
pub(crate) const ERIN: usize = 5;
pub(crate) const FRANK: usize = 6;

/// Runs the whole scenario.
pub(crate) async fn run(devnet: &Devnet) -> Scenario {
    let a = devnet.accounts();
    let s = Scenario {
        factory_agent: Address::ZERO,
        registry_agent: Address::ZERO,
        erc8004_id: U256::ZERO,
        alice: a[1],
        bob: a[2],
        carol: a[CAROL],
        dave: a[DAVE],
        erin: a[ERIN],
        frank: a[FRANK],
        grace: a[7],
        facilitator: a[8],
    };
    let factory_agent = factory_path(devnet, &s).await;
    let registry_agent = registry_path(devnet, &s).await;
    let erc8004_id = erc8004_path(devnet, &s).await;
    Scenario {
        factory_agent,
        registry_agent,
        erc8004_id,
        ..s
    }
}

async fn factory_path(devnet: &Devnet, s: &Scenario) -> Address {
    let agent = demo::via_factory(
        devnet,
        s.alice,
        demo::sample_card(devnet, "Factory Agent", None),
    )
    .await
    .unwrap();
    let card = devnet.agent(agent);
    let mut renamed = demo::sample_card(devnet, "Renamed Agent", Some(agent));
    renamed.skills[0].tags.push("fast".into());
    let renamed = demo::agent_card_data(&renamed);
    confirm("updateCard", card.updateCard(renamed).from(s.alice).send())
        .await
        .unwrap();
    confirm(
        "setCardURI",
        card.setCardURI(
            "https://agents.example/card.json".into(),
            B256::repeat_byte(7),
        )
        .from(s.alice)
        .send(),
    )
    .await
    .unwrap();
    confirm(
        "setActive false",
        card.setActive(false).from(s.alice).send(),
    )
    .await
    .unwrap();
    confirm("setActive true", card.setActive(true).from(s.alice).send())
        .await
        .unwrap();
    confirm(
        "setHeartbeatInterval",
        card.setHeartbeatInterval(120).from(s.alice).send(),
    )
    .await
    .unwrap();
    confirm("heartbeat", card.heartbeat().from(s.alice).send())
        .await
        .unwrap();
    confirm(
        "transferOwnership",
        card.transferOwnership(s.bob).from(s.alice).send(),
    )
    .await
    .unwrap();

    // Payments: native pay(), USDC pay(), a plain USDC transfer, an EIP-3009 settlement.
    confirm(
        "native pay",
        card.pay(Address::ZERO, U256::from(1_000))
            .value(U256::from(1_000))
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    let usdc = devnet.usdc();
    confirm(
        "approve",
        usdc.approve(agent, U256::from(500)).from(s.carol).send(),
    )
    .await
    .unwrap();
    confirm(
        "usdc pay",
        card.pay(devnet.deployment().usdc, U256::from(500))
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "plain transfer",
        usdc.transfer(agent, U256::from(70)).from(s.dave).send(),
    )
    .await
    .unwrap();
    demo::pay_with_authorization(
        devnet,
        ERIN,
        s.facilitator,
        agent,
        U256::from(9),
        signing::nonce("factory-1"),
    )
    .await
    .unwrap();
    // A native transfer without pay() also counts.
    let tx = TransactionRequest::default()
        .with_from(s.dave)
        .with_to(agent)
        .with_value(U256::from(5));
    devnet
        .provider()
        .send_transaction(tx)
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    confirm("rate", card.rate(88).from(s.carol).send())
        .await
        .unwrap();
    confirm(
        "withdraw",
        card.withdraw(devnet.deployment().usdc, s.bob, U256::from(100))
            .from(s.bob)
            .send(),
    )
    .await
    .unwrap();
    agent
}

async fn registry_path(devnet: &Devnet, s: &Scenario) -> Address {
    let agent = demo::via_registry(
        devnet,
        s.bob,
        demo::sample_card(devnet, "Registry Agent", None),
        "ipfs://meta-1",
    )
    .await
    .unwrap();
    let open = devnet.registry();
    let curated = devnet.curated_registry();
    let curator = devnet.accounts()[0];
    confirm(
        "curated register",
        curated
            .register(agent, "ipfs://curated".into())
            .from(s.bob)
            .send(),
    )
    .await
    .unwrap();
    confirm("approve", curated.approve(agent).from(curator).send())
        .await
        .unwrap();
    confirm(
        "update",
        open.update(agent, "ipfs://meta-2".into())
            .from(s.bob)
            .send(),
    )
    .await
    .unwrap();
    confirm("deregister", open.deregister(agent).from(s.bob).send())
        .await
        .unwrap();
    // A heartbeat after enrolment overrides the one read at enrolment.
    confirm(
        "enrolled heartbeat",
        devnet.agent(agent).heartbeat().from(s.bob).send(),
    )
    .await
    .unwrap();
    // Enrolled agents receive payments too.
    confirm(
        "transfer to enrolled",
        devnet
            .usdc()
            .transfer(agent, U256::from(11))
            .from(s.dave)
            .send(),
    )
    .await
    .unwrap();
    agent
}

async fn erc8004_path(devnet: &Devnet, s: &Scenario) -> U256 {
    let identity = devnet.identity();
    let metadata = vec![IdentityRegistry::MetadataEntry {
        metadataKey: "role".into(),
        metadataValue: Bytes::from_static(b"translator"),
    }];
    let receipt = confirm(
        "register",
        identity
            .register_1("ipfs://reg-1".into(), metadata)
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    let id = demo::first_event::<IdentityRegistry::Registered>(&receipt, "Registered")
        .unwrap()
        .agentId;
    confirm(
        "setAgentURI",
        identity
            .setAgentURI(id, "ipfs://reg-2".into())
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "setMetadata",
        identity
            .setMetadata(id, "skills".into(), Bytes::from_static(b"translate"))
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "approve",
        identity.approve(s.grace, id).from(s.carol).send(),
    )
    .await
    .unwrap();
    confirm(
        "approval for all",
        identity
            .setApprovalForAll(s.erin, true)
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();

    // Paid into the owner's default wallet, then into frank's once he is the wallet.
    confirm(
        "pay owner wallet",
        devnet
            .usdc()
            .transfer(s.carol, U256::from(3))
            .from(s.dave)
            .send(),
    )
    .await
    .unwrap();
    demo::set_agent_wallet(devnet, s.carol, id, FRANK)
        .await
        .unwrap();
    demo::pay_with_authorization(
        devnet,
        DAVE,
        s.facilitator,
        s.frank,
        U256::from(40),
        signing::nonce("erc8004-1"),
    )
    .await
    .unwrap();
    confirm(
        "plain to wallet",
        devnet
            .usdc()
            .transfer(s.frank, U256::from(4))
            .from(s.erin)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "not counted: carol is no longer the wallet",
        devnet
            .usdc()
            .transfer(s.carol, U256::from(1))
            .from(s.dave)
            .send(),
    )
    .await
    .unwrap();

    // Feedback, a revocation, responses.
    let reputation = devnet.reputation();
    confirm(
        "feedback 1",
        reputation
            .giveFeedback(
                id,
                90,
                0,
                "quality".into(),
                "a".into(),
                "https://e".into(),
                "ipfs://f1".into(),
                B256::repeat_byte(1),
            )
            .from(s.dave)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "feedback 2",
        reputation
            .giveFeedback(
                id,
                -250,
                2,
                "speed".into(),
                "".into(),
                "".into(),
                "".into(),
                B256::ZERO,
            )
            .from(s.dave)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "feedback 3",
        reputation
            .giveFeedback(
                id,
                70,
                0,
                "quality".into(),
                "".into(),
                "".into(),
                "".into(),
                B256::ZERO,
            )
            .from(s.frank)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "revoke",
        reputation.revokeFeedback(id, 1).from(s.dave).send(),
    )
    .await
    .unwrap();
    confirm(
        "response",
        reputation
            .appendResponse(id, s.dave, 2, "ipfs://r1".into(), B256::repeat_byte(2))
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "response again",
        reputation
            .appendResponse(id, s.dave, 2, "ipfs://r2".into(), B256::repeat_byte(3))
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();

    // Validation with repeated responses, a zero among them.
    let validation = devnet.validation();
    let request = B256::repeat_byte(0x42);
    confirm(
        "request",
        validation
            .validationRequest(s.grace, id, "ipfs://req".into(), request)
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "fail",
        validation
            .validationResponse(request, 0, "ipfs://v0".into(), B256::ZERO, "zk".into())
            .from(s.grace)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "pass",
        validation
            .validationResponse(request, 100, "ipfs://v1".into(), B256::ZERO, "zk".into())
            .from(s.grace)
            .send(),
    )
    .await
    .unwrap();

    // A transfer clears the wallet: payments to frank stop counting.
    confirm(
        "transfer identity",
        identity
            .transferFrom(s.carol, s.dave, id)
            .from(s.carol)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "after transfer",
        devnet
            .usdc()
            .transfer(s.frank, U256::from(1000))
            .from(s.erin)
            .send(),
    )
    .await
    .unwrap();
    id
}
