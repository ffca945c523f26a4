//! The GraphQL API driven by real clients: the npm `graphql-request` library (run by node from
//! `tools/graphql/query.mjs`) queries `agentindex serve` over an index of agents registered on
//! anvil whose documents a local server serves: search, every filter, ordering, keyset
//! pagination across an insert made between pages, dashboards, `agent(id)` (its relations are
//! in `graphql_relations`), `indexerStatus`, the limits and the plain HTTP endpoints.

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use agentindex_indexer::config::Config;
use alloy::primitives::U256;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use support::doc_server::{DocServer, Route};
use support::graphql::{data, gql};

fn card(name: &str, skill: &str, tags: &[&str], extensions: Value) -> Vec<u8> {
    json!({
        "name": name, "description": format!("{name} does {skill}"), "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agents.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false, "extensions": extensions},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
        "skills": [{"id": skill, "name": skill, "description": format!("{skill} for you"), "tags": tags}]
    })
    .to_string()
    .into_bytes()
}

fn names(connection: &Value) -> Vec<String> {
    connection["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

const LIST: &str = "query($filter: AgentFilter, $search: String, $orderBy: AgentOrder, $first: Int, $after: String) {
  agents(filter: $filter, search: $search, orderBy: $orderBy, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id name source owner x402 active inputModes
      skills { id name tags } card { url status signature }
      reputation { score paymentCount uniquePayers asOfBlock components { payments } } } }
  }
}";

