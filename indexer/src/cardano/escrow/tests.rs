//! Escrow datums as Masumi's payment service writes them (these two were built with pycardano
//! by the Blockfrost emulator, `tools/cardano/masumi_escrow.py`), and the actions a
//! transaction's escrow outputs and spends make.

use super::*;
use crate::cardano::source::{Amount, TxPlace, TxUtxos, Utxo};
use crate::config::EscrowContract;
use alloy::primitives::B256;

const V1_DATUM: &str = "d8799fd8799fd8799f581caed803553ece47ff4e47f975790ca912a0309201723d66edebd6d3e7ffd8799fd8799fd8799f581cdc328195497e71fc7a864877df732e52cec3ff04e01859a4e2ec54abffffffffd8799fd8799f581c0029c22a8b4e4ad8a860e83e6d2d5e98e3e379dc0a7070c6f5379afaffd8799fd8799fd8799f581cc93ae16366a77af39ec01c893d906989a25f15e7347f6fde70337c15ffffffff58200174b391533cd5e581e42e9b6edf9eea7410b4d971e195e1cdaf7e201bd513cb5840495397e253e3e102d94edde27652555d901b025c48cab29cfbc4583679d766c3495397e253e3e102d94edde27652555d901b025c48cab29cfbc4583679d766c35f58401d886ac7899e1228d7bd80dff8db909bfb26922cafb64e197aa92e512b27f8c3639136c39ce0e7f96620a1da712cd7dd6d4d2a88606bcaefefdbdc878ec5c5a3581c68703c121ce37aaee23b5c9d318a8bc8358aa39e5e2ea2847e9f4868ff5820f000fe153dae467ff5a65ae1ec73f0c3c4d63ce3e594ee13ed0d5c6c054c4c7f005820d5ecfd5c452f48ed7b506f8ad138aeebad2853d32df3ff75e13c10d8eaf3ebef401b0000019b76e508401b0000019b7712cf001b0000019b7780ac001b0000019b782577800000d87980ff";
const V2_DATUM: &str = "d8799fd8799fd8799f581caed803553ece47ff4e47f975790ca912a0309201723d66edebd6d3e7ffd8799fd8799fd8799f581cdc328195497e71fc7a864877df732e52cec3ff04e01859a4e2ec54abffffffffd87a80d8799fd8799f581c0029c22a8b4e4ad8a860e83e6d2d5e98e3e379dc0a7070c6f5379afaffd8799fd8799fd8799f581cc93ae16366a77af39ec01c893d906989a25f15e7347f6fde70337c15ffffffffd87a80582097519190bd1e63b7719dbeb255cb8f0d9a0b8200ba602ee0a7773f9f9b799593584022f44ed06c4968f40cbe9411631896712b71dd8b78c011df4e00ee379cb566ec22f44ed06c4968f40cbe9411631896712b71dd8b78c011df4e00ee379cb566ec5f58400850e70277f5aeedb3f3517e24e2df034a220e1d0112606ac2de943b00d7dddf70ac0c95dd045cb1b5f3c302f73a942545ae395b366f52a66010dea0105077fa581cd3955fdca54fca88a59841774cabe5031c6ff1b3e38089f52b000000ff5820c91b12dcea8ced82f20870288357990245ff2d890c1aecaef10f8d0857f5a613583c70ac0c95dd045cb1b5f3c302f73a942545ae395b366f52a66010dea0105077fad3955fdca54fca88a59841774cabe5031c6ff1b3e38089f52b00000000582010d45f91665962a46e927543a6038ce3ed6b920c8ba7d5be40e0fc92b2b9bb6e401b0000019b76e556601b0000019b77131d201b0000019b7780fa201b0000019b7825c5a00000d87980ff";
const V1_POLICY: &str = "639136c39ce0e7f96620a1da712cd7dd6d4d2a88606bcaefefdbdc87";
const V2_POLICY: &str = "70ac0c95dd045cb1b5f3c302f73a942545ae395b366f52a66010dea0";
const V1_UNIT: &str = "639136c39ce0e7f96620a1da712cd7dd6d4d2a88606bcaefefdbdc878ec5c5a368703c121ce37aaee23b5c9d318a8bc8358aa39e5e2ea2847e9f4868";
const V2_UNIT: &str = "70ac0c95dd045cb1b5f3c302f73a942545ae395b366f52a66010dea0105077fad3955fdca54fca88a59841774cabe5031c6ff1b3e38089f52b000000";
const SCRIPT: &str = "addr_test1wqftqfjgkw7j5urlh7dmt26sup8lf0c9un0vw0j9l6tcxhc0vprlp";

fn policies() -> Vec<RegistryPolicy> {
    vec![
        RegistryPolicy {
            policy_id: V1_POLICY.into(),
            version: 1,
        },
        RegistryPolicy {
            policy_id: V2_POLICY.into(),
            version: 2,
        },
    ]
}

