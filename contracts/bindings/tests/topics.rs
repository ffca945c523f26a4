//! Every ERC-8004 event topic0 listed in `contracts/reference/erc8004-topics.txt` (the eight
//! current events and the legacy shapes, copied from the published specification and
//! deployments) must be emitted, with exactly that signature, by the contracts the bindings are
//! built from.

use agentindex_contracts::artifacts::committed_path;
use alloy::json_abi::JsonAbi;
use alloy::primitives::{B256, keccak256};
use std::path::PathBuf;

/// One `0x<topic0> Name(types)` line of the list.
struct Listed {
    topic0: B256,
    signature: String,
}

fn reference_path() -> PathBuf {
    std::env::var_os("AGENTINDEX_REFERENCE").map_or_else(
        || agentindex_contracts::tools::repo_root().join("contracts/reference/erc8004-topics.txt"),
        PathBuf::from,
    )
}

fn listed_topics() -> Vec<Listed> {
    let path = reference_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "reading the on-chain reference {}: {e} (set AGENTINDEX_REFERENCE to its path)",
            path.display()
        )
    });
    text.lines()
        .filter_map(|line| {
            let (hash, rest) = line.trim().split_once(' ')?;
            let topic0: B256 = hash.parse().ok()?;
            let signature = rest.split_whitespace().next()?.to_string();
            Some(Listed { topic0, signature })
        })
        .collect()
}

/// (signature, topic0) of every event in a committed artifact.
fn events_of(contract: &str) -> Vec<(String, B256)> {
    let raw = std::fs::read_to_string(committed_path(contract)).unwrap();
    let artifact: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let abi: JsonAbi = serde_json::from_value(artifact["abi"].clone()).unwrap();
    abi.events()
        .map(|e| (e.signature(), e.selector()))
        .collect()
}

#[test]
fn reference_lists_current_and_legacy_erc8004_events() {
    let listed = listed_topics();
    assert_eq!(
        listed.len(),
        16,
        "8 current and 8 legacy topic0 lines expected"
    );
    for entry in &listed {
        assert_eq!(
            keccak256(entry.signature.as_bytes()),
            entry.topic0,
            "the reference's own topic0 for {}",
            entry.signature
        );
    }
}

#[test]
fn every_listed_topic0_is_emitted_by_our_contracts_with_that_signature() {
    let current: Vec<(String, B256)> = [
        "IdentityRegistry",
        "ReputationRegistry",
        "ValidationRegistry",
    ]
    .into_iter()
    .flat_map(events_of)
    .collect();
    let legacy = events_of("LegacyEmitter");

    let listed = listed_topics();
    let (current_listed, legacy_listed) = listed.split_at(8);
    for entry in current_listed {
        assert!(
            current.contains(&(entry.signature.clone(), entry.topic0)),
            "ERC-8004 registries do not emit {} ({})",
            entry.signature,
            entry.topic0
        );
    }
    for entry in legacy_listed {
        assert!(
            legacy.contains(&(entry.signature.clone(), entry.topic0)),
            "LegacyEmitter does not emit {} ({})",
            entry.signature,
            entry.topic0
        );
    }
    assert_eq!(
        legacy.len(),
        8,
        "LegacyEmitter emits exactly the legacy shapes"
    );
}

#[test]
fn bindings_use_the_reference_topic0s() {
    use agentindex_contracts::{IdentityRegistry, ReputationRegistry, ValidationRegistry};
    use alloy::sol_types::SolEvent;
    let listed = listed_topics();
    let ours = [
        IdentityRegistry::Registered::SIGNATURE_HASH,
        IdentityRegistry::MetadataSet::SIGNATURE_HASH,
        IdentityRegistry::URIUpdated::SIGNATURE_HASH,
        ReputationRegistry::NewFeedback::SIGNATURE_HASH,
        ReputationRegistry::FeedbackRevoked::SIGNATURE_HASH,
        ReputationRegistry::ResponseAppended::SIGNATURE_HASH,
        ValidationRegistry::ValidationRequest::SIGNATURE_HASH,
        ValidationRegistry::ValidationResponse::SIGNATURE_HASH,
    ];
    let current: Vec<B256> = listed[..8].iter().map(|l| l.topic0).collect();
    assert_eq!(ours.to_vec(), current, "bindings in the reference's order");
}

#[test]
fn the_x402_settlement_events_are_emitted_by_our_stand_ins_with_those_topic0s() {
    let path =
        agentindex_contracts::tools::repo_root().join("contracts/reference/x402-settlement.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut events = 0;
    let mut addresses = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["address", _name, address] => {
                address.parse::<alloy::primitives::Address>().unwrap();
                addresses += 1;
            }
            [topic0, signature, contract] => {
                let topic0: B256 = topic0.parse().unwrap();
                assert_eq!(keccak256(signature.as_bytes()), topic0, "{signature}");
                assert!(
                    events_of(contract).contains(&(signature.to_string(), topic0)),
                    "{contract} does not emit {signature}"
                );
                events += 1;
            }
            _ => panic!("unreadable line: {line}"),
        }
    }
    assert_eq!((addresses, events), (3, 7));
}
