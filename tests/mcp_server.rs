//! The MCP server driven by the official MCP clients: npm `@modelcontextprotocol/sdk` and PyPI
//! `mcp` (`tools/mcp_clients/`), each over streamable HTTP against `agentindex serve`'s `/mcp`
//! and over stdio against `agentindex mcp`. Every tool's answer must equal what `/graphql` says
//! to the same question, every client and transport must get the same answers, a malformed
//! call must get an error the model can read while the server keeps serving, and the resources
//! must be the documents as they were served.

use crate::support;

use agentindex_contracts::{Devnet, demo};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use support::doc_server::{DocServer, Route};
use support::graphql::data;
use support::mcp::{answer, assert_holds, assert_tool_error, client, floats, inspector};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_mcp_clients_get_the_graphql_apis_answers() {
    let devnet = Devnet::start().await.unwrap();
    let s = support::scenario::run(&devnet).await;
    let server = DocServer::start().await;
    let accounts = devnet.accounts();

    // One agent described in full: a registration file pointing at an A2A endpoint with a card.
    let card = json!({
        "name": "Harbor Pilot", "description": "Plans container routes", "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{}/pilot/a2a", server.base), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
        "skills": [{"id": "route-planning", "name": "Route planning", "description": "plans routes", "tags": ["logistics", "shipping"]}]
    });
    server.route(
        "/pilot/.well-known/agent-card.json",
        Route::Body("application/json", card.to_string().into_bytes()),
    );
    let registration = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Harbor Pilot",
        "description": "Plans container routes for ports",
        "services": [{"name": "A2A", "endpoint": format!("{}/pilot", server.base), "version": "1.0"}],
        "x402Support": true,
        "active": true,
    });
    let registration_url = server.route(
        "/pilot.json",
        Route::Body("application/json", registration.to_string().into_bytes()),
    );
    demo::via_erc8004(&devnet, accounts[1], &registration_url)
        .await
        .unwrap();

    let indexed = support::indexed_with_documents(&devnet).await;
    let (_serving, base, serve_config) = support::binary::serve_indexed(&devnet, &indexed);
    let graphql = format!("{base}/graphql");

    // The ids the calls ask about, as /graphql gives them.
    let pilot = data(
        &graphql,
        r#"{ agents(search: "harbor pilot") { edges { node { id } } } }"#,
        json!({}),
    )["agents"]["edges"][0]["node"]["id"]
        .as_str()
        .expect("the described agent is indexed")
        .to_string();
    let token = s.erc8004_id.to_string();
    let paid = data(
        &graphql,
        "{ agents(filter: { sources: [ERC8004] }, first: 100) { edges { node { id tokenId } } } }",
        json!({}),
    )["agents"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|edge| edge["node"]["tokenId"] == json!(token))
        .expect("the scenario's ERC-8004 agent is indexed")["node"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let calls = json!([
        {"name": "x402Page1", "tool": "search_agents", "arguments": {"x402": true, "first": 2}},
        {"name": "byText", "tool": "search_agents", "arguments": {"search": "container routes", "orderBy": "RELEVANCE"}},
        {"name": "bySkill", "tool": "search_agents", "arguments": {"skill": "logistics", "chainIds": [devnet.chain_id()]}},
        {"name": "pilot", "tool": "get_agent", "arguments": {"id": pilot}},
        {"name": "reputation", "tool": "get_reputation", "arguments": {"id": paid}},
        {"name": "payments", "tool": "list_payments", "arguments": {"id": paid, "first": 1}},
        {"name": "feedback", "tool": "list_feedback", "arguments": {"id": paid}},
        {"name": "status", "tool": "network_status"},
        // Malformed calls: each answered with an error, the server serving on.
        {"name": "misspelt", "tool": "search_agents", "arguments": {"skil": "logistics"}},
        {"name": "wrongType", "tool": "search_agents", "arguments": {"x402": "yes"}},
        {"name": "noId", "tool": "get_agent", "arguments": {}},
        {"name": "unknownAgent", "tool": "get_agent", "arguments": {"id": "1:0xnobody:1"}},
        {"name": "hugePage", "tool": "list_feedback", "arguments": {"id": paid, "first": 1000}},
        {"name": "badCursor", "tool": "search_agents", "arguments": {"after": "not-a-cursor"}},
        {"name": "noSuchTool", "tool": "drop_tables", "arguments": {}},
        {"name": "statusAfter", "tool": "network_status"},
        {"name": "card", "resource": format!("agentindex://agents/{pilot}/card")},
        // As clients fill the template in: the id percent-encoded.
        {"name": "cardFilledIn", "resource": format!("agentindex://agents/{}/card", pilot.replace(':', "%3A"))},
        {"name": "registration", "resource": format!("agentindex://agents/{pilot}/registration")},
        {"name": "tags", "resource": "agentindex://taxonomy/tags"},
        {"name": "noCard", "resource": format!("agentindex://agents/{paid}/card")},
        {"name": "notOurs", "resource": "file:///etc/passwd"},
    ]);
    let over_http = json!({ "transport": "http", "url": format!("{base}/mcp"), "calls": calls });
    let over_stdio = json!({
        "transport": "stdio",
        "command": env!("CARGO_BIN_EXE_agentindex"),
        "args": ["mcp", "--config", serve_config.display().to_string()],
        "calls": calls,
    });
    let node = client("node", &over_http);
    let mut discovering = over_http.clone();
    discovering["mode"] = json!("auto");
    let runs = [
        ("python over HTTP", client("python", &over_http)),
        (
            "python over HTTP, discovering (2026-07-28)",
            client("python", &discovering),
        ),
        ("node over stdio", client("node", &over_stdio)),
        ("python over stdio", client("python", &over_stdio)),
    ];

    assert_eq!(
        runs[1].1["protocolVersion"],
        json!("2026-07-28"),
        "the newest protocol, without a session"
    );

    // The tools, with every filter of the GraphQL `agents` query offered to search_agents.
    let names: Vec<&str> = node["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "search_agents",
            "get_agent",
            "get_reputation",
            "list_payments",
            "list_feedback",
            "network_status"
        ]
    );
    let filter_fields: BTreeSet<String> = data(
        &graphql,
        r#"{ __type(name: "AgentFilter") { inputFields { name } } }"#,
        json!({}),
    )["__type"]["inputFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|field| field["name"].as_str().unwrap().to_string())
        .collect();
    let offered: BTreeSet<String> = node["tools"][0]["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|name| !["search", "orderBy", "first", "after"].contains(&name.as_str()))
        .cloned()
        .collect();
    assert_eq!(offered, filter_fields, "search_agents offers every filter");
    for tool in node["tools"].as_array().unwrap() {
        assert!(
            tool["description"].as_str().unwrap().len() > 80,
            "{tool} is described for a model"
        );
        assert_eq!(tool["annotations"]["readOnlyHint"], json!(true), "{tool}");
    }

    let results = &node["results"];
    // search_agents: the same page, order, count and cursor as `agents`.
    let page = data(
        &graphql,
        "query($filter: AgentFilter, $search: String, $orderBy: AgentOrder, $first: Int) {
            agents(filter: $filter, search: $search, orderBy: $orderBy, first: $first) {
                totalCount pageInfo { hasNextPage endCursor }
                edges { node { id name x402 reputation { score } skills { id tags } card { url status } } }
            } }",
        json!({ "filter": { "x402": true }, "first": 2 }),
    );
    let expected = &page["agents"];
    let answered = answer(results, "x402Page1");
    assert_eq!(answered["totalCount"], expected["totalCount"]);
    assert_eq!(answered["hasNextPage"], expected["pageInfo"]["hasNextPage"]);
    assert_eq!(answered["endCursor"], expected["pageInfo"]["endCursor"]);
    let nodes: Vec<Value> = expected["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| edge["node"].clone())
        .collect();
    assert_eq!(nodes.len(), 2, "the index has x402 agents to page through");
    assert_holds(&answered["agents"], &Value::Array(nodes), "x402Page1");
    for (name, variables) in [
        (
            "byText",
            json!({ "search": "container routes", "orderBy": "RELEVANCE" }),
        ),
        (
            "bySkill",
            json!({ "filter": { "skill": "logistics", "chainIds": [devnet.chain_id()] } }),
        ),
    ] {
        let ids: Vec<Value> = data(
            &graphql,
            "query($filter: AgentFilter, $search: String, $orderBy: AgentOrder) {
                agents(filter: $filter, search: $search, orderBy: $orderBy) { edges { node { id } } } }",
            variables,
        )["agents"]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|edge| edge["node"]["id"].clone())
            .collect();
        let answered: Vec<Value> = answer(results, name)["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|agent| agent["id"].clone())
            .collect();
        assert_eq!(answered, ids, "{name}");
        assert_eq!(answered, [json!(pilot)], "{name} finds the described agent");
    }

    // get_agent: the agent as `agent(id)` has it.
    let agent = data(
        &graphql,
        "query($id: ID!) { agent(id: $id) {
            id chainId source owner name description active x402 inputModes outputModes
            paymentTerms registrationVerified
            skills { id name description tags } card { url status protocolVersion signature }
            documents { role uri status kind } reputation { score paymentCount feedbackCount }
        } }",
        json!({ "id": pilot }),
    );
    assert_holds(answer(results, "pilot"), &agent["agent"], "pilot");
    assert!(
        results["pilot"]["text"]
            .as_str()
            .unwrap()
            .contains("Harbor Pilot"),
        "the text names the agent"
    );

    // get_reputation: every component, weight and input.
    let reputation = data(
        &graphql,
        "query($id: ID!) { agent(id: $id) { id reputation {
            score paymentScore paymentCount uniquePayers excludedPayments feedbackCount
            feedbackAverage validationAverage ratingAverage asOfBlock
            components { payments trust feedback validations ratings availability }
            weights { payments trust feedback validations ratings availability }
            topPayers { payer payments standing contribution }
            feedbackEvidence { paidClients provenClients unpaidClients burstClients }
        } } }",
        json!({ "id": paid }),
    );
    let answered = answer(results, "reputation");
    assert_holds(answered, &reputation["agent"], "reputation");
    assert!(answered["reputation"]["paymentCount"].as_i64().unwrap() > 0);
    let score = answered["reputation"]["score"].as_f64().unwrap();
    assert!(
        results["reputation"]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("{score:.1}/100")),
        "the text quotes the score"
    );

    // list_payments and list_feedback: the agent's lists, a page at a time.
    let lists = data(
        &graphql,
        "query($id: ID!) { agent(id: $id) {
            payments(first: 1) { totalCount pageInfo { hasNextPage endCursor }
                nodes { payer payee token amount x402 blockNumber logIndex counts excludedBecause } }
            feedback(first: 20) { totalCount nodes { client value valueDecimals tag1 tag2 revoked blockNumber } }
        } }",
        json!({ "id": paid }),
    );
    let payments = answer(results, "payments");
    let expected = &lists["agent"]["payments"];
    assert_eq!(payments["totalCount"], expected["totalCount"]);
    assert_eq!(payments["endCursor"], expected["pageInfo"]["endCursor"]);
    assert_eq!(payments["hasNextPage"], json!(true), "one payment a page");
    assert_holds(&payments["payments"], &expected["nodes"], "payments");
    let feedback = answer(results, "feedback");
    assert_eq!(
        feedback["totalCount"],
        lists["agent"]["feedback"]["totalCount"]
    );
    assert!(feedback["totalCount"].as_i64().unwrap() > 0);
    assert_holds(
        &feedback["feedback"],
        &lists["agent"]["feedback"]["nodes"],
        "feedback",
    );

    // network_status: the chains and their totals.
    let status = data(
        &graphql,
        "{ indexerStatus { chainId name headBlock finalizedBlock indexedBlock lag }
           totals { chainId agents factoryAgents registryAgents erc8004Agents payments feedback validationRequests } }",
        json!({}),
    );
    assert_eq!(answer(results, "status"), &status);

    // Malformed calls: tool errors a model can read; an unknown tool is a protocol error; and
    // the server answers the next call.
    assert_tool_error(results, "misspelt", "skil");
    assert_tool_error(results, "wrongType", "x402");
    assert_tool_error(results, "noId", "id");
    assert_tool_error(results, "unknownAgent", "1:0xnobody:1");
    assert_tool_error(results, "hugePage", "first");
    assert_tool_error(results, "badCursor", "cursor");
    let refused = &results["noSuchTool"]["error"];
    assert!(
        refused["message"].as_str().unwrap().contains("drop_tables"),
        "an unknown tool is refused by name: {}",
        results["noSuchTool"]
    );
    assert_eq!(answer(results, "statusAfter"), &status);

    // Resources: the documents as served, the taxonomy as /graphql counts it, the templates.
    let text_of = |name: &str| -> Value {
        let contents = &results[name]["contents"];
        assert_eq!(contents[0]["mimeType"], json!("application/json"), "{name}");
        serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(text_of("card"), card);
    assert_eq!(text_of("cardFilledIn"), card);
    assert_eq!(text_of("registration"), registration);
    let tags = data(
        &graphql,
        "{ tagFacets(first: 500) { value count } }",
        json!({}),
    );
    assert_eq!(text_of("tags"), json!({ "tags": tags["tagFacets"] }));
    assert!(results["noCard"]["error"]["message"].as_str().is_some());
    assert!(results["notOurs"]["error"]["message"].as_str().is_some());
    let uris: BTreeSet<&str> = node["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    for uri in [
        "agentindex://taxonomy/skills".to_string(),
        "agentindex://taxonomy/tags".to_string(),
        format!("agentindex://agents/{pilot}/card"),
        format!("agentindex://agents/{pilot}/registration"),
    ] {
        assert!(uris.contains(uri.as_str()), "{uri} is listed");
    }
    let templates: BTreeSet<&str> = node["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|template| template["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        BTreeSet::from([
            "agentindex://agents/{id}/card",
            "agentindex://agents/{id}/registration"
        ])
    );

    // The MCP Inspector's CLI lists the same tools and gets the same answer.
    let home = indexed.dir.path().join("inspector");
    std::fs::create_dir_all(&home).unwrap();
    let url = format!("{base}/mcp");
    let listed = inspector(&url, &home, &["--method", "tools/list"]);
    let schemas = |tools: &Value| -> Vec<(Value, Value)> {
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| (tool["name"].clone(), floats(&tool["inputSchema"])))
            .collect()
    };
    assert_eq!(
        schemas(&listed["tools"]),
        schemas(&node["tools"]),
        "the Inspector's tools"
    );
    let called = inspector(
        &url,
        &home,
        &["--method", "tools/call", "--tool-name", "network_status"],
    );
    assert_eq!(called["structuredContent"], status, "the Inspector's call");

    // The other client and the other transport get the same answers.
    for (run, other) in &runs {
        assert_eq!(other["server"]["name"], json!("agentindex"), "{run}");
        assert_eq!(
            floats(&other["tools"]),
            floats(&node["tools"]),
            "{run}: tools"
        );
        assert_eq!(other["templates"], node["templates"], "{run}: templates");
        assert_eq!(other["resources"], node["resources"], "{run}: resources");
        for (name, result) in node["results"].as_object().unwrap() {
            let theirs = &other["results"][name];
            if result.get("error").is_some() {
                assert!(theirs.get("error").is_some(), "{run} {name}: {theirs}");
            } else {
                assert_eq!(floats(theirs), floats(result), "{run} {name}");
            }
        }
    }
}

#[test]
fn server_json_describes_the_streamable_http_endpoint() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("server.json"))
        .expect("server.json at the repository's root");
    let server: Value = serde_json::from_str(&text).expect("server.json is JSON");
    assert_eq!(server["version"], json!(env!("CARGO_PKG_VERSION")));
    let remote = &server["remotes"][0];
    assert_eq!(remote["type"], json!("streamable-http"));
    let url = remote["url"].as_str().unwrap();
    assert!(url.ends_with(agentindex_api::mcp::PATH), "{url}");
    assert!(
        url.contains("{host}") && remote["variables"]["host"].is_object(),
        "{url}"
    );
}
