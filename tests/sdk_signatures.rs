//! Agent Cards signed by the official A2A SDKs (PyPI `a2a-sdk`, npm `@a2a-js/sdk`, installed
//! by scripts/install-tools) verify here with every algorithm both sides accept, served over
//! HTTP and checked as the documents worker checks them; a card changed after signing does not.

use crate::support;

use agentindex_indexer::documents::Expect;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::Jwk;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::doc_server::{DocServer, Route};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn key_file(alg: &str) -> PathBuf {
    let name = match alg {
        "ES256" => "es256.pem",
        "ES384" => "es384.pem",
        "EdDSA" => "eddsa.pem",
        _ => "rsa.pem",
    };
    repo().join("tests/fixtures/keys").join(name)
}

fn public_jwk(alg: &str, kid: &str) -> Jwk {
    let mut jwk: Jwk = if alg == "EdDSA" {
        serde_json::from_slice(
            &std::fs::read(repo().join("tests/fixtures/keys/eddsa.public.jwk.json")).unwrap(),
        )
        .unwrap()
    } else {
        let pem = std::fs::read(key_file(alg)).unwrap();
        let (key, algorithm) = match alg {
            "ES256" => (
                jsonwebtoken::EncodingKey::from_ec_pem(&pem).unwrap(),
                Algorithm::ES256,
            ),
            "ES384" => (
                jsonwebtoken::EncodingKey::from_ec_pem(&pem).unwrap(),
                Algorithm::ES384,
            ),
            "RS256" => (
                jsonwebtoken::EncodingKey::from_rsa_pem(&pem).unwrap(),
                Algorithm::RS256,
            ),
            _ => (
                jsonwebtoken::EncodingKey::from_rsa_pem(&pem).unwrap(),
                Algorithm::PS256,
            ),
        };
        Jwk::from_encoding_key(&key, algorithm).unwrap()
    };
    jwk.common.key_id = Some(kid.to_string());
    jwk
}

/// A v1.0 card with non-ASCII text, a `false` and an empty list: the values the SDKs
/// canonicalise differently from plain JCS.
fn card(sdk: &str) -> Value {
    json!({
        "name": format!("Señor {sdk} ✓"), "description": "Signed by an official SDK", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://sdk.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"], "examples": []}]
    })
}

/// Signs `card` with the SDK's own signer.
fn sdk_sign(sdk: &str, card: &Value, alg: &str, kid: &str) -> Value {
    let tools = repo().join("tools");
    let mut command = match sdk {
        "python" => {
            let mut c = Command::new(tools.join(".venv/bin/python"));
            c.arg(tools.join("a2a/sign_card.py"));
            c
        }
        _ => {
            let mut c = Command::new("node");
            c.arg(tools.join("a2a/sign-card.mjs"));
            c
        }
    };
    command.arg(key_file(alg)).arg(alg).arg(kid);
    support::tool::json_through(command, card, &format!("the {sdk} signer ({alg})"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_signed_by_each_sdk_verify_and_changed_ones_do_not() {
    let server = DocServer::start().await;
    let algs = ["ES256", "ES384", "EdDSA", "RS256", "PS256"];
    let checker = support::checker::loopback_checker(
        algs.iter()
            .map(|alg| public_jwk(alg, &format!("key-{alg}")))
            .collect(),
    );
    for sdk in ["python", "js"] {
        for alg in algs {
            let signed = sdk_sign(sdk, &card(sdk), alg, &format!("key-{alg}"));
            let url = server.route(
                &format!("/{sdk}/{alg}/agent-card.json"),
                Route::Body("application/json", signed.to_string().into_bytes()),
            );
            let checked = checker.check(&url, Expect::Card, None).await;
            assert_eq!(
                checked.signature.as_ref().map(|s| s.as_str()),
                Some("valid"),
                "{sdk} {alg}: {:?}",
                checked.signature
            );

            let mut changed = signed.clone();
            changed["description"] = json!("Changed after signing");
            let url = server.route(
                &format!("/{sdk}/{alg}/changed.json"),
                Route::Body("application/json", changed.to_string().into_bytes()),
            );
            let checked = checker.check(&url, Expect::Card, None).await;
            assert_eq!(
                checked.signature.as_ref().map(|s| s.as_str()),
                Some("invalid"),
                "{sdk} {alg} changed"
            );
        }
    }
}
