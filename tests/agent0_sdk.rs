//! The agent0 SDKs (npm `agent0-sdk` and PyPI `agent0-sdk`, both 1.7.1, installed by
//! `scripts/install-tools`) reading agents, feedback and reputation from the subgraph endpoint
//! of `agentindex serve` exactly as they read the public subgraph, with the chain's RPC out of reach so no
//! SDK can quietly fall back to reading the chain: every answer must come from the endpoint and
//! equal what was put on the chain and what `/graphql` says. The GraphQL documents the SDKs send
//! are pinned in `tests/fixtures/agent0/documents.json`; an SDK upgrade that sends a new one
//! fails here until the endpoint is checked against it and the file refreshed
//! (`AGENTINDEX_BLESS_AGENT0=1`).

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use alloy::primitives::{Address, U256};
use base64::Engine;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use support::doc_server::{DocServer, Route};
use support::graphql::data;

/// Agents registered with data: registration files, so a search crosses the SDKs' 1,000-agent
/// page.
const BULK: usize = 1_001;

fn registration(name: &str, services: Value, x402: bool, active: bool) -> Value {
    json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": name,
        "description": format!("{name}, an agent"),
        "services": services,
        "x402Support": x402,
        "active": active,
        "supportedTrust": ["reputation"],
    })
}

fn data_uri(document: &Value) -> String {
    format!(
        "data:application/json;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(document.to_string())
    )
}

/// Runs `calls` through one SDK's driver (`tools/agent0/read.mjs` or `read.py`).
fn sdk(program: &str, script: &str, job: &Value) -> Value {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let program = if program == "python" {
        tools.join(".venv/bin/python").display().to_string()
    } else {
        program.to_string()
    };
    let mut command = Command::new(program);
    command
        .arg(tools.join("agent0").join(script))
        .current_dir(tools.join("agent0"));
    support::tool::json_through(command, job, script)
}

fn ids(list: &Value, field: &str) -> BTreeSet<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("a list, not {list}"))
        .iter()
        .map(|item| item[field].as_str().unwrap().to_string())
        .collect()
}

