//! Folding a Masumi agent's registry actions.

use super::{MasumiAction, fold};
use serde_json::json;

fn action(block: i64, kind: &str, name: &str, metadata: Option<serde_json::Value>) -> MasumiAction {
    MasumiAction {
        block,
        tx_index: 0,
        timestamp: block * 20,
        policy_id: "67ab".into(),
        registry_version: 2,
        asset_name: name.into(),
        action: kind.into(),
        holder: (kind == "mint").then(|| format!("addr_test1holder{block}")),
        metadata: metadata.map(|m| m.to_string()),
        metadata_error: None,
    }
}

#[test]
fn registration_update_and_deregistration() {
    let registered = [action(
        5,
        "mint",
        "aa01",
        Some(
            json!({"name": ["Sum", "mariser"], "agent_card_url": "https://a.example/card.json", "colour": "red"}),
        ),
    )];
    let (state, details) = fold("k", &registered).expect("a minted agent");
    assert_eq!(state.name.as_deref(), Some("Summariser"), "chunks joined");
    assert_eq!(
        state.card_uri.as_deref(),
        Some("https://a.example/card.json")
    );
    assert!(state.active);
    assert_eq!((state.registered_block, state.registered_at), (5, 100));
    assert_eq!(state.source, "masumi");
    assert_eq!(details.updates, 0);
    assert!(
        details.metadata.contains("\"variant\":\"a2a\""),
        "{}",
        details.metadata
    );
    assert!(
        details.lints.contains("masumi.field.unknown"),
        "{}",
        details.lints
    );

    let updated = [
        registered[0].clone(),
        action(9, "burn", "aa01", None),
        action(9, "mint", "aa02", Some(json!({"name": "Renamed"}))),
    ];
    let (state, details) = fold("k", &updated).expect("still registered");
    assert!(state.active, "an update is not a deregistration");
    assert_eq!(state.name.as_deref(), Some("Renamed"));
    assert_eq!(state.token_id.as_deref(), Some("aa02"));
    assert_eq!((state.registered_block, state.last_event_block), (5, 9));
    assert_eq!(details.updates, 1);
    assert_eq!(details.unit, "67abaa02");

    let deregistered = [updated.to_vec(), vec![action(12, "burn", "aa02", None)]].concat();
    let (state, details) = fold("k", &deregistered).expect("kept, ended");
    assert!(!state.active);
    assert_eq!(details.deregistered_block, Some(12));
    assert_eq!(
        state.name.as_deref(),
        Some("Renamed"),
        "what it was stays readable"
    );
}

#[test]
fn nothing_minted_is_no_agent() {
    assert!(fold("k", &[]).is_none());
    assert!(fold("k", &[action(3, "burn", "aa01", None)]).is_none());
}
