//! Network presets and start blocks: `agentindex networks` lists every official deployment, and
//! a preset whose deployment block is not published starts at the block the follower finds by
//! itself (binary search of `eth_getCode`), checked on anvil against a linear walk.

use crate::support;
use crate::support::chain::mine;

use agentindex_contracts::{Devnet, DevnetOptions};
use agentindex_indexer::config::networks::{NETWORKS, network};
use agentindex_indexer::follower::deployment_block;
use agentindex_indexer::rpc::{ChainRpc, RetryPolicy};
use alloy::primitives::Address;
use alloy::providers::Provider;
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn networks_lists_every_preset_once_with_its_chain_id() {
    let output = Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .arg("networks")
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), NETWORKS.len(), "{text}");
    let names: BTreeSet<&str> = rows.iter().map(|row| row[0]).collect();
    let ids: BTreeSet<&str> = rows.iter().map(|row| row[1]).collect();
    assert_eq!(names.len(), rows.len(), "names are unique");
    assert_eq!(ids.len(), rows.len(), "chain ids are unique");
    for row in &rows {
        let preset = network(row[0]).unwrap_or_else(|| panic!("{} is no preset", row[0]));
        assert_eq!(row[1], preset.chain_id.to_string());
        assert_eq!(row[3], preset.identity());
    }
    assert!(NETWORKS.len() >= 48, "every mainnet and testnet listed");
    let base = network("base").unwrap();
    assert_eq!((base.chain_id, base.start_block), (8453, Some(41_663_799)));
    // The Cardano networks Masumi is followed on, after the EVM presets.
    let cardano: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|line| !line.starts_with("CARDANO"))
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().collect())
        .collect();
    let preprod = cardano
        .iter()
        .find(|row| row[0] == "cardano-preprod")
        .unwrap_or_else(|| panic!("no cardano-preprod in {text}"));
    assert_eq!(
        &preprod[1..4],
        [
            "1073741825",
            "cip34:0-1",
            "7e8bdaf2b2b919a3a4b94002cafb50086c0c845fe535d07a77ab7f77"
        ]
    );
    assert!(
        cardano
            .iter()
            .any(|row| row[0] == "cardano-mainnet" && row[2] == "cip34:1-764824073")
    );
    assert!(
        !ids.contains(preprod[1]),
        "no EVM preset shares a Cardano number"
    );
}

/// The first block whose state holds code at `address`, walking from the genesis.
async fn first_block_with_code(devnet: &Devnet, address: Address, head: u64) -> u64 {
    for block in 0..=head {
        let code = devnet
            .provider()
            .get_code_at(address)
            .number(block)
            .await
            .unwrap();
        if !code.is_empty() {
            return block;
        }
    }
    panic!("no code at {address} up to {head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preset_without_a_start_block_starts_at_the_registrys_deployment() {
    let arbitrum = network("arbitrum").unwrap();
    assert_eq!(
        arbitrum.start_block, None,
        "the preset leaves it to be found"
    );
    let devnet = Devnet::start_with(DevnetOptions {
        chain_id: arbitrum.chain_id,
        ..DevnetOptions::default()
    })
    .await
    .unwrap();
    let identity: Address = arbitrum.identity().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let index = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_agentindex"))
            .args(["index", "--network", "arbitrum", "--rpc"])
            .arg(devnet.endpoint())
            .args(["--exit-when-synced", "--no-documents"])
            .env(
                "AGENTINDEX_DATABASE__URL",
                support::database_url(&dir.path().join(name)),
            )
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .output()
            .unwrap()
    };

    // Not deployed on this chain: a clear, final error naming the address.
    let missing = index("missing.db");
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success(), "{stderr}");
    assert!(
        stderr.contains("no contract at the Identity Registry's address")
            && stderr.to_lowercase().contains(&format!("{identity:#x}")),
        "{stderr}"
    );

    // Deployed some way into the chain: found exactly, by either walk.
    mine(&devnet, 37).await;
    let code = devnet
        .provider()
        .get_code_at(devnet.deployment().identity)
        .await
        .unwrap();
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_setCode".into(), (identity, code))
        .await
        .unwrap();
    mine(&devnet, 9).await;
    let head = devnet.block_number().await.unwrap();
    let expected = first_block_with_code(&devnet, identity, head).await;
    assert!(
        expected > 30 && expected < head,
        "set mid-chain: {expected} of {head}"
    );

    let config = support::config(&devnet, &dir.path().join("unused.db"), 0);
    let rpc = ChainRpc::new(&config.chains[0], RetryPolicy::default()).unwrap();
    assert_eq!(
        deployment_block(&rpc, identity).await.unwrap(),
        Some(expected)
    );

    let found = index("found.db");
    let stderr = String::from_utf8_lossy(&found.stderr);
    assert!(found.status.success(), "{stderr}");
    let announced = stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|line| {
            line["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("start block found"))
        })
        .unwrap_or_else(|| panic!("no start block announced: {stderr}"));
    assert_eq!(announced["fields"]["start"], expected, "{announced}");
}
