//! The query budget against a running `agentindex serve`: the three documents that once took
//! the server down (fragments spreading fragments to the subgraph endpoint and to `/graphql`,
//! an argument value nested thousands deep) are refused in each dialect's words, over HTTP and
//! over the websocket, and the server stays up, `/healthz` answering after each.

use crate::support;

use serde_json::{Value, json};
use std::time::Duration;

/// A refusal must come back, not hang: a safety bound, not a timing.
const SAFETY_BOUND: Duration = Duration::from_secs(10);

/// `{ ROOT }` (spreading `F0`) where each `Fi` on `on` spreads `Fi+1` twice: 2^25 fields once
/// expanded, all in one selection set.
fn fan_out(root: &str, on: &str, leaf: &str) -> String {
    let mut text = format!("{{ {root} }}");
    for level in 0..25 {
        text += &format!(
            " fragment F{level} on {on} {{ ...F{} ...F{} }}",
            level + 1,
            level + 1
        );
    }
    text + &format!(" fragment F25 on {on} {{ {leaf} }}")
}

/// `{ FIELD(ARGUMENT: { KEY: [[[…"x"…]]] }) { LEAF } }`, the list nested 5,000 deep.
fn deep_value(field: &str, argument: &str, key: &str, leaf: &str) -> String {
    format!(
        "{{ {field}({argument}: {{{key}: {}\"x\"{}}}) {{ {leaf} }} }}",
        "[".repeat(5_000),
        "]".repeat(5_000)
    )
}

async fn first_error(client: &reqwest::Client, url: &str, query: &str) -> String {
    let response = client
        .post(url)
        .json(&json!({ "query": query }))
        .timeout(SAFETY_BOUND)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{url} gave no answer to a hostile query: {e}"));
    assert_eq!(response.status(), 200, "{url}");
    let body: Value = response.json().await.unwrap();
    assert!(body["data"].is_null(), "nothing was executed: {body}");
    body["errors"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{url} answered without an error: {body}"))
        .to_string()
}

async fn assert_alive(client: &reqwest::Client, base: &str) {
    let health = client
        .get(format!("{base}/healthz"))
        .timeout(SAFETY_BOUND)
        .send()
        .await
        .expect("the server is still up");
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_that_expand_or_nest_without_bound_are_refused_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let url = support::database_url(&dir.path().join("index.db"));
    let config = dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!("[database]\nurl = \"{url}\"\n[api]\nlisten = \"127.0.0.1:0\"\n"),
    )
    .unwrap();
    let (_serving, base) = support::binary::start(&["serve", "--config"], &config);
    let client = reqwest::Client::new();
    let graphql = format!("{base}/graphql");
    let subgraph = format!("{base}/subgraphs/name/agent0");
    assert_alive(&client, &base).await;

    // Fragments spreading fragments, to the subgraph endpoint (both routes) and to /graphql.
    let attack = fan_out("agents { ...F0 }", "Agent", "id");
    assert!(attack.len() < 2_000, "{} bytes", attack.len());
    for endpoint in [subgraph.clone(), format!("{subgraph}/31337")] {
        assert_eq!(
            first_error(&client, &endpoint, &attack).await,
            "query asks for `256` fields in one selection set and thereby exceeds the limit of `200`"
        );
        assert_alive(&client, &base).await;
    }
    let attack = fan_out("...F0", "Query", "__typename");
    assert_eq!(
        first_error(&client, &graphql, &attack).await,
        "A selection set asks for 256 fields; at most `200` are accepted"
    );
    assert_alive(&client, &base).await;
    // The same fan-out spread over 29 levels, no level wide: 2^15 fields.
    let mut attack = String::from("{ ...F0 }");
    for level in 0..14 {
        let next = level + 1;
        attack +=
            &format!(" fragment F{level} on Query {{ x {{ ...F{next} }} y {{ ...F{next} }} }}");
    }
    attack += " fragment F14 on Query { __typename }";
    assert_eq!(
        first_error(&client, &graphql, &attack).await,
        "The query has more than `2000` fields, fragment spreads and inline fragments once its fragments are expanded"
    );
    assert_alive(&client, &base).await;

    // An argument value nested 5,000 deep, under the 16 KiB cap.
    let attack = deep_value("agents", "filter", "tags", "totalCount");
    assert!(attack.len() < 16 * 1024);
    assert_eq!(
        first_error(&client, &graphql, &attack).await,
        "Query is nested too deep: it nests more than `32` levels"
    );
    assert_alive(&client, &base).await;
    let attack = deep_value("agents", "where", "id_in", "id");
    assert_eq!(
        first_error(&client, &subgraph, &attack).await,
        "query has a depth that exceeds the limit of `32`"
    );
    assert_alive(&client, &base).await;

    // The same over the websocket, through the graphql-ws client an SDK uses.
    let ws = format!("{}/graphql/ws", base.replacen("http://", "ws://", 1));
    for (attack, refusal) in [
        (
            fan_out("...F0", "Subscription", "agentsChanged { id }").replacen(
                "{ ...F0 }",
                "subscription { ...F0 }",
                1,
            ),
            "asks for 256 fields",
        ),
        (
            deep_value("agentsChanged", "filter", "sources", "id").replacen(
                "{ agentsChanged",
                "subscription { agentsChanged",
                1,
            ),
            "nested too deep",
        ),
    ] {
        let subscriber = support::graphql::subscriber(&ws, &attack, json!({}), 1);
        let output = tokio::task::spawn_blocking(move || subscriber.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "the subscription was refused");
        assert!(stderr.contains(refusal), "{stderr}");
        assert_alive(&client, &base).await;
    }

    // What the SDK and the explorer ask still works.
    let body = support::api::post_json(
        &graphql,
        &json!({ "query": "{ indexerStatus { chainId } agents(first: 2) { totalCount } }" }),
    )
    .await;
    assert_eq!(body["data"]["agents"]["totalCount"], 0, "{body}");
    let body = support::api::post_json(
        &subgraph,
        &json!({ "query": "{ agents(first: 2) { id owner } }" }),
    )
    .await;
    assert_eq!(body["data"]["agents"], json!([]), "{body}");
}
