//! The attacks seen on live ERC-8004 feedback and x402 payments, played on anvil against the
//! real contracts, each a property that fails without its rule (`docs/reputation.md`):
//!
//! - spam: fifty top ratings from clients that never paid rank below five good ratings from
//!   paying clients, on the feedback component and on the composite;
//! - sybil payers: an agent paid once each by fresh wallets, all funded by one account just
//!   before and paying nothing else, ranks below an agent paid by six wallets that also pay
//!   other agents, with 30 fresh wallets and with 300;
//! - borrowed proofs: a feedback file's proof of payment makes its feedback count as paid only
//!   when the file is the one the chain committed to and the payment was not claimed first by
//!   another client.

use crate::support;
use crate::support::doc_server::{DocServer, Route};
use crate::support::wallets::{fresh_wallet, pay_signed};
use agentindex_contracts::{Devnet, DevnetOptions, confirm, demo, signing};
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::Evidence;
use agentindex_indexer::store::{AgentReputation, Store, StoreRead};
use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::signers::local::PrivateKeySigner;

async fn give_feedback(devnet: &Devnet, client: Address, agent: U256, value: i128) {
    give_feedback_with_file(devnet, client, agent, value, "", B256::ZERO).await;
}

async fn give_feedback_with_file(
    devnet: &Devnet,
    client: Address,
    agent: U256,
    value: i128,
    uri: &str,
    hash: B256,
) {
    confirm(
        "giving feedback",
        devnet
            .reputation()
            .giveFeedback(
                agent,
                value,
                0,
                "quality".into(),
                String::new(),
                String::new(),
                uri.to_string(),
                hash,
            )
            .from(client)
            .send(),
    )
    .await
    .unwrap();
}

async fn stored(store: &Store, key: &str) -> AgentReputation {
    store
        .reputation(key)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{key} has a stored reputation"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_unpaid_top_ratings_rank_below_five_good_ratings_from_paying_clients() {
    let devnet = Devnet::start_with(DevnetOptions {
        accounts: 70,
        ..DevnetOptions::default()
    })
    .await
    .unwrap();
    let a = devnet.accounts();
    let facilitator = a[0];
    let spammed = demo::via_erc8004(&devnet, a[1], "ipfs://spammed")
        .await
        .unwrap();
    let earned = demo::via_erc8004(&devnet, a[2], "ipfs://earned")
        .await
        .unwrap();
    demo::set_agent_wallet(&devnet, a[2], earned, 4)
        .await
        .unwrap();
    // Five customers pay the earned agent over x402, then rate it 80.
    for customer in 5..10 {
        pay_signed(
            &devnet,
            devnet.signer(customer),
            facilitator,
            a[4],
            2_000_000,
        )
        .await;
        give_feedback(&devnet, a[customer], earned, 80).await;
    }
    // Fifty clients that never paid anyone rate the spammed agent 100.
    for client in &a[20..70] {
        give_feedback(&devnet, *client, spammed, 100).await;
    }

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    let key = |id| AgentKey::erc8004(devnet.chain_id(), devnet.deployment().identity, id);
    let spam = stored(&store, &key(spammed).to_string()).await;
    let good = stored(&store, &key(earned).to_string()).await;

    let component = |r: &AgentReputation| r.evaluation.composite.components.feedback.unwrap();
    assert!(
        component(&good) > component(&spam),
        "feedback component: earned {} against spammed {}",
        component(&good),
        component(&spam)
    );
    assert!(
        good.score > spam.score,
        "composite: earned {} against spammed {}",
        good.score,
        spam.score
    );
    // Without the rule the plain averages say the opposite.
    assert!(spam.evaluation.feedback.overall.average > good.evaluation.feedback.overall.average);
    // Every feedback's weight and reason are in the evaluation the feed publishes.
    let reasons = |r: &AgentReputation| -> Vec<Evidence> {
        r.evaluation
            .feedback_evidence
            .feedback
            .iter()
            .map(|f| f.evidence)
            .collect()
    };
    assert_eq!(reasons(&good), vec![Evidence::Paid; 5]);
    assert!(
        reasons(&spam).iter().all(|e| *e == Evidence::Burst),
        "fifty first-time unpaid clients within minutes are a burst: {:?}",
        reasons(&spam)
    );

    // The API shows the same weights and reasons, and ranks the earned agent first.
    let config = support::config(&devnet, &db, 0);
    let served = support::api::serve(store.clone(), &config).await;
    let endpoint = format!("{}/graphql", served.base);
    let query = "query($id: ID!) { agent(id: $id) { reputation { score
        components { feedback } weights { feedback }
        feedbackEvidence { paidClients burstClients unpaidScale
          feedback { client evidence weight } top { evidence pull } } } } }";
    let shown = |id: U256| {
        support::graphql::data(
            &endpoint,
            query,
            serde_json::json!({ "id": key(id).to_string() }),
        )["agent"]["reputation"]
            .clone()
    };
    let (spam_shown, good_shown) = (shown(spammed), shown(earned));
    assert_eq!(good_shown["feedbackEvidence"]["paidClients"], 5);
    assert_eq!(spam_shown["feedbackEvidence"]["burstClients"], 50);
    let listed = spam_shown["feedbackEvidence"]["feedback"]
        .as_array()
        .unwrap();
    assert_eq!(listed.len(), 50, "every feedback is listed");
    assert!(listed.iter().all(|f| f["evidence"] == "burst"));
    assert_eq!(
        spam_shown["components"]["feedback"].as_f64(),
        spam.evaluation.composite.components.feedback
    );
    assert!(good_shown["score"].as_f64() > spam_shown["score"].as_f64());
    served.stop().await;
    store.close().await;
}

