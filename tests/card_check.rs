//! `agentindex card check` run as a user would: a good card passes with its projection printed,
//! a broken one fails with the reason, a card under development on this machine is fetched
//! (plain http flagged) unless a config closes it, a base URL finds its well-known card, and a
//! server that drips its answer is cut off at the deadline per document.

use crate::support;

use std::process::{Command, Output};
use std::time::{Duration, Instant};
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
async fn a_card_under_development_is_fetched_over_http_and_flagged_and_a_config_rules() {
    let server = DocServer::start().await;
    let url = server.route(
        "/card.json",
        Route::Body("application/json", b"{}".to_vec()),
    );
    // No config: the loopback card is fetched as asked, and plain http is flagged.
    let output = card_check(&url, None);
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let codes: Vec<&str> = printed["report"]["lints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["code"].as_str())
        .collect();
    assert!(codes.contains(&"document.transport.insecure"), "{codes:?}");
    assert!(
        codes.contains(&"card.name.missing"),
        "an empty card is read: {codes:?}"
    );
    assert_eq!(output.status.code(), Some(1), "and is not usable");
    assert_eq!(server.hits("/card.json"), 1);

    // A config's rules apply: https only refuses it, and so do closed private addresses.
    let dir = tempfile::tempdir().unwrap();
    let strict = dir.path().join("strict.toml");
    std::fs::write(
        &strict,
        "[documents]\nallow_private_addresses = true\nallow_http = false\n",
    )
    .unwrap();
    let output = card_check(&url, Some(&strict));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("plain http is not allowed"), "{stderr}");
    let closed = dir.path().join("closed.toml");
    std::fs::write(&closed, "[documents]\n").unwrap();
    let output = card_check(&url, Some(&closed));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("loopback or private address"), "{stderr}");
    assert_eq!(server.hits("/card.json"), 1, "neither was fetched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_is_tried_at_the_well_known_card_paths() {
    let server = DocServer::start().await;
    let card = serde_json::json!({
        "name": "Legacy", "description": "v0.3", "url": "https://legacy.example/a2a",
        "protocolVersion": "0.2.5", "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "tags": []}]
    });
    let found = server.route(
        "/.well-known/agent.json",
        Route::Body("application/json", card.to_string().into_bytes()),
    );
    let base = found.replace(".well-known/agent.json", "");
    let output = card_check(&base, None);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("the card is at {found}")),
        "{stderr}"
    );
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["projection"]["kind"], "card");
    assert_eq!(server.hits("/.well-known/agent.json"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_uris_work() {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dripping_server_fails_the_check_at_the_documents_deadline() {
    let server = DocServer::start().await;
    // A byte every half second, each well within the per-read and per-attempt timeouts.
    let url = server.route("/drip.json", Route::Trickle(Duration::from_millis(500)));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agentindex.toml");
    std::fs::write(
        &config,
        "[documents]\nallow_private_addresses = true\nallow_http = true\nfetch_deadline_secs = 2\n",
    )
    .unwrap();
    let started = Instant::now();
    let output = card_check(&url, Some(&config));
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no complete answer within the 2 s deadline for one document (documents.fetch_deadline_secs)"),
        "{stderr}"
    );
    assert!(
        took < Duration::from_secs(20),
        "the check ends at the deadline, not after every retry: {took:?}"
    );
}