/// A document as pinned: whitespace collapsed, with the names of its variables.
fn pinned(sent: &Value) -> BTreeSet<String> {
    sent.as_array()
        .unwrap()
        .iter()
        .map(|request| {
            let query = request["query"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let variables: Vec<&str> = request["variables"]
                .as_object()
                .map(|v| v.keys().map(String::as_str).collect())
                .unwrap_or_default();
            format!("{query} | variables: {}", variables.join(","))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent0_sdks_read_agentindex_as_their_subgraph() {
    let devnet = Devnet::start().await.unwrap();
    let s = support::scenario::run(&devnet).await;
    let server = DocServer::start().await;
    let accounts = devnet.accounts();
    let chain = devnet.chain_id();
    let hex = |a: Address| format!("{a:#x}");

    // Three described agents: an A2A agent with a card and OASF skills that takes x402, an MCP
    // agent that does not, and one that says it is inactive.
    let card = json!({
        "name": "Weather Oracle", "description": "Forecasts", "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{}/weather/a2a", server.base), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "forecast", "name": "Forecast", "description": "tomorrow's weather", "tags": ["weather"]}]
    });
    server.route(
        "/weather/.well-known/agent-card.json",
        Route::Body("application/json", card.to_string().into_bytes()),
    );
    let weather_doc = registration(
        "Weather Oracle",
        json!([
            {"name": "A2A", "endpoint": format!("{}/weather", server.base), "version": "1.0"},
            {"name": "OASF", "endpoint": "https://oasf.example/weather", "version": "0.8",
             "skills": ["natural_language_processing/summarization"], "domains": ["finance_and_business"]},
            {"name": "ENS", "endpoint": "weather.eth"}
        ]),
        true,
        true,
    );
    let weather_url = server.route(
        "/weather.json",
        Route::Body("application/json", weather_doc.to_string().into_bytes()),
    );
    let weather = demo::via_erc8004(&devnet, accounts[1], &weather_url)
        .await
        .unwrap();
    let price_doc = registration(
        "Price Feed",
        json!([{"name": "MCP", "endpoint": "https://prices.example/mcp", "version": "2025-06-18"}]),
        false,
        true,
    );
    let price = demo::via_erc8004(&devnet, accounts[2], &data_uri(&price_doc))
        .await
        .unwrap();
    let sleeping_doc = registration("Sleeping Oracle", json!([]), true, false);
    let sleeping = demo::via_erc8004(&devnet, accounts[1], &data_uri(&sleeping_doc))
        .await
        .unwrap();
    // An agent whose file says what its A2A skills are, as the agent0 SDK writes it
    // (`a2aSkills` on the A2A service): that list is served, not its skills' tags or ids.
    let vision_doc = registration(
        "Vision Scout",
        json!([{"name": "A2A", "endpoint": format!("{}/vision", server.base), "version": "0.30",
                "a2aSkills": ["vision", "ocr"]}]),
        false,
        true,
    );
    let vision = demo::via_erc8004(&devnet, accounts[3], &data_uri(&vision_doc))
        .await
        .unwrap();
    // Many more, so a search crosses the SDKs' 1,000-agent page.
    let bulk_owner = accounts[9];
    for n in 0..BULK {
        let doc = registration(&format!("Bulk agent {n}"), json!([]), false, true);
        confirm(
            "registering a bulk agent",
            devnet
                .identity()
                .register_2(data_uri(&doc))
                .from(bulk_owner)
                .send(),
        )
        .await
        .unwrap();
    }

    // Served by the `agentindex serve` binary over the database indexed here.
    let indexed = support::indexed_with_documents(&devnet).await;
    let (_serving, base, _) = support::binary::serve_indexed(&devnet, &indexed);
    let subgraph = format!("{base}/subgraphs/name/agent0/{chain}");
    let id = |token: U256| format!("{chain}:{token}");
    // Nothing listens there: an SDK that fell back to the chain would fail, not answer.
    let rpc = "http://127.0.0.1:9";

    let scenario_agent = id(s.erc8004_id);
    let deployment = devnet.deployment();
    let registries = json!({
        "IDENTITY": deployment.identity.to_string(),
        "REPUTATION": deployment.reputation.to_string(),
        "VALIDATION": deployment.validation.to_string(),
    });
    let job = json!({
        "subgraph": subgraph, "rpc": rpc, "chainId": chain, "registries": registries,
        "calls": [
            {"name": "byName", "method": "searchAgents", "args": [{"chains": [chain], "name": "oracle"}]},
            {"name": "bySkill", "method": "searchAgents", "args": [{"chains": [chain], "a2aSkills": ["forecast"]}]},
            {"name": "byTag", "method": "searchAgents", "args": [{"chains": [chain], "a2aSkills": ["weather"]}]},
            {"name": "byDeclared", "method": "searchAgents", "args": [{"chains": [chain], "a2aSkills": ["vision"]}]},
            {"name": "vision", "method": "getAgent", "args": [id(vision)]},
            {"name": "byOasf", "method": "searchAgents", "args": [{"chains": [chain], "oasfSkills": ["natural_language_processing/summarization"], "oasfDomains": ["finance_and_business"]}]},
            {"name": "byOwner", "method": "searchAgents", "args": [{"chains": [chain], "owners": [hex(accounts[1])]}]},
            {"name": "x402Active", "method": "searchAgents", "args": [{"chains": [chain], "x402support": true, "active": true}]},
            {"name": "inactive", "method": "searchAgents", "args": [{"chains": [chain], "active": false}]},
            {"name": "mcp", "method": "searchAgents", "args": [{"chains": [chain], "hasMCP": true}]},
            {"name": "everyone", "method": "searchAgents", "args": [{"chains": [chain]}, {"sort": ["createdAt:asc"]}]},
            {"name": "one", "method": "getAgent", "args": [id(weather)]},
            {"name": "scenario", "method": "getAgent", "args": [scenario_agent]},
            {"name": "missing", "method": "getAgent", "args": [format!("{chain}:999999")]},
            {"name": "feedback", "method": "searchFeedback", "args": [{"agents": [scenario_agent]}]},
            {"name": "feedbackAll", "method": "searchFeedback", "args": [{"agents": [scenario_agent], "includeRevoked": true}]},
            {"name": "summary", "method": "getReputationSummary", "args": [scenario_agent]},
        ]
    });
    let js = sdk("node", "read.mjs", &job);
    let r = &js["results"];
    for (name, result) in r.as_object().unwrap() {
        assert!(result.get("error").is_none(), "{name}: {result}");
    }
    assert_eq!(
        ids(&r["byName"], "agentId"),
        BTreeSet::from([id(weather), id(sleeping)]),
        "name contains 'oracle', case-insensitively"
    );
    assert_eq!(ids(&r["bySkill"], "agentId"), BTreeSet::from([id(weather)]));
    // The same question put to /graphql: the agents with the skill, by their keys there.
    let own_skill = data(
        &format!("{base}/graphql"),
        "{ agents(filter: { skill: \"forecast\" }) { edges { node { tokenId } } } }",
        json!({}),
    );
    let own_skill: BTreeSet<String> = own_skill["agents"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{chain}:{}", e["node"]["tokenId"].as_str().unwrap()))
        .collect();
    assert_eq!(ids(&r["bySkill"], "agentId"), own_skill);
    // As agent0's own crawler fills `a2aSkills`: with the tags of the card's skills.
    assert_eq!(ids(&r["byTag"], "agentId"), BTreeSet::from([id(weather)]));
    assert_eq!(
        ids(&r["byDeclared"], "agentId"),
        BTreeSet::from([id(vision)])
    );
    assert_eq!(r["vision"]["a2aSkills"], json!(["vision", "ocr"]));
    assert_eq!(ids(&r["byOasf"], "agentId"), BTreeSet::from([id(weather)]));
    assert_eq!(
        ids(&r["byOwner"], "agentId"),
        BTreeSet::from([id(weather), id(sleeping)])
    );
    assert_eq!(
        ids(&r["x402Active"], "agentId"),
        BTreeSet::from([id(weather)])
    );
    assert_eq!(
        ids(&r["inactive"], "agentId"),
        BTreeSet::from([id(sleeping)])
    );
    assert_eq!(ids(&r["mcp"], "agentId"), BTreeSet::from([id(price)]));
    let everyone = r["everyone"].as_array().unwrap();
    assert_eq!(
        everyone.len(),
        BULK + 4,
        "every agent with a registration file, across two pages"
    );
    assert_eq!(
        ids(&r["everyone"], "agentId").len(),
        BULK + 4,
        "no agent twice across the page boundary"
    );
    let one = &r["one"];
    assert_eq!(one["name"], "Weather Oracle");
    assert_eq!(one["owners"], json!([hex(accounts[1])]));
    assert_eq!(
        one["a2aSkills"],
        json!(["weather", "forecast"]),
        "the card's skills' tags, then their ids, which the public subgraph leaves empty"
    );
    assert_eq!(one["oasfDomains"], json!(["finance_and_business"]));
    assert_eq!(one["ens"], "weather.eth");
    assert_eq!(one["x402support"], true);
    assert_eq!(r["missing"], Value::Null);
    // The scenario's agent points at an IPFS file nobody serves: it is known, without a file.
    assert_eq!(r["scenario"]["agentId"], scenario_agent);
    assert_eq!(
        r["scenario"]["name"], scenario_agent,
        "the SDK names an agent without a file by its id"
    );

    // Feedback, as /graphql reports it.
    let key = format!(
        "{chain}:{:#x}:{}",
        devnet.deployment().identity,
        s.erc8004_id
    );
    let own = data(
        &format!("{base}/graphql"),
        "query($id: ID!) { agent(id: $id) { feedback { nodes { client index value valueDecimals revoked } } } }",
        json!({ "id": key }),
    );
    let own = own["agent"]["feedback"]["nodes"]
        .as_array()
        .unwrap()
        .clone();
    let kept: Vec<&Value> = own.iter().filter(|f| f["revoked"] == false).collect();
    assert_eq!(
        r["feedback"].as_array().unwrap().len(),
        kept.len(),
        "revoked feedback left out"
    );
    assert_eq!(
        r["feedbackAll"].as_array().unwrap().len(),
        own.len(),
        "and included when asked"
    );
    let average = kept
        .iter()
        .map(|f| {
            f["value"].as_str().unwrap().parse::<f64>().unwrap()
                / 10f64.powi(f["valueDecimals"].as_i64().unwrap() as i32)
        })
        .sum::<f64>()
        / kept.len() as f64;
    assert_eq!(r["summary"]["count"], kept.len());
    assert_eq!(
        r["summary"]["averageValue"].as_f64().unwrap(),
        (average * 100.0).round() / 100.0
    );

    // The Python SDK, the same calls in its own words.
    let py_job = json!({
        "subgraph": subgraph, "rpc": rpc, "connectRpc": devnet.endpoint(), "chainId": chain, "registries": registries,
        "calls": [
            {"name": "byName", "method": "searchAgents", "kwargs": {"chains": [chain], "name": "oracle"}},
            {"name": "bySkill", "method": "searchAgents", "kwargs": {"chains": [chain], "a2aSkills": ["forecast"]}},
            {"name": "byTag", "method": "searchAgents", "kwargs": {"chains": [chain], "a2aSkills": ["weather"]}},
            {"name": "byDeclared", "method": "searchAgents", "kwargs": {"chains": [chain], "a2aSkills": ["vision"]}},
            {"name": "byOwner", "method": "searchAgents", "kwargs": {"chains": [chain], "owners": [hex(accounts[1])]}},
            {"name": "x402Active", "method": "searchAgents", "kwargs": {"chains": [chain], "x402support": true, "active": true}},
            {"name": "everyone", "method": "searchAgents", "kwargs": {"chains": [chain]}},
            {"name": "one", "method": "getAgent", "args": [id(weather)]},
            {"name": "feedback", "method": "searchFeedback", "kwargs": {"agentId": scenario_agent}},
            {"name": "feedbackAll", "method": "searchFeedback", "kwargs": {"agentId": scenario_agent, "include_revoked": true}},
            {"name": "summary", "method": "getReputationSummary", "args": [scenario_agent]},
        ]
    });
    let py = sdk("python", "read.py", &py_job);
    let p = &py["results"];
    for (name, result) in p.as_object().unwrap() {
        assert!(result.get("error").is_none(), "python {name}: {result}");
    }
    assert_eq!(ids(&p["byName"], "agentId"), ids(&r["byName"], "agentId"));
    assert_eq!(ids(&p["bySkill"], "agentId"), ids(&r["bySkill"], "agentId"));
    assert_eq!(ids(&p["byTag"], "agentId"), ids(&r["byTag"], "agentId"));
    assert_eq!(
        ids(&p["byDeclared"], "agentId"),
        ids(&r["byDeclared"], "agentId")
    );
    assert_eq!(ids(&p["byOwner"], "agentId"), ids(&r["byOwner"], "agentId"));
    assert_eq!(
        ids(&p["x402Active"], "agentId"),
        ids(&r["x402Active"], "agentId")
    );
    assert_eq!(p["everyone"].as_array().unwrap().len(), BULK + 4);
    assert_eq!(p["one"]["name"], "Weather Oracle");
    assert_eq!(p["feedback"].as_array().unwrap().len(), kept.len());
    assert_eq!(p["feedbackAll"].as_array().unwrap().len(), own.len());
    assert_eq!(p["summary"]["count"], kept.len());

    // The documents both SDKs sent, pinned.
    assert!(
        !js["sent"].as_array().unwrap().is_empty(),
        "the TypeScript SDK's requests were recorded"
    );
    assert!(
        !py["sent"].as_array().unwrap().is_empty(),
        "the Python SDK's requests were recorded"
    );
    let mut documents = pinned(&js["sent"]);
    documents.extend(pinned(&py["sent"]));
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent0/documents.json");
    let documents: Vec<String> = documents.into_iter().collect();
    if std::env::var_os("AGENTINDEX_BLESS_AGENT0").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            serde_json::to_string_pretty(&documents).unwrap() + "\n",
        )
        .unwrap();
    }
    let expected: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(&file)
            .expect("the pinned documents (AGENTINDEX_BLESS_AGENT0=1 writes them)"),
    )
    .unwrap();
    assert_eq!(
        documents, expected,
        "the agent0 SDKs sent documents that are not pinned: check the endpoint answers them, then refresh with AGENTINDEX_BLESS_AGENT0=1"
    );
}