/// Six wallets pay the honest agent and two other agents they share; `sybils` fresh wallets,
/// funded by one account just before, pay the sybil agent once each. Returns the stored
/// reputation of (honest, sybil).
async fn sybil_round(sybils: usize) -> (AgentReputation, AgentReputation) {
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let (owner, funder, facilitator) = (a[1], a[2], a[0]);
    let mut agents = Vec::new();
    for name in ["Honest", "Shared X", "Shared Y", "Sybil"] {
        let card = demo::sample_card(&devnet, name, None);
        agents.push(demo::via_factory(&devnet, owner, card).await.unwrap());
    }
    let (honest, sybil) = (agents[0], agents[3]);
    for customer in 3..9 {
        for agent in &agents[..3] {
            pay_signed(
                &devnet,
                devnet.signer(customer),
                facilitator,
                *agent,
                1_000_000,
            )
            .await;
        }
    }
    let wallets: Vec<PrivateKeySigner> = (0..sybils).map(|i| fresh_wallet("sybil", i)).collect();
    for wallet in &wallets {
        let usdc = devnet.usdc();
        let fund = usdc
            .transfer(wallet.address(), U256::from(1_000_000u64))
            .from(funder);
        confirm("funding a fresh wallet", fund.send())
            .await
            .unwrap();
    }
    for wallet in &wallets {
        pay_signed(&devnet, wallet, facilitator, sybil, 1_000_000).await;
    }

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 0);
    // The rank as of the indexed block itself, so that it sees every payment of the test.
    config.reputation.trust.interval_blocks = 1;
    support::index_until_synced(&config).await;
    let store = support::open(&db).await;
    let key = |agent| AgentKey::contract(devnet.chain_id(), agent).to_string();
    let result = (
        stored(&store, &key(honest)).await,
        stored(&store, &key(sybil)).await,
    );
    store.close().await;
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_wallets_paying_once_rank_below_customers_who_pay_others_too() {
    for sybils in [30, 300] {
        let (honest, sybil) = sybil_round(sybils).await;
        // Thirty wallets filled by one account just before they pay are one funding cluster,
        // one payer; three hundred make their funder a hub (an exchange would fund as many),
        // whose customers each stay a payer of their own.
        let payers = if sybils < 50 { 1 } else { sybils as u64 };
        assert_eq!(sybil.evaluation.payments.unique_payers, payers);
        assert!(
            honest.score > sybil.score,
            "{sybils} fresh wallets: honest {} against sybil {}",
            honest.score,
            sybil.score
        );
        let trust = |r: &AgentReputation| r.evaluation.trust.clone().expect("the rank spoke");
        assert_eq!(trust(&sybil).relative, 0.0, "fresh wallets pass no trust");
        assert!(trust(&honest).relative > 0.0);
        assert!(!trust(&honest).top_payers.is_empty());
        // Without standing, the fresh wallets' sum is capped.
        let capped = &sybil.evaluation.payment_score;
        assert!(capped.unproven > capped.sum, "{capped:?}");
    }
}

