//! Agent Cards served by the official A2A SDKs' own HTTP handlers (the Python SDK's Starlette
//! route, the JS SDK's express handler with and without its v0.3 compatibility layer), found
//! from a base URL through the well-known path as a registration file's A2A service would
//! give it: each reads to the same skills, and the signed ones verify.

use crate::support;

use agentindex_indexer::documents::{Checked, Expect, Projection};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

fn tools() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tools"))
}

fn key() -> String {
    format!(
        "{}/tests/fixtures/keys/es256.pem",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Starts an SDK server for `card`; returns it (killed on drop) and its base URL.
async fn serve(mut command: Command, card: &serde_json::Value) -> (Child, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("starting an SDK server (run scripts/install-tools)");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(card.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = lines
        .next_line()
        .await
        .unwrap()
        .expect("the server prints its port");
    (child, format!("http://127.0.0.1:{}", port.trim()))
}

/// The Python SDK's card route, serving the card signed by the SDK's signer.
fn python() -> Command {
    let mut command = Command::new(tools().join(".venv/bin/python"));
    command
        .arg(tools().join("a2a/serve_card.py"))
        .args([key().as_str(), "ES256", "sdk-key"]);
    command
}

/// The JS SDK's express handler; `mode` as `tools/a2a/serve-card.mjs` explains.
fn js(mode: &str) -> Command {
    let mut command = Command::new("node");
    command.arg(tools().join("a2a/serve-card.mjs")).args([
        key().as_str(),
        "ES256",
        "sdk-key",
        mode,
    ]);
    command
}

fn card(protocol_version: &str) -> serde_json::Value {
    json!({
        "name": "Served ✓", "description": "Served by an SDK", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://served.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": protocol_version}],
        "capabilities": {"streaming": false}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "lookup", "name": "Lookup", "description": "finds things", "tags": ["search", "web"], "examples": []}]
    })
}

fn skills(checked: &Checked) -> Vec<(String, Vec<String>)> {
    match &checked.projection {
        Some(Projection::Card(card)) => card
            .skills
            .iter()
            .map(|s| (s.id.clone(), s.tags.clone()))
            .collect(),
        other => panic!("not a card: {other:?} {:?}", checked.report.lints),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_served_by_the_sdks_read_alike_and_signed_ones_verify() {
    let checker = support::checker::loopback_checker(vec![support::signing::es256_jwk("sdk-key")]);
    let expected = vec![(
        "lookup".to_string(),
        vec!["search".to_string(), "web".to_string()],
    )];
    for (name, command, card, signed) in [
        ("python, signed", python(), card("1.0"), true),
        ("js, signed", js("signed"), card("1.0"), true),
        ("js, v0.3 compatibility", js("legacy"), card("0.3"), false),
        (
            "js, v0.3 compatibility, signed",
            js("legacy-signed"),
            card("0.3"),
            true,
        ),
    ] {
        let (_server, base) = serve(command, &card).await;
        let checked = checker.check(&base, Expect::A2a, None).await;
        assert!(
            !checked.report.has_errors(),
            "{name}: {:?}",
            checked.report.lints
        );
        assert_eq!(
            checked.source.as_deref(),
            Some(format!("{base}/.well-known/agent-card.json").as_str()),
            "{name}: found through the well-known path"
        );
        assert_eq!(skills(&checked), expected, "{name}");
        let signature = checked.signature.as_ref().map(|s| s.as_str());
        assert_eq!(
            signature,
            Some(if signed { "valid" } else { "unsigned" }),
            "{name}: {:?}",
            checked.signature
        );
    }
}