async fn index(config: &Config) {
    support::index_with_documents(config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_queries_search_filter_order_and_page_through_agents() {
    let devnet = Devnet::start().await.unwrap();
    let server = DocServer::start().await;
    let a = devnet.accounts();

    // An ERC-8004 agent with a signed card that takes x402.
    let x402 = json!([{
        "uri": "https://github.com/google-a2a/a2a-x402/v0.1",
        "params": {"accepts": [{"scheme": "exact", "network": "base", "maxAmountRequired": "10000",
                                "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
                                "payTo": "0x000000000000000000000000000000000000dEaD"}]}
    }]);
    let signed = support::signing::sign_es256(
        serde_json::from_slice(&card("Polyglot", "translate", &["language"], x402)).unwrap(),
        "api-key",
    );
    let card_url = server.route(
        "/polyglot/card.json",
        Route::Body("application/json", signed.to_string().into_bytes()),
    );
    let registration = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Polyglot", "description": "Translates between languages",
        "services": [{"name": "A2A", "endpoint": card_url, "version": "1.0"}],
        "x402Support": true
    });
    let reg_url = server.route(
        "/polyglot/reg.json",
        Route::Body("application/json", registration.to_string().into_bytes()),
    );
    let polyglot = demo::via_erc8004(&devnet, a[1], &reg_url).await.unwrap();

    // Two factory agents with cards; the weather agent gets paid by three payers.
    let mut data_card = demo::sample_card(&devnet, "Summariser", None);
    data_card.cardURI = server.route(
        "/summariser.json",
        Route::Body(
            "application/json",
            card("Summariser", "summarize", &["text"], json!([])),
        ),
    );
    demo::via_factory(&devnet, a[2], data_card).await.unwrap();
    let mut weather_card = demo::sample_card(&devnet, "Weather", None);
    weather_card.cardURI = server.route(
        "/weather.json",
        Route::Body(
            "application/json",
            card("Weather", "forecast", &["weather", "text"], json!([])),
        ),
    );
    let weather = demo::via_factory(&devnet, a[3], weather_card)
        .await
        .unwrap();
    for payer in [a[5], a[6], a[7]] {
        let usdc = devnet.usdc();
        let send = usdc.transfer(weather, U256::from(1_000_000u64)).from(payer);
        confirm("paying the weather agent", send.send())
            .await
            .unwrap();
    }
    // Agents without documents, to page through.
    for i in 0..6 {
        let uri = format!("{}/missing-{i}.json", server.base);
        demo::via_erc8004(&devnet, a[4], &uri).await.unwrap();
    }

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut config = support::config_with_local_documents(&devnet, &db);
    config.documents.trusted_keys = vec![support::signing::es256_jwk("api-key")];
    index(&config).await;

    // Served by the `agentindex serve` binary over the database indexed here.
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let serve_config = dir.path().join("serve.toml");
    std::fs::write(&serve_config, toml).unwrap();
    let (_serving, base) = support::binary::start(&["serve", "--config"], &serve_config);
    let endpoint = format!("{base}/graphql");
    let list = |variables: Value| data(&endpoint, LIST, variables)["agents"].clone();

    // Full-text search, ranked.
    let found = list(json!({ "search": "translate" }));
    assert_eq!(names(&found), vec!["Polyglot"]);
    assert_eq!(found["totalCount"], 1);
    let node = &found["edges"][0]["node"];
    assert_eq!(node["source"], "ERC8004");
    assert_eq!(node["card"]["signature"], "valid");
    assert_eq!(node["skills"][0]["tags"], json!(["language"]));
    assert_eq!(
        names(&list(json!({ "search": "transl" }))),
        vec!["Polyglot"],
        "prefix match"
    );
    // Relevance pages, one agent at a time: every skill description says "for you".
    let mut ranked = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = list(json!({ "search": "for you", "first": 1, "after": after }));
        ranked.extend(names(&page));
        if page["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = page["pageInfo"]["endCursor"].as_str().map(String::from);
    }
    ranked.sort();
    assert_eq!(ranked, vec!["Polyglot", "Summariser", "Weather"]);

    // Every filter.
    let by = |filter: Value| {
        let mut found = names(&list(json!({ "filter": filter, "first": 100 })));
        found.sort();
        found
    };
    assert_eq!(
        by(json!({ "skill": "SUMMARIZE" })),
        vec!["Summariser"],
        "skill id, any case"
    );
    assert_eq!(
        by(json!({ "skill": "weather" })),
        vec!["Weather"],
        "or a skill tag"
    );
    assert_eq!(by(json!({ "tags": ["weather", "text"] })), vec!["Weather"]);
    assert_eq!(
        by(json!({ "tags": ["text"] })),
        vec!["Summariser", "Weather"]
    );
    assert_eq!(by(json!({ "x402": true })), vec!["Polyglot"]);
    assert_eq!(by(json!({ "signedCard": true })), vec!["Polyglot"]);
    assert_eq!(by(json!({ "inputMode": "text/plain" })).len(), 3);
    assert_eq!(by(json!({ "outputMode": "image/png" })).len(), 0);
    assert_eq!(by(json!({ "minReputation": 1.0 })), vec!["Weather"]);
    assert_eq!(
        by(json!({ "sources": ["FACTORY"] })),
        vec!["Summariser", "Weather"]
    );
    assert_eq!(
        by(json!({ "owner": format!("{:#X}", a[3]).replace("0X", "0x") })),
        vec!["Weather"]
    );
    assert_eq!(
        by(json!({ "chainIds": [devnet.chain_id()], "skill": "translate" })),
        vec!["Polyglot"]
    );
    assert_eq!(by(json!({ "chainIds": [1] })).len(), 0);
    assert_eq!(by(json!({ "active": true })).len(), 9);
    assert_eq!(
        by(json!({ "protocolBinding": "jsonrpc" })).len(),
        3,
        "the three with cards"
    );
    assert_eq!(by(json!({ "protocolBinding": "GRPC" })).len(), 0);
    assert_eq!(by(json!({ "streaming": true })).len(), 0);
    assert_eq!(by(json!({ "streaming": false })).len(), 3);
    assert_eq!(
        by(json!({ "extensionUri": "https://github.com/google-a2a/a2a-x402/v0.1" })),
        vec!["Polyglot"]
    );
    assert_eq!(by(json!({ "maxPrice": "20000" })), vec!["Polyglot"]);
    assert_eq!(
        by(json!({ "minPrice": "10000", "maxPrice": "10000" })),
        vec!["Polyglot"]
    );
    assert_eq!(by(json!({ "maxPrice": "9999" })).len(), 0);

    // Ordering by reputation puts the paid agent first, with its components.
    let ranked = list(json!({ "orderBy": "REPUTATION", "first": 2 }));
    let top = &ranked["edges"][0]["node"];
    assert_eq!(top["name"], "Weather");
    assert_eq!(top["reputation"]["uniquePayers"], 3);
    assert!(top["reputation"]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(
        top["reputation"]["components"]["payments"],
        top["reputation"]["score"]
    );

    // Dashboards: facets, totals, daily series and the top agents.
    let dash = data(
        &endpoint,
        "query($chain: Int!, $usdc: String) {
          skillFacets { value count }
          tagFacets(first: 2) { value count }
          totals { chainId agents factoryAgents erc8004Agents payments feedback }
          registrations: dailySeries(chainId: $chain, series: REGISTRATIONS) { day value }
          volume: dailySeries(chainId: $chain, series: VOLUME, token: $usdc) { day value }
          topAgents(first: 1) { name }
        }",
        json!({ "chain": devnet.chain_id(), "usdc": format!("{:#x}", devnet.deployment().usdc) }),
    );
    let skills: Vec<(&str, i64)> = dash["skillFacets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["value"].as_str().unwrap(), f["count"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        skills,
        vec![("forecast", 1), ("summarize", 1), ("translate", 1)]
    );
    assert_eq!(
        dash["tagFacets"],
        json!([{ "value": "text", "count": 2 }, { "value": "language", "count": 1 }])
    );
    assert_eq!(
        dash["totals"],
        json!([{ "chainId": devnet.chain_id(), "agents": 9, "factoryAgents": 2, "erc8004Agents": 7, "payments": 3, "feedback": 0 }])
    );
    let total = |series: &str| -> f64 {
        dash[series]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["value"].as_f64().unwrap())
            .sum()
    };
    assert_eq!(total("registrations"), 9.0);
    assert_eq!(
        total("volume"),
        3.0,
        "three payments of 1 USDC, in whole tokens"
    );
    assert_eq!(dash["topAgents"], json!([{ "name": "Weather" }]));

    // Newest first, three at a time, while a new agent is registered between pages.
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = list(json!({ "orderBy": "NEWEST", "first": 3, "after": after }));
        seen.extend(
            page["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["node"]["id"].as_str().unwrap().to_string()),
        );
        pages += 1;
        if pages == 1 {
            demo::via_erc8004(&devnet, a[8], "data:application/json,{}")
                .await
                .unwrap();
            index(&config).await;
        }
        if page["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = page["pageInfo"]["endCursor"].as_str().map(String::from);
    }
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no agent twice: {seen:?}");
    assert_eq!(
        seen.len(),
        9,
        "every agent there when paging began, none skipped"
    );
    assert_eq!(
        list(json!({}))["totalCount"],
        10,
        "the new one is counted now"
    );
    // The count alone (directly, or through a fragment) reads no page and counts the same.
    for count_only in [
        "{ agents(filter: { active: true }) { totalCount } }",
        "{ agents(filter: { active: true }) { ...counted } } fragment counted on AgentConnection { totalCount }",
    ] {
        let counted = data(&endpoint, count_only, json!({}));
        assert_eq!(
            counted["agents"]["totalCount"],
            list(json!({ "filter": { "active": true } }))["totalCount"],
            "{count_only}"
        );
    }
    assert_eq!(
        by(json!({ "active": true })).len(),
        10,
        "an answer cached before the index changed is not served after"
    );

    // One agent by id, and the chain's status.
    let key = format!(
        "{}:{:#x}:{polyglot}",
        devnet.chain_id(),
        devnet.deployment().identity
    );
    let one = data(
        &endpoint,
        "query($id: ID!) { agent(id: $id) { id name x402 reputation { asOfBlock } } }",
        json!({ "id": key }),
    );
    assert_eq!(one["agent"]["name"], "Polyglot");
    let missing = data(&endpoint, "{ agent(id: \"1:0x00\") { id } }", json!({}));
    assert_eq!(missing["agent"], Value::Null);
    let status = data(
        &endpoint,
        "{ indexerStatus { chainId headBlock indexedBlock lag } }",
        json!({}),
    );
    let chain = &status["indexerStatus"][0];
    assert_eq!(chain["chainId"], devnet.chain_id());
    assert_eq!(chain["indexedBlock"], chain["headBlock"]);

    // Limits and bad input get clear errors.
    let deep = format!(
        "{{ __schema {{ types {}name{} }} }}",
        "{ fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType {",
        " } } } } } } } } } } }"
    );
    let refused = gql(
        &endpoint,
        json!([
            { "query": LIST, "variables": { "first": 101 } },
            { "query": LIST, "variables": { "after": "bogus" } },
            { "query": LIST, "variables": { "orderBy": "REPUTATION", "after": found["pageInfo"]["endCursor"] } },
            { "query": deep },
            { "query": "{ agents { nope } }" },
        ]),
    );
    let message = |i: usize| refused[i]["errors"][0].as_str().unwrap_or("").to_string();
    assert!(
        message(0).contains("first must be between 0 and 100"),
        "{}",
        message(0)
    );
    assert!(message(1).contains("not a cursor"), "{}", message(1));
    assert!(
        message(2).contains("not a cursor of this ordering"),
        "{}",
        message(2)
    );
    assert!(message(3).contains("nested too deep"), "{}", message(3));
    assert!(message(4).contains("nope"), "{}", message(4));
    let huge = format!("{{ agents {{ totalCount }} }} #{}", "x".repeat(20_000));
    let refused = gql(&endpoint, json!([{ "query": huge }]));
    assert!(
        refused[0]["errors"][0]
            .as_str()
            .unwrap_or("")
            .contains("at most"),
        "{}",
        refused[0]
    );

    // The plain HTTP endpoints.
    let get = |path: &str| reqwest::get(format!("{base}{path}"));
    assert_eq!(get("/healthz").await.unwrap().status(), 200);
    assert_eq!(get("/readyz").await.unwrap().status(), 200);
    let graphiql = get("/graphql").await.unwrap().text().await.unwrap();
    assert!(graphiql.contains("GraphiQL"));
    // A query in the URL, as graphql-request sends it in GET mode, with variables.
    let by_url = gql(
        &endpoint,
        json!([{
            "method": "GET",
            "query": "query One($id: ID!) { agent(id: $id) { id } }",
            "variables": { "id": key },
        }]),
    );
    assert_eq!(by_url[0]["data"]["agent"]["id"], key, "{}", by_url[0]);
    let not_graphql = get("/graphql?variables=%7B%7D").await.unwrap();
    assert_eq!(not_graphql.status(), 400);
    let statuses: Vec<Value> = get("/status").await.unwrap().json().await.unwrap();
    assert_eq!(statuses[0]["chain_id"], devnet.chain_id());
}
