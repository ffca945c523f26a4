//! End to end on anvil: agents registered through every path point at documents served by a
//! local HTTP server; after indexing, each agent's profile, skills and search row come from its
//! registration file and card (or its on-chain card when the off-chain one does not match the
//! anchored hash), and broken documents are recorded with the reason.

use crate::support;
use agentindex_indexer::store::{Dialect, Flag, MaybeFlag};

use agentindex_contracts::{Devnet, ForeignAgent, confirm, demo};
use alloy::primitives::{Address, keccak256};
use base64::Engine;
use serde_json::json;
use sqlx::AnyPool;
use support::doc_server::{DocServer, Route};

fn v1_card(name: &str, skill: &str, tag: &str) -> Vec<u8> {
    json!({
        "name": name, "description": format!("{name} does {skill}"), "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agents.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": skill, "name": skill, "description": format!("{skill} for you"), "tags": [tag]}]
    })
    .to_string()
    .into_bytes()
}

/// The agents whose search document has `word`, in each database's own full-text index.
async fn search(pool: &AnyPool, word: &str) -> Vec<String> {
    let matching = match Dialect::of_pool(pool) {
        Dialect::Sqlite => "agent_search MATCH $1",
        Dialect::Postgres => "document @@ to_tsquery('simple', $1)",
    };
    sqlx::query_scalar(&format!(
        "SELECT agent_key FROM agent_search WHERE {matching} ORDER BY agent_key"
    ))
    .bind(word)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_become_searchable_by_what_their_documents_say() {
    let devnet = Devnet::start().await.unwrap();
    let server = DocServer::start().await;
    let accounts = devnet.accounts();
    let chain = devnet.chain_id();
    let hex = |a: Address| format!("{a:#x}");

    // ERC-8004: a registration file whose A2A service is a base URL; the card is well-known.
    let signed = support::signing::sign_es256(
        serde_json::from_slice(&v1_card("Polyglot", "translate", "Language")).unwrap(),
        "polyglot-key",
    );
    server.route(
        "/erc/.well-known/agent-card.json",
        Route::Body("application/json", signed.to_string().into_bytes()),
    );
    // The file names the agent back, and so does the A2A endpoint's origin (domain proof).
    let reg_url = format!("{}/reg.json", server.base);
    let erc_id = demo::via_erc8004(&devnet, accounts[1], &reg_url)
        .await
        .unwrap();
    let names_it = json!([{
        "agentId": erc_id.to::<u64>(),
        "agentRegistry": format!("eip155:{chain}:{}", devnet.deployment().identity)
    }]);
    let registration = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Polyglot (registered)", "description": "Registered translator",
        "services": [{"name": "A2A", "endpoint": format!("{}/erc", server.base), "version": "1.0"}],
        "x402Support": true,
        "registrations": names_it
    });
    server.route(
        "/reg.json",
        Route::Body("application/json", registration.to_string().into_bytes()),
    );
    // The agent's own file moves on chain into a data: URI: it arrives as the chain holds it,
    // so it can verify (the test server speaks plain http only, which never verifies).
    let data_uri = format!(
        "data:application/json;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(registration.to_string())
    );
    confirm(
        "moving the registration file into a data: URI",
        devnet
            .identity()
            .setAgentURI(erc_id, data_uri)
            .from(accounts[1])
            .send(),
    )
    .await
    .unwrap();
    // Another agent claiming the same file contents: neither its file nor the domain names it.
    let impostor_url = server.route(
        "/impostor.json",
        Route::Body("application/json", registration.to_string().into_bytes()),
    );
    let impostor_id = demo::via_erc8004(&devnet, accounts[5], &impostor_url)
        .await
        .unwrap();
    let proof = json!({"type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1", "name": "site", "registrations": names_it});
    server.route(
        "/.well-known/agent-registration.json",
        Route::Body("application/json", proof.to_string().into_bytes()),
    );
    let missing_id = demo::via_erc8004(
        &devnet,
        accounts[1],
        &format!("{}/missing.json", server.base),
    )
    .await
    .unwrap();

    // A factory agent anchoring its off-chain card by hash.
    let summary_card = v1_card("Summariser", "summarize", "text");
    let mut data = demo::sample_card(&devnet, "Factory Summariser", None);
    data.cardURI = server.route(
        "/factory-card.json",
        Route::Body("application/json", summary_card.clone()),
    );
    data.cardHash = keccak256(&summary_card);
    let factory = demo::via_factory(&devnet, accounts[2], data).await.unwrap();

    // A factory agent whose served card is not the one it anchored.
    let mut tampered = demo::sample_card(&devnet, "Anchored", None);
    tampered.cardURI = server.route(
        "/tampered.json",
        Route::Body("application/json", v1_card("Impostor", "steal", "evil")),
    );
    tampered.cardHash = keccak256(b"the card that was anchored");
    let anchored = demo::via_factory(&devnet, accounts[3], tampered)
        .await
        .unwrap();

    // A registry agent whose metadata URI is a card signed, then changed (its description
    // removed), so the signature no longer holds.
    let mut registry_card = support::signing::sign_es256(
        serde_json::from_slice(&v1_card("Finder", "search", "web")).unwrap(),
        "polyglot-key",
    );
    registry_card.as_object_mut().unwrap().remove("description");
    let meta_url = server.route(
        "/registry-card.json",
        Route::Body("application/json", registry_card.to_string().into_bytes()),
    );
    let enrolled = demo::via_registry(
        &devnet,
        accounts[4],
        demo::sample_card(&devnet, "Enrolled", None),
        &meta_url,
    )
    .await
    .unwrap();

    // An enrolled contract from elsewhere: it has no agentCard() to read.
    let foreign = *ForeignAgent::deploy(devnet.provider().clone(), accounts[6])
        .await
        .unwrap()
        .address();
    agentindex_contracts::confirm(
        "enrolling a foreign agent",
        devnet
            .registry()
            .register(foreign, String::new())
            .from(accounts[6])
            .send(),
    )
    .await
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config_with_local_documents(&devnet, &db);
    config.documents.trusted_keys = vec![support::signing::es256_jwk("polyglot-key")];
    support::index_with_documents(&config).await;

    let store = support::open(&db).await;
    let pool = store.reader();
    let identity = hex(devnet.deployment().identity);
    let erc_key = format!("{chain}:{identity}:{erc_id}");
    let missing_key = format!("{chain}:{identity}:{missing_id}");
    let factory_key = format!("{chain}:{}", hex(factory));
    let anchored_key = format!("{chain}:{}", hex(anchored));
    let enrolled_key = format!("{chain}:{}", hex(enrolled));

    assert!(search(pool, "translate").await.contains(&erc_key));
    assert_eq!(search(pool, "summarize").await, vec![factory_key.clone()]);
    assert_eq!(search(pool, "web").await, vec![enrolled_key.clone()]);
    assert!(
        search(pool, "evil").await.is_empty(),
        "a card that fails its anchored hash is not used"
    );
    assert!(
        search(pool, "translation").await.contains(&anchored_key),
        "its on-chain card is used instead"
    );

    let tags: String = sqlx::query_scalar(
        "SELECT tags FROM agent_skills WHERE agent_key = $1 AND skill_id = 'translate'",
    )
    .bind(&erc_key)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(tags, "[\"language\"]", "tags are matched lower-case");

    let profile: (Option<String>, Flag, Option<String>, String) = sqlx::query_as(
        "SELECT name, x402, card_uri, card_status FROM agent_profiles WHERE agent_key = $1",
    )
    .bind(&erc_key)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(
        profile,
        (
            Some("Polyglot (registered)".into()),
            Flag(true),
            Some(format!("{}/erc", server.base)),
            "ok".into()
        ),
        "the registration file names the agent; its A2A service leads to the card"
    );
    let verified: (MaybeFlag, MaybeFlag) = sqlx::query_as(
        "SELECT registration_verified, domain_verified FROM agent_profiles WHERE agent_key = $1",
    )
    .bind(&erc_key)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(
        verified,
        (MaybeFlag(Some(true)), MaybeFlag(Some(false))),
        "named back by its file; its domain names it too, but over plain http"
    );
    let domain_lints: Vec<String> = sqlx::query_scalar(
        "SELECT code FROM document_lints WHERE uri LIKE '%/.well-known/agent-registration.json'",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let domain_lints = domain_lints.join(",");
    assert!(
        domain_lints.contains("document.transport.insecure"),
        "{domain_lints}"
    );
    let impostor: (MaybeFlag, MaybeFlag) = sqlx::query_as(
        "SELECT registration_verified, domain_verified FROM agent_profiles WHERE agent_key = $1",
    )
    .bind(format!("{chain}:{identity}:{impostor_id}"))
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(
        impostor,
        (MaybeFlag(Some(false)), MaybeFlag(Some(false))),
        "a copied file does not verify"
    );
    for (key, expected) in [
        (&erc_key, "valid"),
        (&enrolled_key, "invalid"),
        (&factory_key, "unsigned"),
    ] {
        let signature: Option<String> =
            sqlx::query_scalar("SELECT card_signature FROM agent_profiles WHERE agent_key = $1")
                .bind(key)
                .fetch_one(pool)
                .await
                .unwrap();
        assert_eq!(signature.as_deref(), Some(expected), "{key}");
    }
    let status: String =
        sqlx::query_scalar("SELECT card_status FROM agent_profiles WHERE agent_key = $1")
            .bind(&anchored_key)
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(status, "hash_mismatch");

    let failed: (String, String) = sqlx::query_as(
        "SELECT d.status, d.error FROM documents d JOIN agent_documents l ON l.uri = d.uri AND l.expect = d.expect
         WHERE l.agent_key = $1",
    )
    .bind(&missing_key)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(failed.0, "failed");
    assert!(failed.1.contains("HTTP 404"), "{}", failed.1);

    let lints: Vec<String> = sqlx::query_scalar(
        "SELECT code FROM document_lints WHERE uri = $1 AND severity = 'warning' ORDER BY code",
    )
    .bind(&meta_url)
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(
        lints,
        [
            "card.description.missing",
            "card.signature.invalid",
            "document.transport.insecure"
        ]
    );
    assert_eq!(
        server.hits("/erc/.well-known/agent-card.json"),
        1,
        "each document fetched once"
    );

    // Agent contracts' own agentCard() JSON is a document too.
    let onchain = |address: Address| format!("eip155:{chain}:{}", hex(address));
    let read: (String, String, String) = sqlx::query_as(&format!(
        "SELECT status, kind, {} FROM documents WHERE uri = $1 AND expect = 'onchain'",
        Dialect::of_pool(pool).json_path("projection", "name")
    ))
    .bind(onchain(factory))
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(
        read,
        ("ok".into(), "card".into(), "Factory Summariser".into())
    );
    let failed: (String, String) =
        sqlx::query_as("SELECT status, error FROM documents WHERE uri = $1 AND expect = 'onchain'")
            .bind(onchain(foreign))
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(failed.0, "failed");
    assert!(
        failed.1.starts_with("document.call: agentCard()"),
        "{}",
        failed.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_change_fetches_the_agents_documents_again() {
    let devnet = Devnet::start().await.unwrap();
    let server = DocServer::start().await;
    let owner = devnet.accounts()[1];
    let file = |name: &str| {
        json!({"type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1", "name": name})
            .to_string()
            .into_bytes()
    };
    let uri = server.route(
        "/agent.json",
        Route::Body("application/json", file("First")),
    );
    let other = server.route(
        "/other.json",
        Route::Body("application/json", file("Other")),
    );
    let id = demo::via_erc8004(&devnet, owner, &uri).await.unwrap();
    demo::via_erc8004(&devnet, owner, &other).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = support::config_with_local_documents(&devnet, &db);
    support::index_with_documents(&config).await;
    assert_eq!(
        (server.hits("/agent.json"), server.hits("/other.json")),
        (1, 1)
    );

    // The owner sets the same URI again after changing the file: the chain says "look again".
    server.route(
        "/agent.json",
        Route::Body("application/json", file("Second")),
    );
    agentindex_contracts::confirm(
        "setting the URI again",
        devnet
            .identity()
            .setAgentURI(id, uri.clone())
            .from(owner)
            .send(),
    )
    .await
    .unwrap();
    support::index_with_documents(&config).await;
    assert_eq!(
        (server.hits("/agent.json"), server.hits("/other.json")),
        (2, 1),
        "only the changed agent's document is fetched again"
    );
    let store = support::open(&db).await;
    let name: Option<String> = sqlx::query_scalar(
        "SELECT p.name FROM agent_profiles p JOIN agents a ON a.agent_key = p.agent_key WHERE a.token_id = $1",
    )
    .bind(id.to_string())
    .fetch_one(store.reader())
    .await
    .unwrap();
    assert_eq!(name.as_deref(), Some("Second"));
}
