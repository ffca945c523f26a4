//! Masumi's agent registry on Cardano, end to end. No Cardano node runs here: the chain is
//! built with pycardano (real policy ids, asset names, CBOR metadata and transaction hashes, in
//! the shapes Masumi's registry service and contracts write) and served by the Blockfrost
//! emulator (`tools/cardano/`), whose every answer is checked against Blockfrost's official
//! OpenAPI schema and read by the official JS client too. agentindex reads it through the
//! Blockfrost client crate, as it reads Blockfrost itself.

use crate::support::api::serve;
use crate::support::blockfrost::Emulator;
use crate::support::doc_server::{DocServer, Route};
use crate::support::{self, assert_same_index, database_url, dump};
use agentindex_indexer::primitives::CardanoNetwork;
use serde_json::{Value, json};

/// An A2A v1.0 Agent Card.
fn card(name: &str) -> Value {
    json!({
        "name": name, "description": "Answers with cards", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://cards.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "card-lookup", "name": "Lookup", "description": "finds cards", "tags": ["cards"], "examples": []}]
    })
}

/// What the API says of every Masumi agent, by id.
const MASUMI_AGENTS: &str =
    "query { agents(filter: {sources: [MASUMI]}, first: 20) { totalCount edges { node {
    id chainId caip2 source name description owner active registry tokenId registeredBlock
    card { url status } skills { id }
    masumi { unit policyId assetName registryVersion updates deregisteredBlock metadataVariant
             metadataVersion apiUrl agentCardUrl a2aProtocolVersions tags
             pricing { pricingType fixed { amount unit } } author { name contactEmail organization }
             legal { privacyPolicy terms } capability { name version } exampleOutputs { url }
             unknownFields lints metadataError } } } } }";

async fn agents_by_unit(base: &str) -> (i64, std::collections::BTreeMap<String, Value>) {
    let answer = support::api::post_json(
        &format!("{base}/graphql"),
        &json!({ "query": MASUMI_AGENTS }),
    )
    .await;
    assert!(answer.get("errors").is_none(), "{answer}");
    let agents = &answer["data"]["agents"];
    let by_unit = agents["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| {
            let node = edge["node"].clone();
            (node["masumi"]["unit"].as_str().unwrap().to_string(), node)
        })
        .collect();
    (agents["totalCount"].as_i64().unwrap(), by_unit)
}

