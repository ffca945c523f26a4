//! A scripted scenario drives every event kind through every source; the index must hold what the
//! transactions imply, field by field, and be the same however the block ranges were cut.

use crate::support;
use agentindex_indexer::store::Flag;
use agentindex_indexer::store::StoreRead;

use agentindex_contracts::Devnet;
use agentindex_indexer::config::FetchStrategy;
use alloy::primitives::Address;
use sqlx::{AnyPool, Row};
use support::scenario;

fn hex(a: Address) -> String {
    format!("{a:#x}")
}

async fn strings(pool: &AnyPool, sql: &str, bind: &str) -> Vec<String> {
    sqlx::query_scalar(sql)
        .bind(bind)
        .fetch_all(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn scenario_is_indexed_field_by_field_and_independent_of_range_size_and_fetch_strategy() {
    let devnet = Devnet::start().await.unwrap();
    let s = scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();
    let chain = devnet.chain_id();

    let db = dir.path().join("wide.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let store = support::open(&db).await;
    let pool = store.reader();

    // No log failed to decode.
    let failures: i64 = sqlx::query_scalar(support::DECODE_FAILURES)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(failures, 0);

    // --- the factory agent
    let key = format!("{chain}:{}", hex(s.factory_agent));
    let row = sqlx::query("SELECT * FROM agents WHERE agent_key = $1")
        .bind(&key)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("source"), "factory");
    assert_eq!(
        row.get::<String, _>("owner"),
        hex(s.bob),
        "ownership moved to bob"
    );
    assert_eq!(
        row.get::<Option<String>, _>("name").as_deref(),
        Some("Renamed Agent")
    );
    assert_eq!(
        row.get::<Option<String>, _>("card_uri").as_deref(),
        Some("https://agents.example/card.json")
    );
    assert_eq!(
        row.get::<Option<String>, _>("card_hash"),
        Some(format!("0x{}", "07".repeat(32)))
    );
    assert!(row.get::<Flag, _>("active").0);
    assert_eq!(row.get::<Option<i64>, _>("heartbeat_interval"), Some(120));
    assert!(
        row.get::<Option<i64>, _>("last_heartbeat").unwrap() >= row.get::<i64, _>("registered_at")
    );
    assert_eq!(
        row.get::<Option<String>, _>("payment_address"),
        Some(hex(s.factory_agent))
    );
    let card: serde_json::Value = serde_json::from_str(&row.get::<String, _>("card")).unwrap();
    assert_eq!(
        card["skills"][0]["tags"],
        serde_json::json!(["translation", "language", "fast"])
    );
    assert_eq!(card["payment"]["payTo"], hex(s.factory_agent));

    let got: Vec<(String, String, String, Flag)> = sqlx::query_as("SELECT payer, token, amount, eip3009 FROM payments WHERE agent_key = $1 ORDER BY block_number, log_index")
        .bind(&key)
        .fetch_all(pool)
        .await
        .unwrap();
    let usdc = hex(devnet.deployment().usdc);
    let native = hex(Address::ZERO);
    assert_eq!(
        got,
        vec![
            (hex(s.carol), native.clone(), "1000".into(), Flag(false)),
            (hex(s.carol), usdc.clone(), "500".into(), Flag(false)),
            (hex(s.dave), usdc.clone(), "70".into(), Flag(false)),
            (hex(s.erin), usdc.clone(), "9".into(), Flag(true)),
            (hex(s.dave), native.clone(), "5".into(), Flag(false)),
        ],
        "pay() in USDC counts once (its Transfer), native pay() and plain sends count, EIP-3009 is marked"
    );
    let rating: (String, i64) = sqlx::query_as("SELECT rater, score FROM ratings WHERE agent = $1")
        .bind(hex(s.factory_agent))
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(rating, (hex(s.carol), 88));
    let withdrawal: (String, String, String) =
        sqlx::query_as("SELECT token, to_address, amount FROM withdrawals WHERE agent = $1")
            .bind(hex(s.factory_agent))
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(withdrawal, (usdc.clone(), hex(s.bob), "100".into()));

    // --- the registry agent
    let key = format!("{chain}:{}", hex(s.registry_agent));
    let row = sqlx::query("SELECT * FROM agents WHERE agent_key = $1")
        .bind(&key)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("source"), "registry");
    assert_eq!(row.get::<String, _>("owner"), hex(s.bob));
    // Deployed and initialised before its enrolment: card, interval and the first heartbeat
    // come from the state read at the enrolment block, the later heartbeat from its event.
    assert_eq!(
        row.get::<Option<String>, _>("name").as_deref(),
        Some("Registry Agent")
    );
    assert_eq!(row.get::<Option<i64>, _>("heartbeat_interval"), Some(3600));
    assert!(row.get::<Flag, _>("active").0);
    let last_heartbeat: i64 = sqlx::query_scalar(
        "SELECT CAST(value AS INTEGER) FROM agent_contract_events WHERE agent = $1 AND kind = 'heartbeat'",
    )
    .bind(hex(s.registry_agent))
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(
        row.get::<Option<i64>, _>("last_heartbeat"),
        Some(last_heartbeat)
    );
    let snapshots: Vec<(Option<String>, Option<i64>, Option<String>)> = sqlx::query_as(
        "SELECT owner, heartbeat_interval, errors FROM agent_snapshots WHERE agent = $1 ORDER BY block_number",
    )
    .bind(hex(s.registry_agent))
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(
        snapshots,
        vec![(Some(hex(s.bob)), Some(3600), None); 2],
        "one snapshot per enrolment, every call answered"
    );
    assert_eq!(
        row.get::<Option<String>, _>("uri").as_deref(),
        Some("ipfs://meta-2")
    );
    let statuses: serde_json::Value =
        serde_json::from_str(&row.get::<String, _>("registry_status")).unwrap();
    assert_eq!(statuses[hex(devnet.deployment().registry)], "deregistered");
    assert_eq!(
        statuses[hex(devnet.deployment().curated_registry)],
        "active"
    );
    assert_eq!(
        strings(
            pool,
            "SELECT amount FROM payments WHERE agent_key = $1",
            &key
        )
        .await,
        vec!["11".to_string()]
    );

    // --- the ERC-8004 agent
    let key = format!(
        "{chain}:{}:{}",
        hex(devnet.deployment().identity),
        s.erc8004_id
    );
    let row = sqlx::query("SELECT * FROM agents WHERE agent_key = $1")
        .bind(&key)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("source"), "erc8004");
    assert_eq!(
        row.get::<String, _>("owner"),
        hex(s.dave),
        "the token was transferred"
    );
    assert_eq!(
        row.get::<Option<String>, _>("uri").as_deref(),
        Some("ipfs://reg-2")
    );
    assert_eq!(
        row.get::<Option<String>, _>("agent_wallet"),
        None,
        "a transfer clears the wallet"
    );
    assert_eq!(
        row.get::<String, _>("operators"),
        "[]",
        "approvals of the previous owner do not carry over"
    );
    let wallets: Vec<Vec<u8>> = sqlx::query_scalar(
        "SELECT value FROM identity_metadata WHERE key = 'agentWallet' ORDER BY block_number, log_index",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(
        wallets,
        vec![s.carol.to_vec(), s.frank.to_vec(), vec![]],
        "the whole wallet history"
    );
    let paid: Vec<(String, String, String, Flag)> = sqlx::query_as("SELECT payer, payee, amount, eip3009 FROM payments WHERE agent_key = $1 ORDER BY block_number, log_index")
        .bind(&key)
        .fetch_all(pool)
        .await
        .unwrap();
    assert_eq!(
        paid,
        vec![
            (hex(s.dave), hex(s.carol), "3".into(), Flag(false)),
            (hex(s.dave), hex(s.frank), "40".into(), Flag(true)),
            (hex(s.erin), hex(s.frank), "4".into(), Flag(false)),
        ],
        "only payments into the wallet bound at the time count"
    );

    let feedback: Vec<(String, i64, String, i64, String, Flag, i64)> = sqlx::query_as(
        "SELECT client, feedback_index, value, value_decimals, tag1,
            EXISTS (SELECT 1 FROM feedback_revocations r WHERE r.client = f.client AND r.feedback_index = f.feedback_index) AS revoked,
            (SELECT count(*) FROM feedback_responses p WHERE p.client = f.client AND p.feedback_index = f.feedback_index) AS responses
         FROM feedback f ORDER BY block_number",
    )
    .fetch_all(pool)
        .await
        .unwrap();
    assert_eq!(
        feedback,
        vec![
            (
                hex(s.dave),
                1,
                "90".into(),
                0,
                "quality".into(),
                Flag(true),
                0
            ),
            (
                hex(s.dave),
                2,
                "-250".into(),
                2,
                "speed".into(),
                Flag(false),
                2
            ),
            (
                hex(s.frank),
                1,
                "70".into(),
                0,
                "quality".into(),
                Flag(false),
                0
            ),
        ]
    );
    let responses: Vec<i64> =
        sqlx::query_scalar("SELECT response FROM validation_responses ORDER BY block_number")
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(
        responses,
        vec![0, 100],
        "every validation response is kept, a zero included"
    );
    let requests: i64 = sqlx::query_scalar("SELECT count(*) FROM validation_requests")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(requests, 1);

    // The ERC-8004 agent's stored reputation. Dave paid before he came to own the agent, so his
    // payments count; Erin paid while Carol had approved her for all her agents, so hers does
    // not: the side is judged as it was at each payment.
    let key = agentindex_indexer::primitives::AgentKey::erc8004(
        chain,
        devnet.deployment().identity,
        s.erc8004_id,
    )
    .to_string();
    let stored = store.reputation(&key).await.unwrap().expect("a stored row");
    let e = &stored.evaluation;
    assert_eq!(
        (
            e.payments.payment_count,
            e.payments.unique_payers,
            e.payments.x402_count
        ),
        (2, 1, 1)
    );
    assert_eq!(
        e.excluded,
        std::collections::BTreeMap::from([(
            agentindex_indexer::reputation::Exclusion::Operator,
            1
        )])
    );
    assert_eq!(
        (
            e.feedback.overall.count,
            e.feedback.unique_clients,
            e.feedback.revoked,
            e.feedback.responses
        ),
        (2, 2, 1, 2)
    );
    assert_eq!(e.feedback.overall.average, Some((-2.5 + 70.0) / 2.0));
    assert_eq!(
        (
            e.validations.requests,
            e.validations.answered,
            e.validations.responses
        ),
        (1, 1, 2)
    );
    assert_eq!(
        (e.validations.average, e.validations.pass_rate),
        (Some(100.0), Some(1.0)),
        "the latest response stands"
    );
    let components = e.composite.components;
    // The component weighs each feedback by its evidence (docs/reputation.md): values read on
    // 0–100, and the prior (0, weight 1) beside them.
    let listed = &e.feedback_evidence.feedback;
    let values: Vec<f64> = listed.iter().map(|f| f.value).collect();
    assert_eq!(values, [0.0, 70.0], "-2.5 reads as 0 on the 0–100 scale");
    let weight: f64 = listed.iter().map(|f| f.weight).sum();
    let expected = listed.iter().map(|f| f.weight * f.value).sum::<f64>() / (weight + 1.0);
    assert!((components.feedback.unwrap() - expected).abs() < 1e-9);
    assert!(
        components.feedback.unwrap() < e.feedback.overall.average.unwrap(),
        "thin evidence scores below the plain average"
    );
    assert_eq!(components.ratings, None);
    assert!(components.payments.is_some_and(|p| p > 0.0));

    let wide = store.canonical_dump().await.unwrap();
    store.close().await;

    // The same chain cut into 1-block and 3-block ranges, fetched by address chunks or by
    // scanning event signatures, with ranges read one at a time or several ahead (agents found in
    // a range then fetched for the ranges already read), gives the same database.
    for (range, strategy, ranges_in_flight) in [
        (1, FetchStrategy::Addresses, 4),
        (3, FetchStrategy::Addresses, 4),
        (1, FetchStrategy::Addresses, 1),
        (2_000, FetchStrategy::Scan, 4),
        (1, FetchStrategy::Scan, 8),
        (3, FetchStrategy::Scan, 4),
        (3, FetchStrategy::Scan, 1),
    ] {
        let db = dir
            .path()
            .join(format!("narrow-{range}-{strategy:?}-{ranges_in_flight}.db"));
        let mut config = support::config(&devnet, &db, 0);
        config.chains[0].max_block_range = range;
        config.chains[0].fetch_strategy = strategy;
        config.chains[0].ranges_in_flight = ranges_in_flight;
        support::index_until_synced(&config).await;
        assert_eq!(
            support::dump(&db).await,
            wide,
            "range size {range} fetched by {strategy:?}, {ranges_in_flight} at once, changed the index"
        );
    }
}
