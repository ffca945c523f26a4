//! The committed artifacts the bindings compile from must be what forge builds from the sources
//! today; otherwise Rust would be testing contracts that no longer exist.

use agentindex_contracts::artifacts::{self, Mode};

#[test]
fn committed_artifacts_match_a_fresh_forge_build() {
    let mode = if std::env::var_os("AGENTINDEX_BLESS_ARTIFACTS").is_some() {
        Mode::Write
    } else {
        Mode::Check
    };
    if let Err(error) = artifacts::refresh(mode) {
        panic!("{error}");
    }
}

#[test]
fn trimming_keeps_abi_and_both_bytecodes_only() {
    let forge_output = serde_json::json!({
        "abi": [{"type": "function", "name": "f", "inputs": [], "outputs": [], "stateMutability": "view"}],
        "bytecode": {"object": "0x6001", "sourceMap": "1:2:3", "linkReferences": {}},
        "deployedBytecode": {"object": "0x6002", "immutableReferences": {}},
        "metadata": {"compiler": {"version": "0.8.30"}},
        "id": 7
    });
    let text = artifacts::trim(&forge_output).expect("complete artifact");
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value,
        serde_json::json!({
            "abi": forge_output["abi"],
            "bytecode": {"object": "0x6001"},
            "deployedBytecode": {"object": "0x6002"},
        })
    );
    assert!(text.ends_with("}\n"), "files end with a newline");

    let missing = serde_json::json!({"abi": []});
    assert_eq!(
        artifacts::trim(&missing).unwrap_err().to_string(),
        "missing /bytecode/object"
    );
}
