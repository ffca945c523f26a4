//! Logs in the legacy ERC-8004 shapes, emitted by `LegacyEmitter` on a real chain, decode into
//! the same normalised rows as the current shapes.

use crate::support;

use agentindex_contracts::Devnet;
use agentindex_contracts::devnet::confirm;
use agentindex_indexer::config::Config;
use alloy::primitives::{Address, B256, I256, U256};
use std::path::Path;

/// shape, index, value, decimals, tag1, tag2, endpoint, uri
type FeedbackRow = (
    String,
    Option<i64>,
    String,
    i64,
    String,
    String,
    String,
    String,
);

fn bytes32(text: &str) -> B256 {
    let mut raw = [0u8; 32];
    raw[..text.len()].copy_from_slice(text.as_bytes());
    B256::from(raw)
}

#[tokio::test]
async fn legacy_shapes_decode_to_the_normalised_model() {
    let devnet = Devnet::start().await.unwrap();
    let legacy = devnet.legacy();
    let client: Address = devnet.accounts()[4];
    let id = U256::from(7);
    let hash = B256::repeat_byte(0xab);
    confirm(
        "string metadata",
        legacy
            .emitStringMetadataSet(id, "role".into(), "translator".into())
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "UriUpdated",
        legacy
            .emitUriUpdated(id, "ipfs://old-spelling".into(), client)
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "score + endpoint",
        legacy
            .emitScoreFeedbackWithEndpoint(
                id,
                client,
                91,
                "t1".into(),
                "t2".into(),
                "https://e".into(),
                "ipfs://a".into(),
                hash,
            )
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "score",
        legacy
            .emitScoreFeedback(
                id,
                client,
                92,
                "t1".into(),
                "t2".into(),
                "ipfs://b".into(),
                hash,
            )
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "bytes32 tags",
        legacy
            .emitBytes32TagFeedback(
                id,
                client,
                93,
                bytes32("speed"),
                bytes32("p95"),
                "ipfs://c".into(),
                hash,
            )
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "int256",
        legacy
            .emitInt256Feedback(
                id,
                client,
                4,
                I256::try_from(-1234).unwrap(),
                2,
                "t1".into(),
                "t2".into(),
                "https://e".into(),
                "ipfs://d".into(),
                hash,
            )
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "uint256",
        legacy
            .emitUint256Feedback(
                id,
                client,
                5,
                U256::from(5678),
                3,
                "t1".into(),
                "t2".into(),
                "https://e".into(),
                "ipfs://e".into(),
                hash,
            )
            .send(),
    )
    .await
    .unwrap();
    confirm(
        "bytes32 validation tag",
        legacy
            .emitBytes32TagValidationResponse(
                client,
                id,
                B256::repeat_byte(1),
                77,
                "ipfs://v".into(),
                hash,
                bytes32("zkml"),
            )
            .send(),
    )
    .await
    .unwrap();

    // One contract in all three ERC-8004 roles, as an upgraded proxy's history would be.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("legacy.db");
    let address = devnet.deployment().legacy;
    let text = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        .replace(
            &format!("identity = \"{}\"", devnet.deployment().identity),
            &format!("identity = \"{address}\""),
        )
        .replace(
            &format!("reputation = \"{}\"", devnet.deployment().reputation),
            &format!("reputation = \"{address}\""),
        )
        .replace(
            &format!("validation = \"{}\"", devnet.deployment().validation),
            &format!("validation = \"{address}\""),
        );
    let config = Config::from_toml_and_env(&text, Path::new("legacy.toml"), Vec::new()).unwrap();
    support::index_until_synced(&config).await;

    let store = support::open(&db).await;
    let pool = store.reader();
    let failures: i64 = sqlx::query_scalar(support::DECODE_FAILURES)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(failures, 0, "every legacy shape decodes");

    let metadata: (String, Vec<u8>) = sqlx::query_as("SELECT key, value FROM identity_metadata")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(
        metadata,
        ("role".to_string(), b"translator".to_vec()),
        "a string value is its UTF-8 bytes"
    );
    let uri: String = sqlx::query_scalar("SELECT uri FROM identity_uri_updates")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(uri, "ipfs://old-spelling");

    let got: Vec<FeedbackRow> = sqlx::query_as(
        "SELECT shape, feedback_index, value, value_decimals, tag1, tag2, endpoint, feedback_uri FROM feedback ORDER BY block_number",
    )
    .fetch_all(pool)
        .await
        .unwrap();
    let row = |shape: &str,
               index: Option<i64>,
               value: &str,
               decimals: i64,
               tag1: &str,
               tag2: &str,
               endpoint: &str,
               uri: &str| {
        (
            shape.to_string(),
            index,
            value.to_string(),
            decimals,
            tag1.to_string(),
            tag2.to_string(),
            endpoint.to_string(),
            uri.to_string(),
        )
    };
    assert_eq!(
        got,
        vec![
            // The indexed string tag1 of the uint8 shapes survives only as a hash.
            row(
                "legacy-score-endpoint",
                None,
                "91",
                0,
                "",
                "t2",
                "https://e",
                "ipfs://a"
            ),
            row("legacy-score", None, "92", 0, "", "t2", "", "ipfs://b"),
            row(
                "legacy-score-bytes32",
                None,
                "93",
                0,
                "speed",
                "p95",
                "",
                "ipfs://c"
            ),
            row(
                "legacy-int256",
                Some(4),
                "-1234",
                2,
                "t1",
                "t2",
                "https://e",
                "ipfs://d"
            ),
            row(
                "legacy-uint256",
                Some(5),
                "5678",
                3,
                "t1",
                "t2",
                "https://e",
                "ipfs://e"
            ),
        ]
    );
    let validation: (i64, String, String) =
        sqlx::query_as("SELECT response, tag, shape FROM validation_responses")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(
        validation,
        (77, "zkml".to_string(), "legacy-bytes32".to_string())
    );
}
