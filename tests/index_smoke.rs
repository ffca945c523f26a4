//! The indexer picks up an agent registered through each path.

use crate::support;
use agentindex_indexer::store::Flag;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::{Devnet, ForeignAgent, confirm, demo};

#[tokio::test]
async fn agents_from_every_path_land_in_the_database() {
    let devnet = Devnet::start().await.unwrap();
    let accounts = devnet.accounts();
    let child = demo::via_factory(
        &devnet,
        accounts[1],
        demo::sample_card(&devnet, "Factory", None),
    )
    .await
    .unwrap();
    let enrolled = demo::via_registry(
        &devnet,
        accounts[2],
        demo::sample_card(&devnet, "Registry", None),
        "ipfs://meta",
    )
    .await
    .unwrap();
    let id = demo::via_erc8004(&devnet, accounts[3], "ipfs://reg")
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;

    let store = support::open(&db).await;
    let got: Vec<(String, String, String, Option<String>)> =
        sqlx::query_as("SELECT agent_key, source, owner, name FROM agents ORDER BY agent_key")
            .fetch_all(store.reader())
            .await
            .unwrap();
    let chain = devnet.chain_id();
    let hex = |a: alloy::primitives::Address| format!("{a:#x}");
    let mut expected = vec![
        (
            format!("{chain}:{}", hex(child)),
            "factory".to_string(),
            hex(accounts[1]),
            Some("Factory".to_string()),
        ),
        (
            format!("{chain}:{}", hex(enrolled)),
            "registry".to_string(),
            hex(accounts[2]),
            Some("Registry".to_string()),
        ),
        (
            format!("{chain}:{}:{id}", hex(devnet.deployment().identity)),
            "erc8004".to_string(),
            hex(accounts[3]),
            None,
        ),
    ];
    expected.sort();
    assert_eq!(got, expected);

    // Status data per chain, as /status will serve it.
    let head = devnet.block_number().await.unwrap();
    let statuses = store.statuses().await.unwrap();
    assert_eq!(statuses.len(), 1);
    assert_eq!(
        (statuses[0].chain_id, statuses[0].name.as_str()),
        (chain, "devnet")
    );
    assert_eq!(
        (
            statuses[0].head_block,
            statuses[0].indexed_block,
            statuses[0].lag
        ),
        (head, Some(head), 0)
    );
}

#[tokio::test]
async fn an_enrolled_contract_without_a_card_is_indexed_with_what_could_be_read() {
    let devnet = Devnet::start().await.unwrap();
    let owner = devnet.accounts()[4];
    let foreign = *ForeignAgent::deploy(devnet.provider().clone(), owner)
        .await
        .unwrap()
        .address();
    confirm(
        "enrolling a foreign agent",
        devnet
            .registry()
            .register(foreign, "ipfs://foreign".into())
            .from(owner)
            .send(),
    )
    .await
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;

    let store = support::open(&db).await;
    let hex = |a: alloy::primitives::Address| format!("{a:#x}");
    let agent: (String, Option<String>, Option<String>, Flag) =
        sqlx::query_as("SELECT owner, card, uri, active FROM agents WHERE agent_key = $1")
            .bind(format!("{}:{}", devnet.chain_id(), hex(foreign)))
            .fetch_one(store.reader())
            .await
            .unwrap();
    assert_eq!(
        agent,
        (hex(owner), None, Some("ipfs://foreign".into()), Flag(true)),
        "owner read, no card, active by default"
    );
    let errors: String = sqlx::query_scalar("SELECT errors FROM agent_snapshots WHERE agent = $1")
        .bind(hex(foreign))
        .fetch_one(store.reader())
        .await
        .unwrap();
    let errors: Vec<String> = serde_json::from_str(&errors).unwrap();
    let failed: Vec<&str> = errors
        .iter()
        .map(|e| e.split(':').next().unwrap())
        .collect();
    assert_eq!(
        failed,
        [
            "card()",
            "active()",
            "heartbeatInterval()",
            "lastHeartbeat()"
        ],
        "{errors:?}"
    );
}
