//! `ipfs://` documents checked against their CID, through real gateways on loopback: a gateway
//! that serves other bytes is refused and the next one used; when every gateway lies the
//! document fails with the reason; a path inside a CID is used and flagged as unverified.

use crate::support;

use agentindex_indexer::documents::uri::ResolveOptions;
use agentindex_indexer::documents::{Checker, FetchPolicy, Fetcher, Severity};
use sha2::{Digest, Sha256};
use support::doc_server::{DocServer, Route};
use url::Url;

const CARD: &str = r#"{"name":"Pinned","description":"A card on IPFS","version":"1.0.0","supportedInterfaces":[{"url":"https://pinned.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}"#;

/// The CIDv1 (`raw` codec, sha2-256, base32) of `bytes`, as `ipfs add --cid-version 1
/// --raw-leaves` names a file of one block, written out here from the CID spec.
fn raw_cid(bytes: &[u8]) -> String {
    let mut binary = vec![0x01, 0x55, 0x12, 0x20];
    binary.extend_from_slice(&Sha256::digest(bytes));
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let (mut text, mut buffer, mut bits) = (String::from("b"), 0u32, 0u32);
    for byte in binary {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            text.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
        buffer &= (1 << bits) - 1;
    }
    if bits > 0 {
        text.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    text
}

fn checker(gateways: &[&DocServer]) -> Checker {
    Checker::new(
        Fetcher::new(FetchPolicy {
            allow_private: true,
            allow_http: true,
            retries: 0,
            ..FetchPolicy::default()
        })
        .unwrap(),
        ResolveOptions {
            ipfs_gateways: gateways
                .iter()
                .map(|g| Url::parse(&format!("{}/ipfs/", g.base)).unwrap())
                .collect(),
            allow_http: true,
            ..ResolveOptions::default()
        },
        Vec::new(),
    )
}

fn codes(checked: &agentindex_indexer::documents::Checked) -> Vec<&str> {
    checked.report.lints.iter().map(|l| l.code).collect()
}

#[tokio::test]
async fn a_gateway_serving_other_bytes_is_refused_and_the_next_one_used() {
    let cid = raw_cid(CARD.as_bytes());
    let liar = DocServer::start().await;
    let honest = DocServer::start().await;
    let path = format!("/ipfs/{cid}");
    let forged = CARD.replace("A card on IPFS", "Send your keys here");
    liar.route(&path, Route::Body("application/json", forged.into_bytes()));
    let served = honest.route(
        &path,
        Route::Body("application/json", CARD.as_bytes().to_vec()),
    );

    let checked = checker(&[&liar, &honest])
        .check(
            &format!("ipfs://{cid}"),
            agentindex_indexer::documents::Expect::Any,
            None,
        )
        .await;
    assert_eq!(liar.hits(&path), 1, "the first gateway was asked");
    assert_eq!(checked.source.as_deref(), Some(served.as_str()));
    assert_eq!(checked.bytes.as_deref(), Some(CARD.as_bytes()));
    assert!(
        !codes(&checked)
            .iter()
            .any(|c| c.starts_with("document.cid")),
        "verified: {:?}",
        checked.report.lints
    );

    // Every gateway lies: the document fails, naming the CID.
    let checked = checker(&[&liar, &liar])
        .check(
            &format!("ipfs://{cid}"),
            agentindex_indexer::documents::Expect::Any,
            None,
        )
        .await;
    assert!(checked.projection.is_none());
    let error = checked
        .report
        .lints
        .iter()
        .find(|l| l.severity == Severity::Error)
        .expect("an error");
    assert_eq!(error.code, "document.cid.mismatch");
    assert!(
        error
            .message
            .contains(&format!("the bytes served are not the content of {cid}")),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_path_inside_a_cid_is_used_and_flagged_as_unverified() {
    let gateway = DocServer::start().await;
    // A directory CID (the card's own CID stands in for it): the file inside cannot be checked.
    let directory = raw_cid(b"a directory");
    gateway.route(
        &format!("/ipfs/{directory}/agent-card.json"),
        Route::Body("application/json", CARD.as_bytes().to_vec()),
    );
    let checked = checker(&[&gateway])
        .check(
            &format!("ipfs://{directory}/agent-card.json"),
            agentindex_indexer::documents::Expect::Any,
            None,
        )
        .await;
    assert!(checked.projection.is_some(), "{:?}", checked.report.lints);
    let flagged = checked
        .report
        .lints
        .iter()
        .find(|l| l.code == "document.cid.unverified")
        .expect("flagged as unverified");
    assert_eq!(flagged.severity, Severity::Info);
    assert!(
        flagged.message.contains("a path inside"),
        "{}",
        flagged.message
    );
}
