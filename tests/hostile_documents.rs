//! A corpus of hostile and broken documents, each served or given the way an attacker or a
//! careless host would: every one ends as a recorded finding with a clear reason, none stops
//! the checker, and memory stays bounded by the fetch limits.

mod support;

use agentindex_indexer::documents::signature::SignatureStatus;
use agentindex_indexer::documents::uri::ResolveOptions;
use agentindex_indexer::documents::{Checker, Expect, FetchPolicy, Fetcher, Severity};
use std::time::Duration;
use support::doc_server::{DocServer, Route};

fn checker(allow_private: bool, allow_http: bool) -> Checker {
    Checker::new(
        Fetcher::new(FetchPolicy {
            allow_private,
            allow_http,
            max_bytes: 64 * 1024,
            total_timeout: Duration::from_secs(2),
            retries: 0,
            ..FetchPolicy::default()
        })
        .unwrap(),
        ResolveOptions {
            allow_http,
            max_bytes: 64 * 1024,
            ..ResolveOptions::default()
        },
        vec![support::signing::es256_jwk("k")],
    )
}

fn json_body(text: &str) -> Route {
    Route::Body("application/json", text.as_bytes().to_vec())
}

fn valid_card() -> serde_json::Value {
    serde_json::json!({
        "name": "A", "description": "B",
        "supportedInterfaces": [{"url": "https://a.example", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_document_ends_as_a_recorded_finding() {
    let server = DocServer::start().await;
    let b = server.base.clone();
    let deep = "[".repeat(20_000) + &"]".repeat(20_000);
    let deep_object = "{\"a\":".repeat(500) + "1" + &"}".repeat(500);
    let mut tampered = support::signing::sign_es256(valid_card(), "k");
    tampered["name"] = serde_json::json!("Changed");
    let unknown_key = support::signing::sign_es256(valid_card(), "someone-else");
    let mut alg_none = valid_card();
    alg_none["signatures"] =
        serde_json::json!([{"protected": "eyJhbGciOiJub25lIn0", "signature": ""}]);
    let mut hmac = valid_card();
    hmac["signatures"] = serde_json::json!([{"protected": "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsifQ", "signature": "c2VjcmV0"}]);

    // (name, path to serve or None, route, URI to check, expected code)
    let served: Vec<(&str, &str, Route, &str)> = vec![
        (
            "oversized body",
            "/big",
            Route::Body("application/json", vec![b' '; 70 * 1024]),
            "document.fetch",
        ),
        (
            "huge declared length",
            "/declared",
            Route::HugeLength,
            "document.fetch",
        ),
        ("endless body", "/endless", Route::Endless, "document.fetch"),
        (
            "slow body",
            "/slow",
            Route::Trickle(Duration::from_millis(300)),
            "document.fetch",
        ),
        ("not found", "/404", Route::Status(404), "document.fetch"),
        ("server error", "/500", Route::Status(500), "document.fetch"),
        ("forbidden", "/403", Route::Status(403), "document.fetch"),
        (
            "invalid JSON",
            "/invalid",
            json_body("{name: 'A'}"),
            "document.json",
        ),
        (
            "truncated JSON",
            "/truncated",
            json_body("{\"name\": \"A\", \"skills\": ["),
            "document.json",
        ),
        ("empty body", "/empty", json_body(""), "document.json"),
        (
            "HTML page",
            "/html",
            Route::Body("text/html", b"<html><body>hi</body></html>".to_vec()),
            "document.json",
        ),
        (
            "deep array nesting",
            "/deep",
            json_body(&deep),
            "document.json",
        ),
        (
            "deep object nesting",
            "/deep-object",
            json_body(&deep_object),
            "document.json",
        ),
        (
            "number out of range",
            "/number",
            json_body("{\"name\": 1e400}"),
            "document.json",
        ),
        (
            "non-UTF-8 bytes",
            "/latin1",
            Route::Body("application/json", b"{\"name\": \"caf\xe9\"}".to_vec()),
            "document.encoding",
        ),
        (
            "UTF-16 text",
            "/utf16",
            Route::Body("application/json", vec![0xff, 0xfe, b'{', 0, b'}', 0]),
            "document.encoding",
        ),
        (
            "top-level array",
            "/array",
            json_body("[1, 2, 3]"),
            "card.not_object",
        ),
        (
            "top-level string",
            "/string",
            json_body("\"card\""),
            "card.not_object",
        ),
        (
            "top-level null",
            "/null",
            json_body("null"),
            "card.not_object",
        ),
        (
            "empty object",
            "/object",
            json_body("{}"),
            "card.name.missing",
        ),
        (
            "name of the wrong type",
            "/name-type",
            json_body("{\"name\": {\"en\": \"A\"}}"),
            "json.type.string",
        ),
        (
            "skills not a list",
            "/skills",
            json_body("{\"name\": \"A\", \"skills\": \"all\"}"),
            "json.type.array",
        ),
        (
            "javascript interface URL",
            "/js-url",
            json_body(
                "{\"name\": \"A\", \"supportedInterfaces\": [{\"url\": \"javascript:alert(1)\"}]}",
            ),
            "card.interface.url.scheme",
        ),
        (
            "interface URL not a URL",
            "/bad-url",
            json_body("{\"name\": \"A\", \"url\": \"not a url\"}"),
            "card.interface.url.invalid",
        ),
        (
            "skill without id",
            "/skill-id",
            json_body("{\"name\": \"A\", \"skills\": [{\"name\": \"x\"}]}"),
            "card.skill.incomplete",
        ),
        (
            "extension without uri",
            "/ext",
            json_body(
                "{\"name\": \"A\", \"capabilities\": {\"extensions\": [{\"required\": true}]}}",
            ),
            "card.extension.uri.missing",
        ),
        (
            "signature changed after signing",
            "/tampered",
            json_body(&tampered.to_string()),
            "card.signature.invalid",
        ),
        (
            "signature by an unknown key",
            "/unknown-key",
            json_body(&unknown_key.to_string()),
            "card.signature.key_unavailable",
        ),
        (
            "signature with alg none",
            "/alg-none",
            json_body(&alg_none.to_string()),
            "card.signature.unsupported",
        ),
        (
            "signature with HMAC",
            "/hmac",
            json_body(&hmac.to_string()),
            "card.signature.unsupported",
        ),
    ];
    for (_, path, route, _) in &served {
        server.route(path, route.clone());
    }
    server.route("/loop-a", Route::Redirect(format!("{b}/loop-b")));
    server.route("/loop-b", Route::Redirect(format!("{b}/loop-a")));
    for i in 0..10 {
        server.route(
            &format!("/hop-{i}"),
            Route::Redirect(format!("{b}/hop-{}", i + 1)),
        );
    }
    server.route(
        "/to-metadata",
        Route::Redirect("http://169.254.169.254/latest/meta-data/".into()),
    );
    server.route(
        "/to-mapped-metadata",
        Route::Redirect("http://[::ffff:169.254.169.254]/".into()),
    );
    server.route("/to-file", Route::Redirect("file:///etc/passwd".into()));
    server.route("/to-zero", Route::Redirect("http://0.0.0.0/".into()));

    let mut cases: Vec<(String, String, &str, Checker)> = served
        .iter()
        .map(|(name, path, _, code)| {
            (
                name.to_string(),
                format!("{b}{path}"),
                *code,
                checker(true, true),
            )
        })
        .collect();
    let huge_data = format!("data:application/json;base64,{}", "A".repeat(200_000));
    for (name, uri, code, checker) in [
        (
            "redirect loop",
            format!("{b}/loop-a"),
            "document.fetch",
            checker(true, true),
        ),
        (
            "endless redirects",
            format!("{b}/hop-0"),
            "document.fetch",
            checker(true, true),
        ),
        (
            "redirect to cloud metadata",
            format!("{b}/to-metadata"),
            "document.fetch",
            checker(true, true),
        ),
        (
            "redirect to mapped metadata",
            format!("{b}/to-mapped-metadata"),
            "document.fetch",
            checker(true, true),
        ),
        (
            "redirect to a file",
            format!("{b}/to-file"),
            "document.fetch",
            checker(true, true),
        ),
        (
            "redirect to 0.0.0.0",
            format!("{b}/to-zero"),
            "document.fetch",
            checker(true, true),
        ),
        (
            "loopback when private is closed",
            format!("{}/object", b.replace("http://", "https://")),
            "document.fetch",
            checker(false, false),
        ),
        (
            "cloud metadata directly",
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "document.fetch",
            checker(true, true),
        ),
        (
            "IPv6 link-local",
            "http://[fe80::1]/card.json".to_string(),
            "document.fetch",
            checker(true, true),
        ),
        (
            "plain http when not allowed",
            format!("{b}/object"),
            "document.uri",
            checker(true, false),
        ),
        (
            "data: URI decoding to a huge body",
            huge_data,
            "document.uri",
            checker(true, true),
        ),
        (
            "data: URI with bad base64",
            "data:application/json;base64,!!!".to_string(),
            "document.uri",
            checker(true, true),
        ),
        (
            "ftp scheme",
            "ftp://files.example/card.json".to_string(),
            "document.uri",
            checker(true, true),
        ),
        (
            "file scheme",
            "file:///etc/passwd".to_string(),
            "document.uri",
            checker(true, true),
        ),
        (
            "javascript scheme",
            "javascript:alert(1)".to_string(),
            "document.uri",
            checker(true, true),
        ),
        (
            "ipfs without a CID",
            "ipfs://definitely-not-a-cid".to_string(),
            "document.uri",
            checker(true, true),
        ),
        (
            "empty URI",
            "   ".to_string(),
            "document.uri",
            checker(true, true),
        ),
        (
            "relative path",
            "agent.json".to_string(),
            "document.uri",
            checker(true, true),
        ),
    ] {
        cases.push((name.to_string(), uri, code, checker));
    }
    assert!(
        cases.len() >= 40,
        "the corpus has {} documents",
        cases.len()
    );

    let before = support::memory::peak_kib("self").unwrap_or(0);
    for (name, uri, code, checker) in &cases {
        let checked = checker.check(uri, Expect::Any, None).await;
        let finding = checked
            .report
            .lints
            .iter()
            .find(|l| l.code == *code)
            .unwrap_or_else(|| panic!("{name}: expected {code}, got {:?}", checked.report.lints));
        assert!(
            !finding.message.trim().is_empty(),
            "{name}: the reason is empty"
        );
        if code.starts_with("card.signature") {
            assert!(
                !matches!(
                    checked.signature,
                    None | Some(SignatureStatus::Valid { .. }) | Some(SignatureStatus::Unsigned)
                ),
                "{name}: {:?}",
                checked.signature
            );
        } else {
            assert!(
                checked
                    .report
                    .lints
                    .iter()
                    .any(|l| l.severity == Severity::Error),
                "{name}: not recorded as an error: {:?}",
                checked.report.lints
            );
        }
    }
    let grown_mib = support::memory::peak_kib("self")
        .unwrap_or(0)
        .saturating_sub(before)
        / 1024;
    assert!(
        grown_mib < 256,
        "peak memory grew by {grown_mib} MiB over the corpus"
    );
    assert!(server.hits("/endless") >= 1 && server.hits("/slow") >= 1);
}