#[test]
fn both_datum_versions_read_with_their_agent() {
    let v1 = parse_datum(V1_DATUM).unwrap();
    let v2 = parse_datum(V2_DATUM).unwrap();
    assert_eq!(v1.state, 0);
    assert_eq!(v2.state, 0);
    assert_eq!(
        alloy::hex::encode(&v1.buyer),
        "aed803553ece47ff4e47f975790ca912a0309201723d66edebd6d3e7"
    );
    assert_eq!(
        alloy::hex::encode(&v1.seller),
        "0029c22a8b4e4ad8a860e83e6d2d5e98e3e379dc0a7070c6f5379afa"
    );
    assert_eq!(
        v1.agent_unit().map(alloy::hex::encode).as_deref(),
        Some(V1_UNIT),
        "V1: after the nonce's 32 bytes"
    );
    assert_eq!(
        v2.agent_unit().map(alloy::hex::encode).as_deref(),
        Some(V2_UNIT),
        "V2: its own field"
    );
    assert_ne!(v1.key(), v2.key());
    assert!(
        parse_datum("d87980")
            .unwrap_err()
            .to_string()
            .contains("0 fields")
    );
    assert!(parse_datum("zz").is_err());
}

fn utxo(datum: Option<&str>, lovelace: u128, index: u32) -> Utxo {
    Utxo {
        address: SCRIPT.into(),
        tx_hash: B256::repeat_byte(3),
        output_index: index,
        amounts: vec![Amount {
            unit: "lovelace".into(),
            quantity: lovelace,
        }],
        inline_datum: datum.map(str::to_string),
        collateral: false,
        reference: false,
    }
}

/// `V2_DATUM` with its state set to `state` (the state constructor is the datum's last item).
fn in_state(state: u64) -> String {
    let tail = "d87980ff";
    assert!(V2_DATUM.ends_with(tail));
    format!(
        "{}d8{:02x}80ff",
        &V2_DATUM[..V2_DATUM.len() - tail.len()],
        0x79 + state
    )
}

#[test]
fn locks_moves_and_payouts_by_the_state_they_leave() {
    let place = TxPlace {
        hash: B256::repeat_byte(1),
        block_hash: B256::repeat_byte(2),
        height: 5,
        index: 0,
        time: 0,
        valid: true,
    };
    let contracts = [EscrowContract {
        address: SCRIPT.into(),
        version: 2,
    }];
    let run = |inputs, outputs| {
        escrow_actions(
            7,
            &place,
            &TxUtxos { inputs, outputs },
            &contracts,
            &policies(),
        )
    };
    let locked = run(vec![], vec![utxo(Some(V2_DATUM), 7_000_000, 0)]);
    assert_eq!(locked.len(), 1);
    let lock = &locked[0];
    assert_eq!(
        (lock.event, lock.state, lock.amount),
        ("locked", Some("FundsLocked"), 7_000_000)
    );
    assert_eq!(
        lock.agent.unwrap().to_string(),
        format!("7:{}", &V2_UNIT[..V2_UNIT.len() - 6])
    );

    let submitted = in_state(1);
    let moved = run(
        vec![utxo(Some(V2_DATUM), 7_000_000, 0)],
        vec![utxo(Some(&submitted), 7_000_000, 0)],
    );
    assert_eq!(moved.len(), 1, "one escrow, one action");
    assert_eq!(
        (moved[0].event, moved[0].state),
        ("moved", Some("ResultSubmitted"))
    );
    assert_eq!(
        moved[0].escrow_key, lock.escrow_key,
        "the same purchase in every state"
    );

    for (state, outcome) in [
        (1, "released"),
        (4, "released"),
        (0, "refunded"),
        (2, "refunded"),
        (5, "refunded"),
        (3, "disputed"),
    ] {
        let paid = run(vec![utxo(Some(&in_state(state)), 7_000_000, 0)], vec![]);
        assert_eq!(paid.len(), 1);
        assert_eq!(paid[0].event, outcome, "from state {state}");
        assert_eq!(paid[0].escrow_key, lock.escrow_key);
    }

    let broken = run(
        vec![],
        vec![utxo(Some("d87980"), 2_000_000, 1), utxo(None, 1, 2)],
    );
    assert_eq!(
        broken.iter().map(|a| a.event).collect::<Vec<_>>(),
        ["unreadable", "unreadable"]
    );
    assert!(
        broken[1]
            .error
            .as_deref()
            .unwrap()
            .contains("no inline datum")
    );
    let failed = TxPlace {
        valid: false,
        ..place
    };
    assert!(
        escrow_actions(
            7,
            &failed,
            &TxUtxos {
                inputs: vec![],
                outputs: vec![utxo(Some(V2_DATUM), 1, 0)]
            },
            &contracts,
            &policies()
        )
        .is_empty()
    );
}
