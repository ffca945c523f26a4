//! The agent folds, one rule each, without a database.

use super::contracts::{
    Found, OwnFact, RegistryFact, SnapshotFact, apply_own, apply_registry, describe_card, found,
};
use super::erc8004::{
    Registration, TokenFacts, add_operators_for_all, erc8004_agent, operators_for_all,
};
use super::*;
use std::collections::BTreeMap;

const REGISTRY: &str = "0x8004a169fb4a3325136eb29fa0ceb6d2e539a432";
const WALLET: &str = "0x00000000000000000000000000000000000000aa";

fn registered() -> TokenFacts {
    TokenFacts {
        registered: Some(Registration {
            owner: "0xalice".into(),
            uri: "ipfs://first".into(),
            at: (10, 1),
            timestamp: 1_000,
        }),
        ..TokenFacts::default()
    }
}

#[test]
fn an_unregistered_token_is_no_agent() {
    assert_eq!(
        erc8004_agent("k".into(), REGISTRY, "1", &TokenFacts::default()),
        None
    );
}

#[test]
fn the_latest_transfer_uri_and_wallet_win_and_move_the_last_event() {
    let mut facts = registered();
    facts.transferred = Some(("0xbob".into(), (20, 0)));
    facts.uri_updated = Some(("ipfs://second".into(), (15, 0)));
    let mut wallet = vec![0u8; 12];
    wallet.extend_from_slice(&[0; 19]);
    wallet.push(0xaa);
    facts.wallet = Some((wallet, 30));
    let agent = erc8004_agent("k".into(), REGISTRY, "7", &facts).expect("registered");
    assert_eq!(agent.owner, "0xbob");
    assert_eq!(agent.uri.as_deref(), Some("ipfs://second"));
    assert_eq!(agent.agent_wallet.as_deref(), Some(WALLET));
    assert_eq!(agent.payment_address, agent.agent_wallet);
    assert_eq!((agent.registered_block, agent.registered_at), (10, 1_000));
    assert_eq!(agent.last_event_block, 30);
    assert_eq!(agent.token_id.as_deref(), Some("7"));
    assert_eq!(agent.source, "erc8004");
}

#[test]
fn a_uri_update_before_the_registration_does_not_count() {
    let mut facts = registered();
    facts.uri_updated = Some(("ipfs://stale".into(), (9, 0)));
    let agent = erc8004_agent("k".into(), REGISTRY, "7", &facts).expect("registered");
    assert_eq!(agent.uri.as_deref(), Some("ipfs://first"));
}

#[test]
fn a_transfer_clears_the_tokens_approval_but_not_a_later_one() {
    let mut facts = registered();
    facts.approval = Some(("0xop".into(), true, (12, 0)));
    facts.transferred = Some(("0xbob".into(), (13, 0)));
    let cleared = erc8004_agent("k".into(), REGISTRY, "7", &facts).expect("registered");
    assert!(cleared.operators.is_empty());
    facts.approval = Some(("0xop".into(), true, (14, 0)));
    let approved = erc8004_agent("k".into(), REGISTRY, "7", &facts).expect("registered");
    assert_eq!(approved.operators, ["0xop"]);
}

#[test]
fn operators_for_all_follow_the_latest_word_and_merge_sorted() {
    let approvals = vec![
        ("0xalice".to_string(), "0xz".to_string(), true),
        ("0xalice".to_string(), "0xa".to_string(), true),
        ("0xalice".to_string(), "0xz".to_string(), false),
        ("0xbob".to_string(), "0xb".to_string(), false),
    ];
    let by_owner = operators_for_all(approvals);
    assert_eq!(by_owner.get("0xalice"), Some(&vec!["0xa".to_string()]));
    assert_eq!(by_owner.get("0xbob"), None);
    let mut agent = AgentState {
        operators: vec!["0xop".into(), "0xa".into()],
        ..AgentState::default()
    };
    add_operators_for_all(&mut agent, &by_owner["0xalice"]);
    assert_eq!(agent.operators, ["0xa", "0xop"]);
}

#[test]
fn wallets_are_20_raw_bytes_or_an_abi_word() {
    assert!(wallet_from_metadata(&[1; 20]).is_some());
    let mut word = vec![0; 12];
    word.extend([2; 20]);
    assert_eq!(wallet_from_metadata(&word), Some(Address::from([2; 20])));
    assert_eq!(
        wallet_from_metadata(&[1; 32]),
        None,
        "a word with high bytes is no address"
    );
    assert_eq!(wallet_from_metadata(b"not a wallet"), None);
}

fn contract() -> BTreeMap<String, AgentState> {
    let state = found(Found {
        address: "0xc".into(),
        discovered_by: "registry".into(),
        via: "0xr".into(),
        block: 5,
        timestamp: 500,
    });
    BTreeMap::from([("0xc".to_string(), state)])
}

fn own(kind: &str, value: &str, at: Position, newest: bool) -> OwnFact {
    OwnFact {
        agent: "0xc".into(),
        kind: kind.into(),
        value: value.into(),
        at,
        timestamp: at.0 * 100,
        newest,
    }
}

