//! The explorer at `/` and GraphiQL, as a browser and a plain HTTP client see them, against
//! `agentindex dev`: real pages in Debian's headless Chromium (driven by playwright-core through
//! `tools/explorer/browser.mjs`, with every request beyond loopback refused), the routes that
//! answer the page, the embedded files with their caching and encodings, and the third-party
//! builds equal to the pinned npm packages. What documents say is shown as text: an agent whose
//! registration file is made of markup runs no script.

use crate::support;
use crate::support::dev::Dev;
use crate::support::graphql::data;
use crate::support::tool::json_through;

use agentindex_contracts::Devnet;
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// Where the test run writes the screenshots the README links.
const SCREENSHOTS: &str = "docs/screenshots";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_explorer_searches_shows_agents_live_and_the_ecosystem_in_a_real_browser() {
    let dev = Dev::start();
    dev.translators_once_read();
    let hostile = register_hostile_agent(&dev).await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut node = Command::new("node");
    node.arg(root.join("tools/explorer/browser.mjs"))
        .current_dir(root.join("tools"));
    let seen = json_through(
        node,
        &json!({
            "explorer": dev.explorer,
            "rpc": dev.chain,
            "usdc": dev.usdc,
            "skill": "translate",
            "hostile": { "id": hostile, "name": HOSTILE_NAME },
            "screenshots": root.join(SCREENSHOTS),
        }),
        "the explorer's browser run (tools/explorer/browser.mjs)",
    );
    // The script checks each page against the API as it goes and fails naming the check; what
    // it reports must show it checked something.
    assert!(seen["search"]["withSkill"].as_i64().unwrap() >= 3, "{seen}");
    assert_eq!(
        seen["live"]["paymentsAfter"].as_i64().unwrap(),
        seen["agent"]["payments"].as_i64().unwrap() + 1,
        "{seen}"
    );
    assert!(
        seen["ecosystem"]["agents"].as_i64().unwrap() >= 24,
        "{seen}"
    );
    assert_eq!(seen["graphiql"], true, "{seen}");
    assert!(
        seen["masumi"]["rows"].as_i64().unwrap() >= seen["masumi"]["released"].as_i64().unwrap(),
        "a Masumi agent's page lists its escrows: {seen}"
    );
    assert_eq!(seen["hostile"], HOSTILE_NAME, "{seen}");
    assert_eq!(seen["blocked"], json!([]), "{seen}");
    for page in ["search", "agent", "ecosystem"] {
        for width in ["desktop", "phone"] {
            let shot = root.join(SCREENSHOTS).join(format!("{page}-{width}.png"));
            let bytes = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
            assert!(bytes.starts_with(b"\x89PNG"), "{} is a PNG", shot.display());
        }
    }
}

/// A name that would run a script if a page put it in as HTML.
const HOSTILE_NAME: &str = "<img src=x onerror=\"alert(document.domain)\">Mallory";

