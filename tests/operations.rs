//! Running agentindex for months: `agentindex backup` copies a live database consistently.

use crate::support;
use crate::support::binary;

use agentindex_contracts::Devnet;
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_copies_the_database_while_it_is_served_and_never_overwrites() {
    let devnet = Devnet::start().await.unwrap();
    support::scenario::run(&devnet).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let config = dir.path().join("run.toml");
    std::fs::write(&config, toml).unwrap();
    let (running, base) = binary::start(&["run", "--config"], &config);
    // Ready once every chain reached its head.
    loop {
        let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
        if ready.status() == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let copy = dir.path().join("copy.db");
    let backup = || {
        Command::new(env!("CARGO_BIN_EXE_agentindex"))
            .arg("backup")
            .arg(&copy)
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap()
    };
    let first = backup();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(String::from_utf8_lossy(&first.stdout).contains("backed up"));
    let original = support::dump(&db).await;
    assert!(original.contains("erc8004"), "the scenario was indexed");
    support::assert_same_index(&support::dump(&copy).await, &original, "the backup");

    let again = backup();
    assert!(
        !again.status.success(),
        "an existing file is not overwritten"
    );
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains(&copy.display().to_string()) && said.contains("exists"),
        "{said}"
    );
    drop(running);
}
