//! What a registry transaction's net asset change and metadata make of it.

use super::*;
use crate::cardano::source::{Amount, Utxo};
use alloy::primitives::B256;
use serde_json::json;

const V1: &str = "7e8bdaf2b2b919a3a4b94002cafb50086c0c845fe535d07a77ab7f77";
const V2: &str = "67ab0c92c4ac1610895a1c965ee50aba41a8f1513b15240723b3bd0b";

fn policies() -> Vec<RegistryPolicy> {
    vec![
        RegistryPolicy {
            policy_id: V1.into(),
            version: 1,
        },
        RegistryPolicy {
            policy_id: V2.into(),
            version: 2,
        },
    ]
}

fn place(valid: bool) -> TxPlace {
    TxPlace {
        hash: B256::repeat_byte(1),
        block_hash: B256::repeat_byte(2),
        height: 10,
        index: 0,
        time: 1_700_000_000,
        valid,
    }
}

fn utxo(address: &str, units: &[(&str, u128)]) -> Utxo {
    Utxo {
        address: address.into(),
        tx_hash: B256::repeat_byte(9),
        output_index: 0,
        amounts: units
            .iter()
            .map(|(unit, quantity)| Amount {
                unit: unit.to_string(),
                quantity: *quantity,
            })
            .collect(),
        inline_datum: None,
        collateral: false,
        reference: false,
    }
}

fn cip25(policy: &str, name: &str, body: serde_json::Value) -> Vec<MetadataEntry> {
    vec![MetadataEntry {
        label: "721".into(),
        json: json!({ policy: { name: body }, "version": "1" }),
    }]
}

#[test]
fn a_mint_names_its_holder_and_its_metadata() {
    let name = "aa".repeat(32);
    let unit = format!("{V1}{name}");
    let utxos = TxUtxos {
        inputs: vec![utxo("addr_test1wallet", &[("lovelace", 10_000_000)])],
        outputs: vec![
            utxo("addr_test1holder", &[("lovelace", 2_000_000), (&unit, 1)]),
            utxo("addr_test1wallet", &[("lovelace", 7_800_000)]),
        ],
    };
    let metadata = cip25(V1, &name, json!({"name": "Summariser"}));
    let actions = actions(1, &place(true), &utxos, &metadata, &policies());
    assert_eq!(actions.len(), 1);
    let action = &actions[0];
    assert_eq!(action.asset_name, name);
    assert_eq!(action.registry_version, 1);
    assert_eq!(
        action.agent.to_string(),
        format!("1:{unit}"),
        "a V1 entry is named by its whole asset name"
    );
    assert_eq!(
        action.kind,
        ActionKind::Mint {
            holder: Some("addr_test1holder".into()),
            metadata: Ok(json!({"name": "Summariser"})),
        }
    );
}

#[test]
fn a_v2_update_burns_then_mints_the_same_agent() {
    let stem = "01".to_string() + &"bb".repeat(28);
    let old = format!("{V2}{stem}000001");
    let new = format!("{V2}{stem}000002");
    let utxos = TxUtxos {
        inputs: vec![utxo(
            "addr_test1holder",
            &[("lovelace", 5_000_000), (&old, 1)],
        )],
        outputs: vec![utxo(
            "addr_test1holder",
            &[("lovelace", 4_000_000), (&new, 1)],
        )],
    };
    let metadata = cip25(V2, &format!("{stem}000002"), json!({"name": "v2"}));
    let actions = actions(7, &place(true), &utxos, &metadata, &policies());
    let kinds: Vec<_> = actions
        .iter()
        .map(|a| (a.kind.as_str(), a.position))
        .collect();
    assert_eq!(kinds, [("burn", 0), ("mint", 1)]);
    assert_eq!(
        actions[0].agent, actions[1].agent,
        "versions of one entry are one agent"
    );
    assert_eq!(actions[0].agent.to_string(), format!("7:{V2}{stem}"));
}

#[test]
fn a_burn_is_a_deregistration_and_failed_or_foreign_transactions_do_nothing() {
    let unit = format!("{V1}{}", "cc".repeat(32));
    let burn = TxUtxos {
        inputs: vec![utxo(
            "addr_test1holder",
            &[("lovelace", 3_000_000), (&unit, 1)],
        )],
        outputs: vec![utxo("addr_test1holder", &[("lovelace", 2_800_000)])],
    };
    let actions_of = |place, utxos: &TxUtxos| actions(1, &place, utxos, &[], &policies());
    let burned = actions_of(place(true), &burn);
    assert_eq!(burned.len(), 1);
    assert_eq!(burned[0].kind, ActionKind::Burn);
    assert!(
        actions_of(place(false), &burn).is_empty(),
        "scripts failed: nothing burned"
    );
    let other = format!("{}{}", "dd".repeat(28), "cc".repeat(32));
    let foreign = TxUtxos {
        inputs: vec![],
        outputs: vec![utxo("addr_test1x", &[(&other, 1)])],
    };
    assert!(actions_of(place(true), &foreign).is_empty());
    // Moving an NFT (in and out again) neither mints nor burns.
    let moved = TxUtxos {
        inputs: vec![utxo("addr_test1a", &[(&unit, 1)])],
        outputs: vec![utxo("addr_test1b", &[(&unit, 1)])],
    };
    assert!(actions_of(place(true), &moved).is_empty());
}

#[test]
fn metadata_is_found_by_hex_or_text_name_and_its_absence_is_said() {
    let text_name = alloy::hex::encode("agent-1");
    let unit = format!("{V1}{text_name}");
    let utxos = TxUtxos {
        inputs: vec![],
        outputs: vec![utxo("addr_test1h", &[(&unit, 1)])],
    };
    let by_text = cip25(V1, "agent-1", json!({"name": "by text"}));
    let found = actions(1, &place(true), &utxos, &by_text, &policies());
    assert!(
        matches!(&found[0].kind, ActionKind::Mint { metadata: Ok(m), .. } if m["name"] == "by text")
    );
    let none = actions(1, &place(true), &utxos, &[], &policies());
    assert!(
        matches!(&none[0].kind, ActionKind::Mint { metadata: Err(e), .. } if e.0.contains("label 721"))
    );
    let elsewhere = cip25(V2, "agent-1", json!({}));
    let wrong = actions(1, &place(true), &utxos, &elsewhere, &policies());
    assert!(
        matches!(&wrong[0].kind, ActionKind::Mint { metadata: Err(e), .. } if e.0.contains(V1))
    );
}