/// Registers an ERC-8004 agent whose registration file (a `data:` URI) carries markup and a
/// `javascript:` endpoint, as anyone may publish, and waits until its name is indexed.
/// Returns its id.
async fn register_hostile_agent(dev: &Dev) -> String {
    use agentindex_contracts::IdentityRegistry;
    use alloy::providers::{Provider, ProviderBuilder};
    use base64::Engine;

    let file = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": HOSTILE_NAME,
        "description": "<script>alert('description')</script> hires itself out",
        "services": [{ "name": "A2A", "endpoint": "javascript:alert('endpoint')" }],
        "x402Support": true,
    });
    let uri = format!(
        "data:application/json;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(file.to_string())
    );
    let provider = ProviderBuilder::new().connect_http(dev.chain.parse().unwrap());
    let accounts = provider.get_accounts().await.unwrap();
    let identity = IdentityRegistry::new(dev.identity.parse().unwrap(), &provider);
    let receipt = identity
        .register_2(uri)
        .from(accounts[3])
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let registered = agentindex_contracts::demo::first_event::<IdentityRegistry::Registered>(
        &receipt,
        "Registered",
    )
    .unwrap();
    let id = format!(
        "31337:{}:{}",
        dev.identity.to_lowercase(),
        registered.agentId
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let found = data(
            &dev.graphiql,
            "query($id: ID!) { agent(id: $id) { name } }",
            json!({ "id": id }),
        );
        if found["agent"]["name"] == HOSTILE_NAME {
            return id;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the hostile agent was not indexed: {found}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_explorer_route_answers_the_page_and_files_are_cached_and_encoded() {
    let devnet = Devnet::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = support::config(&devnet, &db, 0);
    let served = support::api::serve(support::open(&db).await, &config).await;
    let http = reqwest::Client::new();
    let get = |path: &str| http.get(format!("{}{path}", served.base));
    for path in [
        "/",
        "/ecosystem",
        "/agents/31337:0xabc",
        "/?skill=translate",
    ] {
        let response = get(path).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let policy = response.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(policy.contains("script-src 'self'"), "{path}: {policy}");
        assert!(
            policy.contains("connect-src 'self';") && !policy.contains("ws:"),
            "{path}: websockets to the same origin only: {policy}"
        );
        let body = response.text().await.unwrap();
        assert!(
            body.contains("/explorer/app.js"),
            "{path} is the explorer's page"
        );
    }
    assert_eq!(
        get("/explorer/nothing.js").send().await.unwrap().status(),
        404
    );
    assert_eq!(get("/somewhere/else").send().await.unwrap().status(), 404);

    // A file is revalidated by its ETag: 304 while it is unchanged.
    let script = get("/explorer/app.js").send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert!(
        script.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    let etag = script.headers()["etag"].clone();
    let again = get("/explorer/app.js")
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // GraphiQL's build goes gzipped to a browser, inflated to a client that takes no gzip:
    // the same bytes either way.
    let gzipped = get("/vendor/graphiql.min.js")
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let compressed = gzipped.bytes().await.unwrap();
    let plain = get("/vendor/graphiql.min.js").send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.bytes().await.unwrap();
    assert_eq!(gunzip(&compressed), plain.to_vec());
    assert!(plain.starts_with(b"!function"), "GraphiQL's UMD build");

    // GET /graphql without a query is GraphiQL, loading nothing from outside, under a policy
    // that runs no script but its own and lets no site frame it.
    let graphiql = get("/graphql").send().await.unwrap();
    let policy = graphiql.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    for directive in [
        "script-src 'self';",
        "connect-src 'self';",
        "frame-ancestors 'none'",
    ] {
        assert!(
            policy.contains(directive),
            "GraphiQL: {directive} in {policy}"
        );
    }
    let page = graphiql.text().await.unwrap();
    assert!(page.contains("/vendor/graphiql.min.js"), "{page}");
    assert!(
        !page.contains("https://"),
        "GraphiQL loads nothing from the internet: {page}"
    );
    served.stop().await;
}

#[test]
fn embedded_builds_are_the_pinned_npm_packages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = std::fs::read_to_string(root.join("api/assets/vendor/SOURCES")).unwrap();
    let listed: Vec<(&str, &str)> = sources
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut words = line.split_whitespace();
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect();
    let embedded = agentindex_api::explorer::vendor_builds().unwrap();
    assert_eq!(
        listed.len(),
        embedded.len(),
        "SOURCES lists every embedded build"
    );
    for (path, bytes) in embedded {
        let name = path.trim_start_matches("vendor/");
        let (_, file) = listed
            .iter()
            .find(|(listed_name, _)| *listed_name == name)
            .unwrap_or_else(|| panic!("{name} is not in api/assets/vendor/SOURCES"));
        let pinned = root.join("tools/node_modules").join(file);
        let npm = std::fs::read(&pinned)
            .unwrap_or_else(|e| panic!("{} (run scripts/install-tools): {e}", pinned.display()));
        assert!(
            npm == bytes,
            "{path} differs from {}: run scripts/vendor-builds",
            pinned.display()
        );
    }
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}
