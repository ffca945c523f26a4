//! `agentindex card check` run as a user would: a good card passes with its projection printed,
//! a broken one fails with the reason, and an address the config does not open is refused.

use crate::support;

use std::process::{Command, Output};
use support::doc_server::{DocServer, Route};

fn card_check(url: &str, config: Option<&std::path::Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentindex"));
    command.args(["card", "check", url]);
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    command.output().unwrap()
}

fn open_config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("agentindex.toml");
    std::fs::write(
        &path,
        "[documents]\nallow_private_addresses = true\nallow_http = true\n",
    )
    .unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_card_passes_and_prints_its_projection() {
    let server = DocServer::start().await;
    let card = serde_json::json!({
        "name": "Echo", "description": "Repeats", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://echo.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["test"]}]
    });
    let url = server.route(
        "/.well-known/agent-card.json",
        Route::Body("application/json", card.to_string().into_bytes()),
    );
    let dir = tempfile::tempdir().unwrap();
    let output = card_check(&url, Some(&open_config(dir.path())));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["projection"]["kind"], "card");
    assert_eq!(printed["projection"]["skills"][0]["tags"][0], "test");
    assert_eq!(printed["source"], url);
    assert!(printed["hash"].as_str().unwrap().starts_with("0x"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_card_fails_with_the_reason() {
    let server = DocServer::start().await;
    let url = server.route(
        "/broken.json",
        Route::Body("application/json", b"{\"description\": 5".to_vec()),
    );
    let dir = tempfile::tempdir().unwrap();
    let output = card_check(&url, Some(&open_config(dir.path())));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("document.json"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_config_loopback_is_refused_and_data_uris_work() {
    let server = DocServer::start().await;
    let url = server.route(
        "/card.json",
        Route::Body("application/json", b"{}".to_vec()),
    );
    let output = card_check(&url, None);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(stderr.contains("plain http is not allowed"), "{stderr}");
    let output = card_check(&url.replace("http://", "https://"), None);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(stderr.contains("loopback or private address"), "{stderr}");
    assert_eq!(server.hits("/card.json"), 0);

    let file = r#"{"type":"https://eips.ethereum.org/EIPS/eip-8004#registration-v1","name":"R","services":[{"name":"A2A","endpoint":"https://r.example"}]}"#;
    let data = format!("data:application/json,{}", file.replace('"', "%22"));
    let output = card_check(&data, None);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["projection"]["kind"], "registration");
    assert_eq!(
        printed["projection"]["services"][0]["endpoint"],
        "https://r.example"
    );
}
