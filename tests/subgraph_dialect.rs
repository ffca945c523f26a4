//! The subgraph endpoint's graph-node dialect, read by the npm `graphql-request` client: the
//! entities' ids and types, the chain's truth where the public subgraph differs (operators
//! approved for all tokens, metadata set while registering), feedback with responses,
//! validations, pages that stay whole when many agents share a sort key, `_meta`, the `block`
//! argument, graph-node's error wording, and `updatedAt` (kept by the writer) against the same
//! time computed from the facts, in the order the agent0 SDK's default page reads it.

use crate::support;

use agentindex_contracts::{Devnet, IdentityRegistry};
use alloy::primitives::{Address, Bytes};
use alloy::providers::Provider;
use alloy::sol_types::SolCall;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use support::graphql::{data, gql};

mod updated_at;

/// One request's first error message (`tools/graphql/query.mjs` reports each error's message).
fn error(endpoint: &str, query: &str) -> String {
    let answer = gql(endpoint, json!([{ "query": query }])).remove(0);
    answer["errors"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{query} should fail: {answer}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_subgraph_endpoint_speaks_graph_nodes_dialect() {
    let devnet = Devnet::start().await.unwrap();
    let s = support::scenario::run(&devnet).await;
    let chain = devnet.chain_id();
    let hex = |a: Address| format!("{a:#x}");
    // Five agents registered in one block: one createdAt, told apart by id only.
    support::chain::mine(&devnet, 1).await;
    let identity = devnet.deployment().identity;
    let calls: Vec<(support::chain::Call, u64)> = (0..5)
        .map(|n| {
            let input = IdentityRegistry::register_2Call {
                agentURI: format!("ipfs://same-block-{n}"),
            }
            .abi_encode();
            ((s.grace, identity, Bytes::from(input)), 0)
        })
        .collect();
    support::chain::reorg(&devnet, 1, &calls).await;
    // Bob rates the agent with a feedback file served over http.
    let server = support::doc_server::DocServer::start().await;
    let file = json!({
        "agentId": s.erc8004_id.to::<u64>(), "text": "quick and right", "tag2": "from-the-file",
        "mcp": { "tool": "get_weather" }, "a2a": { "skills": ["forecast"], "taskId": "t9" }
    })
    .to_string();
    let file_url = server.route(
        "/feedback.json",
        support::doc_server::Route::Body("application/json", file.clone().into_bytes()),
    );
    agentindex_contracts::confirm(
        "feedback with a file",
        devnet
            .reputation()
            .giveFeedback(
                s.erc8004_id,
                90,
                0,
                "starred".into(),
                String::new(),
                String::new(),
                file_url.clone(),
                alloy::primitives::keccak256(file.as_bytes()),
            )
            .from(s.bob)
            .send(),
    )
    .await
    .unwrap();
    // The agent's owner (dave, since the scenario's transfer) approves bob for all its tokens.
    agentindex_contracts::confirm(
        "approval for all",
        devnet
            .identity()
            .setApprovalForAll(s.bob, true)
            .from(s.dave)
            .send(),
    )
    .await
    .unwrap();

    // Grace registers an agent, and an hour later sets its metadata: that agent's newest fact
    // is the metadata, whose event's time `updatedAt` must then be.
    let registered = agentindex_contracts::confirm(
        "register",
        devnet
            .identity()
            .register_2("ipfs://touched-later".into())
            .from(s.grace)
            .send(),
    )
    .await
    .unwrap();
    let touched = agentindex_contracts::demo::first_event::<IdentityRegistry::Registered>(
        &registered,
        "Registered",
    )
    .unwrap()
    .agentId;
    let _: Value = devnet
        .provider()
        .raw_request("evm_increaseTime".into(), (3_600,))
        .await
        .unwrap();
    agentindex_contracts::confirm(
        "setMetadata an hour later",
        devnet
            .identity()
            .setMetadata(touched, "mood".into(), Bytes::from_static(b"busy"))
            .from(s.grace)
            .send(),
    )
    .await
    .unwrap();

    let index = support::indexed_with_documents(&devnet).await;
    let served = support::api::serve(support::open(&index.db).await, &index.config).await;
    let endpoint = format!("{}/subgraphs/name/agent0/{chain}", served.base);
    let agent_id = format!("{chain}:{}", s.erc8004_id);

    // The scenario's agent, as the chain has it.
    let agent = data(
        &endpoint,
        "query($id: ID!) { agent(id: $id) { id chainId agentId owner operators agentURI agentURIType
            totalFeedback metadata { id key value } } }",
        json!({ "id": agent_id }),
    )["agent"]
        .clone();
    assert_eq!(agent["id"], agent_id);
    assert_eq!(agent["chainId"], chain.to_string(), "BigInt as a string");
    assert_eq!(agent["agentId"], s.erc8004_id.to_string());
    assert_eq!(
        agent["owner"],
        hex(s.dave),
        "Bytes as lower-case hex; the scenario transferred the agent to dave"
    );
    assert_eq!(agent["agentURI"], "ipfs://reg-2");
    assert_eq!(agent["agentURIType"], "ipfs");
    let operators: BTreeSet<&str> = agent["operators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert!(
        operators.contains(hex(s.bob).as_str()),
        "the operator approved for all the owner's tokens, which the public subgraph ignores: {operators:?}"
    );
    let metadata: Vec<(String, String)> = agent["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap().to_string(),
                m["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        metadata.contains(&(
            "role".into(),
            format!("0x{}", alloy::hex::encode("translator"))
        )),
        "metadata set while registering is kept: {metadata:?}"
    );
    assert!(metadata.iter().any(|(k, _)| k == "skills"));

    // Feedback with graph-node's ids and decimals, revocations and responses.
    let feedback = data(
        &endpoint,
        "query($id: String!) { feedbacks(where: { agent: $id }, orderBy: createdAt) {
            id clientAddress feedbackIndex value isRevoked revokedAt
            responses(orderBy: createdAt) { id responder responseUri } } }",
        json!({ "id": agent_id }),
    )["feedbacks"]
        .clone();
    let feedback = feedback.as_array().unwrap();
    assert_eq!(feedback.len(), 4);
    let answered = feedback
        .iter()
        .find(|f| f["responses"].as_array().is_some_and(|r| r.len() == 2))
        .expect("the feedback with two responses");
    assert_eq!(
        answered["id"],
        format!("{agent_id}:{}:2", hex(s.dave)),
        "chainId:agentId:client:index"
    );
    assert_eq!(answered["value"], "-2.5", "-250 with 2 decimals");
    assert!(
        answered["responses"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{agent_id}:{}:2:0x", hex(s.dave))),
        "feedbackId:txHash:logIndex"
    );
    assert_eq!(answered["responses"][0]["responseUri"], "ipfs://r1");
    let revoked: Vec<&Value> = feedback.iter().filter(|f| f["isRevoked"] == true).collect();
    assert_eq!(revoked.len(), 1);
    assert!(revoked[0]["revokedAt"].as_str().is_some());
    assert_eq!(
        agent["totalFeedback"], "3",
        "feedback not revoked, as the subgraph counts it"
    );
    let kept = data(
        &endpoint,
        "query($id: String!) { feedbacks(where: { agent: $id, isRevoked: false }) { id } }",
        json!({ "id": agent_id }),
    );
    assert_eq!(kept["feedbacks"].as_array().unwrap().len(), 3);
    // A feedback file over http, which the public subgraph reads only from IPFS.
    let rated = data(
        &endpoint,
        "query($client: Bytes!) { feedbacks(where: { clientAddress: $client }) {
            value tag1 feedbackURI feedbackURIType
            feedbackFile { id feedbackId text mcpTool a2aSkills a2aTaskId tag1 tag2 } } }",
        json!({ "client": hex(s.bob) }),
    )["feedbacks"][0]
        .clone();
    assert_eq!(rated["value"], "90");
    assert_eq!(rated["feedbackURIType"], "http");
    let file = &rated["feedbackFile"];
    assert_eq!(file["feedbackId"], format!("{agent_id}:{}:1", hex(s.bob)));
    assert!(
        file["id"]
            .as_str()
            .unwrap()
            .ends_with(&format!(":{file_url}"))
    );
    assert_eq!(file["text"], "quick and right");
    assert_eq!(file["mcpTool"], "get_weather");
    assert_eq!(file["a2aSkills"], json!(["forecast"]));
    assert_eq!(file["a2aTaskId"], "t9");
    assert_eq!(file["tag1"], Value::Null, "the chain's tag1 stands");
    assert_eq!(
        file["tag2"], "from-the-file",
        "the file's tag2 where the chain has none"
    );

    // Validations, which the public subgraph leaves out.
    let validations = data(
        &endpoint,
        "query($id: ID!) { agent(id: $id) { validations { validatorAddress response status } } }",
        json!({ "id": agent_id }),
    )["agent"]["validations"]
        .clone();
    assert_eq!(validations[0]["validatorAddress"], hex(s.grace));
    assert_eq!(validations[0]["status"], "COMPLETED");
    assert_eq!(validations[0]["response"], 100, "the latest response");

    // Pages of two through agents sharing one createdAt: whole, in order, none twice.
    let all = data(
        &endpoint,
        "{ agents(first: 1000, orderBy: createdAt, orderDirection: desc) { id createdAt } }",
        json!({}),
    )["agents"]
        .clone();
    let all: Vec<String> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        all.len(),
        7,
        "the scenario's agent, the five of one block and grace's later one"
    );
    let mut paged = Vec::new();
    for skip in (0..all.len()).step_by(2) {
        let page = data(
            &endpoint,
            "query($skip: Int!) { agents(first: 2, skip: $skip, orderBy: createdAt, orderDirection: desc) { id } }",
            json!({ "skip": skip }),
        );
        paged.extend(
            page["agents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["id"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(paged, all, "pages put together are the whole list");
    // Grace's later agent first, then the five of one block.
    let tied: Vec<&String> = all[1..6].iter().collect();
    let mut sorted = tied.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(tied, sorted, "ties broken by id, in the order's direction");

    // The stats entities.
    let stats = data(
        &endpoint,
        "query($id: ID!) { globalStats(id: \"global\") { totalAgents totalFeedback totalValidations }
            agentStats(id: $id) { totalFeedback averageFeedbackValue totalValidations completedValidations }
            protocol(id: \"31337\") { chainId totalAgents identityRegistry } }",
        json!({ "id": agent_id }),
    );
    assert_eq!(
        stats["globalStats"],
        json!({ "totalAgents": "7", "totalFeedback": "4", "totalValidations": "1" })
    );
    assert_eq!(stats["agentStats"]["totalFeedback"], "3");
    assert_eq!(stats["agentStats"]["completedValidations"], "1");
    assert_eq!(stats["protocol"]["totalAgents"], "7");
    assert_eq!(
        stats["protocol"]["identityRegistry"],
        hex(devnet.deployment().identity)
    );

    // _meta and the block argument, against the index's own status.
    let status = data(
        &format!("{}/graphql", served.base),
        "{ indexerStatus { chainId indexedBlock } }",
        json!({}),
    );
    let indexed = status["indexerStatus"][0]["indexedBlock"].as_i64().unwrap();
    let meta = data(
        &endpoint,
        "{ _meta { block { number hash } deployment hasIndexingErrors } }",
        json!({}),
    );
    assert_eq!(meta["_meta"]["block"]["number"], indexed);
    assert!(
        meta["_meta"]["block"]["hash"]
            .as_str()
            .unwrap()
            .starts_with("0x")
    );
    let at_head = data(
        &endpoint,
        "query($b: Int!) { agents(block: { number: $b }, first: 1) { id } }",
        json!({ "b": indexed }),
    );
    assert_eq!(at_head["agents"].as_array().unwrap().len(), 1);
    assert!(
        error(
            &endpoint,
            &format!(
                "{{ agents(block: {{ number: {} }}) {{ id }} }}",
                indexed + 10
            )
        )
        .contains("is therefore not yet available")
    );

    // graph-node's words for what it refuses.
    assert_eq!(
        error(&endpoint, "{ agents { id nickname } }"),
        "Type `Agent` has no field `nickname`"
    );
    assert_eq!(
        error(&endpoint, "{ agents(where: { nickname: \"x\" }) { id } }"),
        "Type `Agent_filter` has no field `nickname`"
    );
    assert_eq!(
        error(&endpoint, "{ agents(first: 1001) { id } }"),
        "The `first` argument must be between 0 and 1000, but is 1001"
    );

    // GET with the query in the URL, as graph-node takes it; another chain has nothing.
    let client = reqwest::Client::new();
    let in_url = |base: &str, query: &str| {
        url::Url::parse_with_params(base, &[("query", query)])
            .unwrap()
            .to_string()
    };
    let got: Value = client
        .get(in_url(
            &endpoint,
            "{ agents(first: 1, orderBy: createdAt) { id } }",
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got["data"]["agents"][0]["id"], agent_id);
    let other = data(
        &format!("{}/subgraphs/name/agent0/1", served.base),
        "{ agents { id } }",
        json!({}),
    );
    assert_eq!(other["agents"], json!([]));
    let not_a_chain = client
        .get(in_url(
            &format!("{}/subgraphs/name/agent0/base", served.base),
            "{ agents { id } }",
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(not_a_chain.status(), 404);

    // `updatedAt` is the activity the writer keeps per agent (batch by batch and through the
    // reorg above), which must be what the facts say, in the SDK's default page's order.
    let from_facts = updated_at::matches_the_facts(&endpoint, chain, &index.db).await;

    // The GraphQL API's `lastActiveAt` reads the same activity; the rated agent's newest is
    // the feedback, after its own last event.
    let nodes = data(
        &format!("{}/graphql", served.base),
        "{ agents(first: 100) { edges { node { tokenId lastEventBlock lastActivityBlock lastActiveAt } } } }",
        json!({}),
    )["agents"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| edge["node"].clone())
        .collect::<Vec<Value>>();
    let active: BTreeSet<(String, String)> = nodes
        .iter()
        .filter_map(|n| {
            Some((
                n["tokenId"].as_str()?.to_string(),
                n["lastActiveAt"].as_i64()?.to_string(),
            ))
        })
        .collect();
    assert_eq!(
        active, from_facts,
        "lastActiveAt of every ERC-8004 agent is its newest fact's time"
    );
    let rated = nodes
        .iter()
        .find(|n| n["tokenId"] == json!(s.erc8004_id.to_string()))
        .expect("the rated agent is listed");
    assert!(
        rated["lastActivityBlock"].as_i64().unwrap() > rated["lastEventBlock"].as_i64().unwrap(),
        "the feedback came after the agent's own last event: {rated}"
    );
    served.stop().await;
}