#[test]
fn a_found_contract_is_active_and_paid_at_its_own_address() {
    let rows = contract();
    let state = &rows["0xc"];
    assert!(state.active);
    assert_eq!(state.payment_address.as_deref(), Some("0xc"));
    assert_eq!((state.registered_block, state.last_event_block), (5, 5));
}

#[test]
fn the_newest_of_own_events_and_snapshot_wins_per_kind() {
    let mut rows = contract();
    let snapshot = |kind: &'static str, value: &str, at: Position| SnapshotFact {
        agent: "0xc".into(),
        kind,
        at,
        value: value.into(),
    };
    apply_own(
        &mut rows,
        vec![
            own("owner", "0xold", (6, 0), true),
            own("active", "0", (9, 0), true),
        ],
        vec![
            snapshot("owner", "0xsnap", (7, 0)),
            snapshot("active", "1", (8, 0)),
        ],
    )
    .expect("valid values");
    let state = &rows["0xc"];
    assert_eq!(
        state.owner, "0xsnap",
        "the snapshot is newer than the event"
    );
    assert!(!state.active, "the event is newer than the snapshot");
    assert_eq!(state.last_event_block, 9);
}

#[test]
fn the_first_interval_stands_for_the_heartbeat_until_one_is_sent() {
    let mut rows = contract();
    apply_own(
        &mut rows,
        vec![
            own("interval", "60", (6, 0), false),
            own("interval", "120", (8, 0), true),
        ],
        Vec::new(),
    )
    .expect("valid values");
    assert_eq!(rows["0xc"].heartbeat_interval, Some(120));
    assert_eq!(rows["0xc"].last_heartbeat, Some(600));
    let mut rows = contract();
    apply_own(
        &mut rows,
        vec![
            own("interval", "60", (6, 0), true),
            own("heartbeat", "777", (7, 0), true),
        ],
        Vec::new(),
    )
    .expect("valid values");
    assert_eq!(rows["0xc"].last_heartbeat, Some(777));
}

#[test]
fn numbers_past_the_column_are_unknown_and_non_numbers_are_errors() {
    let mut rows = contract();
    apply_own(
        &mut rows,
        vec![own("interval", &u64::MAX.to_string(), (6, 0), true)],
        Vec::new(),
    )
    .expect("a u64 is valid");
    assert_eq!(rows["0xc"].heartbeat_interval, None);
    let error = apply_own(
        &mut contract(),
        vec![own("heartbeat", "soon", (6, 0), true)],
        Vec::new(),
    )
    .expect_err("not a number");
    assert_eq!(error.value, "soon");
}

#[test]
fn registry_events_set_status_per_registry_and_the_enroller_as_owner() {
    let event = |registry: &str, kind: &str, pending: bool, block: i64| RegistryFact {
        agent: "0xc".into(),
        registry: registry.into(),
        kind: kind.into(),
        actor: "0xenroller".into(),
        metadata_uri: (kind == "AgentRegistered").then(|| format!("ipfs://{registry}")),
        pending,
        block,
    };
    let mut rows = contract();
    apply_registry(
        &mut rows,
        vec![
            event("0xr1", "AgentRegistered", true, 6),
            event("0xr2", "AgentRegistered", false, 7),
            event("0xr1", "AgentApproved", false, 8),
            event("0xr2", "AgentRemoved", false, 9),
        ],
    );
    let state = &rows["0xc"];
    assert_eq!(state.owner, "0xenroller");
    assert_eq!(state.uri.as_deref(), Some("ipfs://0xr2"));
    assert_eq!(
        state.registry_status.as_deref(),
        Some(r#"{"0xr1":"active","0xr2":"removed"}"#)
    );
    assert_eq!(state.last_event_block, 9);
}

#[test]
fn the_card_json_names_the_contract_and_a_zero_hash_anchors_nothing() {
    let mut state = AgentState {
        card: Some(
            r#"{"name":"Agent","description":"","cardUri":"https://a/card.json","cardHash":"0x00"}"#
                .into(),
        ),
        ..AgentState::default()
    };
    describe_card(&mut state);
    assert_eq!(state.name.as_deref(), Some("Agent"));
    assert_eq!(state.description, None, "an empty text is none");
    assert_eq!(state.card_uri.as_deref(), Some("https://a/card.json"));
    assert_eq!(state.card_hash, None);
    state.card = Some("not json".into());
    describe_card(&mut state);
    assert_eq!(state.name, None);
}

#[test]
fn only_the_agent_wallet_key_binds_a_payment_address() {
    let wallet = Address::from([7; 20]);
    let mut word = [0u8; 32];
    word[12..].copy_from_slice(wallet.as_slice());
    assert_eq!(
        metadata_payment_address("agentWallet", wallet.as_slice()),
        Some(Some(wallet))
    );
    assert_eq!(
        metadata_payment_address("agentWallet", &word),
        Some(Some(wallet)),
        "ABI-encoded"
    );
    assert_eq!(
        metadata_payment_address("agentWallet", b"none"),
        Some(None),
        "a value that is no address withdraws the binding"
    );
    assert_eq!(metadata_payment_address("name", wallet.as_slice()), None);
    assert_eq!(
        metadata_payment_address("AgentWallet", wallet.as_slice()),
        None
    );
}