fn lint_codes(agent: &Value) -> Vec<String> {
    agent["masumi"]["lints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["code"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masumi_agents_are_found_with_their_metadata_cards_and_history() {
    let emulator = Emulator::start(&[]).await;
    let docs = DocServer::start().await;
    let card_url = docs.route(
        "/card.json",
        Route::Body(
            "application/json",
            card("Card agent (from its card)").to_string().into_bytes(),
        ),
    );
    let long = "Summarises long documents into short ones, for people with little time to read.";
    assert!(long.len() > 64, "the description needs chunking");
    let v1 = emulator
        .register(
            "v1",
            json!({
                "name": "Summariser", "description": long, "api_base_url": "https://summariser.example/api",
                "image": "https://summariser.example/logo.png",
                "author": {"name": "Ada", "contact_email": "ada@example.org", "organization": "Lovelace Ltd"},
                "legal": {"privacy_policy": "https://summariser.example/privacy", "terms": "https://summariser.example/terms"},
                "capability": {"name": "summary-model", "version": "2.1"},
                "tags": ["summaries", "text"],
                "example_output": [{"name": "sample", "mime_type": "text/plain", "url": "https://summariser.example/sample.txt"}],
                "agentPricing": {"pricingType": "Fixed", "fixedPricing": [{"amount": "5000000", "unit": ""}]},
                "metadata_version": "1"
            }),
        )
        .await;
    let a2a = emulator
        .register(
            "v2",
            json!({
                "name": "Card agent", "description": "Speaks A2A", "api_url": docs.base,
                "agent_card_url": card_url, "a2a_protocol_versions": ["1.0"], "tags": ["cards"],
                "metadata_version": "2", "colour": "blue"
            }),
        )
        .await;
    let paid = emulator
        .register(
            "v2",
            json!({
                "name": "Paid agent", "description": "Charges per call", "api_base_url": "https://paid.example",
                "metadata_version": "2",
                "supported_payment_sources": [{"chain": "Cardano", "network": "Preprod"}]
            }),
        )
        .await;
    let updated = emulator
        .control(
            "registry/update",
            json!({"unit": paid, "metadata": {
                "name": "Paid agent, renamed", "description": "Charges per call", "api_base_url": "https://paid.example",
                "metadata_version": "2", "supported_payment_sources": [{"chain": "Cardano", "network": "Preprod"}]
            }}),
        )
        .await["unit"]
        .as_str()
        .unwrap()
        .to_string();
    let gone = emulator
        .register(
            "v1",
            json!({"name": "Short-lived", "description": "here and gone"}),
        )
        .await;
    emulator
        .control("registry/deregister", json!({"unit": gone}))
        .await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("masumi.db");
    let config = emulator.config(&db, "").await;
    support::index_with_documents(&config).await;
    let served = serve(support::open(&db).await, &config).await;
    let (total, agents) = agents_by_unit(&served.base).await;
    assert_eq!(total, 4, "{agents:#?}");
    let preprod = CardanoNetwork::Preprod;

    let summariser = &agents[&v1];
    assert_eq!(summariser["id"], format!("{}:{v1}", preprod.chain_id()));
    assert_eq!(summariser["chainId"], preprod.chain_id());
    assert_eq!(summariser["caip2"], "cip34:0-1");
    assert_eq!(summariser["source"], "MASUMI");
    assert_eq!(summariser["description"], long, "chunks joined");
    assert!(
        summariser["owner"]
            .as_str()
            .unwrap()
            .starts_with("addr_test1")
    );
    let m = &summariser["masumi"];
    assert_eq!(
        (m["registryVersion"].as_i64(), m["metadataVariant"].as_str()),
        (Some(1), Some("v1"))
    );
    assert_eq!(
        m["pricing"],
        json!({"pricingType": "Fixed", "fixed": [{"amount": "5000000", "unit": "lovelace"}]})
    );
    assert_eq!(
        m["author"],
        json!({"name": "Ada", "contactEmail": "ada@example.org", "organization": "Lovelace Ltd"})
    );
    assert_eq!(
        m["capability"],
        json!({"name": "summary-model", "version": "2.1"})
    );
    assert_eq!(m["tags"], json!(["summaries", "text"]));
    assert!(lint_codes(summariser).contains(&"json.string.chunked".to_string()));

    let card_agent = &agents[&a2a];
    let stem = &a2a[..a2a.len() - 6];
    assert_eq!(
        card_agent["id"],
        format!("{}:{stem}", preprod.chain_id()),
        "a V2 agent is named without its version"
    );
    assert_eq!(card_agent["masumi"]["metadataVariant"], "a2a");
    assert_eq!(card_agent["card"]["status"], "ok", "{card_agent}");
    assert_eq!(
        card_agent["name"], "Card agent (from its card)",
        "the card's name wins, as for EVM agents"
    );
    assert_eq!(card_agent["skills"], json!([{"id": "card-lookup"}]));
    assert_eq!(
        card_agent["masumi"]["unknownFields"],
        json!({"colour": "blue"})
    );
    assert!(lint_codes(card_agent).contains(&"masumi.field.unknown".to_string()));
    assert_eq!(docs.hits("/card.json"), 1, "the card is fetched once");

    let renamed = &agents[&updated];
    assert_ne!(updated, paid, "an update mints the next version");
    assert_eq!(&updated[..updated.len() - 6], &paid[..paid.len() - 6]);
    assert_eq!(renamed["name"], "Paid agent, renamed");
    assert_eq!(renamed["masumi"]["updates"], 1);
    assert_eq!(renamed["masumi"]["metadataVariant"], "v2");
    assert_eq!(renamed["tokenId"], updated[56..]);
    assert_eq!(renamed["active"], true);

    let ended = &agents[&gone];
    assert_eq!(ended["active"], false, "a burned NFT ends the agent");
    assert!(
        ended["masumi"]["deregisteredBlock"].as_i64().unwrap()
            > ended["registeredBlock"].as_i64().unwrap()
    );

    // One agent by id, as SDKs ask.
    let one = support::api::post_json(
        &format!("{}/graphql", served.base),
        &json!({"query": "query($id: ID!) { agent(id: $id) { name masumi { unit } } }", "variables": {"id": card_agent["id"]}}),
    )
    .await;
    assert_eq!(one["data"]["agent"]["masumi"]["unit"], a2a, "{one}");
    // The metadata's tags find an agent as a card's skill tags do.
    crate::masumi_tags::find_agents(
        &served.base,
        summariser["id"].as_str().unwrap(),
        card_agent["id"].as_str().unwrap(),
    )
    .await;
    served.stop().await;

    emulator.assert_valid_answers().await;
    // The official client reads the same chain: its policy lists every NFT agentindex saw.
    let info = emulator.info().await;
    let read = emulator
        .read_with_blockfrost_js(json!({"policy": info["policy_ids"]["v2"], "unit": updated}));
    let units: Vec<&str> = read["policy_assets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["asset"].as_str())
        .collect();
    for unit in [&a2a, &paid, &updated] {
        assert!(units.contains(&unit.as_str()), "{unit} not in {units:?}");
    }
    assert_eq!(
        read["asset"]["onchain_metadata"]["name"],
        "Paid agent, renamed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_of_three_blocks_is_undone_exactly() {
    let emulator = Emulator::start(&[]).await;
    let named = |name: &str| json!({"name": name, "description": format!("{name} does things")});
    let a = emulator.register("v2", named("a")).await;
    let b = emulator.register("v2", named("b")).await;
    let c = emulator.register("v1", named("c")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("followed.db");
    let followed = emulator.config(&db, "").await;
    support::index_until_synced(&followed).await;

    let paid = emulator
        .control("escrow/lock", json!({"agent_unit": a, "contract": "v2"}))
        .await["escrow_id"]
        .as_str()
        .unwrap()
        .to_string();
    // Three blocks the follower reads, then loses (a refund among them).
    emulator
        .control(
            "registry/update",
            json!({"unit": a, "metadata": named("a, renamed")}),
        )
        .await;
    emulator
        .control("registry/deregister", json!({"unit": c}))
        .await;
    emulator
        .control("escrow/refund", json!({"escrow_id": paid, "mine": false}))
        .await;
    let lost = emulator.register("v1", named("d")).await;
    support::index_until_synced(&followed).await;
    let before = support::open(&db).await;
    assert_eq!(support::blockfrost::masumi_agents(&before).await, 4);
    before.close().await;

    let rolled = emulator.control("rollback", json!({"depth": 3})).await;
    assert_eq!(
        rolled["dropped_blocks"].as_array().unwrap().len(),
        3,
        "{rolled}"
    );
    // The new branch: other actions, the escrow released instead of refunded.
    emulator
        .control(
            "registry/update",
            json!({"unit": b, "metadata": named("b, renamed")}),
        )
        .await;
    let new = emulator.register("v1", named("e")).await;
    emulator
        .control(
            "escrow/settle",
            json!({"escrow_id": paid, "outcome": "released"}),
        )
        .await;
    support::index_until_synced(&followed).await;

    let fresh_db = dir.path().join("fresh.db");
    support::index_until_synced(&emulator.config(&fresh_db, "").await).await;
    assert_same_index(
        &dump(&db).await,
        &dump(&fresh_db).await,
        "after a 3-block rollback",
    );
    let store = support::open(&db).await;
    assert_eq!(
        support::blockfrost::masumi_agents(&store).await,
        4,
        "a, b, c and e"
    );
    let units: Vec<String> = sqlx::query_scalar("SELECT unit FROM masumi_agents")
        .fetch_all(store.reader())
        .await
        .unwrap();
    assert!(!units.contains(&lost), "d's registration was rolled back");
    assert!(units.contains(&new) && units.contains(&c));
    let c_active: i64 = sqlx::query_scalar("SELECT active FROM agents WHERE token_id = $1")
        .bind(&c[56..])
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(c_active, 1, "c's deregistration was rolled back");
    let outcomes: Vec<Option<String>> = sqlx::query_scalar("SELECT outcome FROM masumi_payments")
        .fetch_all(store.reader())
        .await
        .unwrap();
    assert_eq!(
        outcomes,
        [Some("released".to_string())],
        "the refund was rolled back"
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_answering_429_402_and_500_is_waited_out() {
    let emulator = Emulator::start(&[]).await;
    let mut units = Vec::new();
    for i in 0..6 {
        units.push(
            emulator
                .register("v2", json!({"name": format!("agent {i}")}))
                .await,
        );
    }
    for (status, count, prefix) in [(429, 3, "/txs"), (402, 1, "/scripts"), (500, 2, "/blocks")] {
        emulator
            .control(
                "faults",
                json!({"status": status, "count": count, "path_prefix": prefix}),
            )
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("faults.db");
    let faulty = emulator.config(&db, "quota_wait_secs = 1").await;
    support::index_until_synced(&faulty).await;
    let stats = emulator.stats().await;
    assert_eq!(stats["errors_served"]["429"], 3, "{stats}");
    assert_eq!(stats["errors_served"]["402"], 1, "{stats}");
    assert_eq!(stats["errors_served"]["500"], 2, "{stats}");
    let store = support::open(&db).await;
    assert_eq!(
        support::blockfrost::masumi_agents(&store).await,
        6,
        "nothing lost to the errors"
    );
    store.close().await;
    let clean_db = dir.path().join("clean.db");
    support::index_until_synced(&emulator.config(&clean_db, "").await).await;
    assert_same_index(
        &dump(&db).await,
        &dump(&clean_db).await,
        "after provider errors",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_mid_sync_resumes_exactly_once() {
    let emulator = Emulator::start(&[]).await;
    let total: i64 = 40;
    for i in 0..total {
        emulator
            .control(
                "registry/register",
                json!({"contract": if i % 2 == 0 { "v2" } else { "v1" }, "metadata": {"name": format!("agent {i}")}, "mine": i % 4 == 3}),
            )
            .await;
    }
    emulator.control("blocks", json!({"count": 1})).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("killed.db");
    // Slow enough to be caught mid-sync: a few transactions a batch, a few requests a second.
    let slow = "transactions_per_batch = 3\nrequests_per_second = 30\nburst = 1";
    let path = dir.path().join("killed.toml");
    std::fs::write(
        &path,
        format!(
            "[database]\nurl = \"{}\"\n{}",
            database_url(&db),
            emulator.cardano_toml(slow).await
        ),
    )
    .unwrap();
    let mut running = support::binary::spawn(&["index", "--exit-when-synced", "--config"], &path);
    // Killed once it has read about half of what it needs (a batch commits every few
    // transactions read), judged by the requests the emulator served, not by opening the
    // database under the writer.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the index made no progress within a minute"
        );
        assert!(
            running.alive(),
            "the index finished before it could be killed"
        );
        if emulator.stats().await["requests"].as_i64().unwrap_or(0) >= 3 * total / 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    drop(running); // SIGKILL, then reaped
    let store = support::open(&db).await;
    let seen = support::blockfrost::masumi_agents(&store).await;
    store.close().await;
    assert!(
        0 < seen && seen < total,
        "killed mid-sync, with {seen} of {total} agents committed"
    );
    let mut resumed = support::binary::command(&["index", "--exit-when-synced", "--config"], &path);
    resumed.command().stdout(std::process::Stdio::null());
    let mut resumed = resumed.spawn().unwrap();
    assert!(
        resumed.child().wait().unwrap().success(),
        "the resumed index fails"
    );
    let clean_db = dir.path().join("clean.db");
    support::index_until_synced(&emulator.config(&clean_db, "").await).await;
    assert_same_index(
        &dump(&db).await,
        &dump(&clean_db).await,
        "after kill -9 mid-sync",
    );
    let store = support::open(&db).await;
    assert_eq!(support::blockfrost::masumi_agents(&store).await, total);
    store.close().await;
}