/// An ERC-8004 feedback file from `client` for `agent`, citing `tx` paid by `from` to `to`.
fn feedback_file(
    devnet: &Devnet,
    agent: U256,
    client: Address,
    proof: (B256, Address, Address),
) -> Vec<u8> {
    let chain = devnet.chain_id();
    let (tx, from, to) = proof;
    serde_json::to_vec(&serde_json::json!({
        "agentRegistry": format!("eip155:{chain}:{:#x}", devnet.deployment().identity),
        "agentId": agent.to::<u64>(),
        "clientAddress": format!("eip155:{chain}:{client:#x}"),
        "createdAt": "2026-11-25T00:00:00Z",
        "value": 90,
        "valueDecimals": 0,
        "proofOfPayment": {
            "fromAddress": format!("{from:#x}"),
            "toAddress": format!("{to:#x}"),
            "chainId": chain.to_string(),
            "txHash": format!("{tx:#x}"),
        },
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feedback_file_proving_a_payment_from_another_wallet_counts_it_once() {
    let devnet = Devnet::start_with(DevnetOptions {
        accounts: 12,
        ..DevnetOptions::default()
    })
    .await
    .unwrap();
    let a = devnet.accounts();
    let agent = demo::via_erc8004(&devnet, a[1], "ipfs://proven")
        .await
        .unwrap();
    demo::set_agent_wallet(&devnet, a[1], agent, 4)
        .await
        .unwrap();
    // The customer pays over x402 from its payment wallet (a[5]) and rates from another
    // address (a[6]), whose file cites the payment.
    let nonce = signing::nonce("a customer pays from its wallet");
    let receipt = demo::pay_signed_by(
        &devnet,
        devnet.signer(5),
        a[0],
        a[4],
        U256::from(2_000_000u64),
        nonce,
    )
    .await
    .unwrap();
    let proof = (receipt.transaction_hash, a[5], a[4]);
    let docs = DocServer::start().await;
    let serve = |path: &str, bytes: Vec<u8>| {
        let hash = keccak256(&bytes);
        (
            docs.route(path, Route::Body("application/json", bytes)),
            hash,
        )
    };
    let (uri, hash) = serve("/customer.json", feedback_file(&devnet, agent, a[6], proof));
    give_feedback_with_file(&devnet, a[6], agent, 90, &uri, hash).await;
    // Another client copies the proof: the payment already vouched for the customer.
    let (uri, hash) = serve("/copier.json", feedback_file(&devnet, agent, a[7], proof));
    give_feedback_with_file(&devnet, a[7], agent, 90, &uri, hash).await;
    // A file whose bytes are not the ones the chain committed to proves nothing.
    let (uri, _) = serve("/swapped.json", feedback_file(&devnet, agent, a[8], proof));
    give_feedback_with_file(&devnet, a[8], agent, 90, &uri, B256::repeat_byte(9)).await;
    // A file written for another client proves nothing for this one.
    let (uri, hash) = serve("/misfiled.json", feedback_file(&devnet, agent, a[6], proof));
    give_feedback_with_file(&devnet, a[9], agent, 90, &uri, hash).await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config(&devnet, &db, 0);
    config.documents.allow_private_addresses = true;
    support::index_with_documents(&config).await;
    let store = support::open(&db).await;
    let key = AgentKey::erc8004(devnet.chain_id(), devnet.deployment().identity, agent).to_string();
    let stored = stored(&store, &key).await;
    let reasons: Vec<(Address, Evidence, Option<B256>)> = stored
        .evaluation
        .feedback_evidence
        .feedback
        .iter()
        .map(|f| (f.client, f.evidence, f.proof))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (a[6], Evidence::Proven, Some(receipt.transaction_hash)),
            (a[7], Evidence::Unpaid, None),
            (a[8], Evidence::Unpaid, None),
            (a[9], Evidence::Unpaid, None),
        ]
    );
    assert!(
        docs.hits("/customer.json") >= 1,
        "the feedback file was fetched"
    );

    let served = support::api::serve(store.clone(), &config).await;
    let shown = support::graphql::data(
        &format!("{}/graphql", served.base),
        "query($id: ID!) { agent(id: $id) { reputation { feedbackEvidence {
            paidClients provenClients unpaidClients feedback { client evidence proofTxHash } } } } }",
        serde_json::json!({ "id": key }),
    )["agent"]["reputation"]["feedbackEvidence"]
        .clone();
    assert_eq!(shown["provenClients"], 1);
    assert_eq!(shown["unpaidClients"], 3);
    assert_eq!(
        shown["feedback"][0]["proofTxHash"],
        format!("{:#x}", receipt.transaction_hash)
    );
    served.stop().await;
    store.close().await;
}
