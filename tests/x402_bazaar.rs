//! x402 Bazaar discovery served from the index: agents on anvil declare x402 terms in their
//! cards (a resource of the real x402 resource server, a resource that answers 404, and terms
//! of a card with no resource of their own), the prober asks the resources unpaid, and the x402
//! Python package's own Bazaar client (`tools/x402/bazaar.py`) lists them from
//! `GET /discovery/resources` with every filter and page, each listing matching what
//! `/graphql` says of its agent.

use crate::support;

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::engine::ProbeWorker;
use alloy::primitives::{Address, keccak256};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::doc_server::{DocServer, Route};
use support::graphql::data;
use support::liveness::{self as sdk, local_policy, probe_all};

/// Runs `calls` through the x402 package's Bazaar client against `base`.
fn bazaar(base: &str, calls: &Value) -> Value {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let mut command = Command::new(tools.join(".venv/bin/python"));
    command
        .arg(tools.join("x402/bazaar.py"))
        .current_dir(&tools);
    let job = json!({ "url": base, "calls": calls });
    support::tool::json_through(command, &job, "the x402 Bazaar client")["results"].clone()
}

/// The resources a listing holds, in order.
fn resources(listed: &Value) -> Vec<String> {
    assert!(listed.get("error").is_none(), "{listed}");
    listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["resource"].as_str().unwrap().to_string())
        .collect()
}

/// An a2a-x402 extension declaring `accepts`.
fn x402_extension(accepts: Value) -> Value {
    json!([{
        "uri": "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.1",
        "params": { "accepts": accepts }
    }])
}

/// A card named `name` with `extensions`.
fn card(name: &str, extensions: Value) -> Value {
    json!({
        "name": name, "description": format!("{name}, for a fee"), "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agents.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": { "extensions": extensions },
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "quote", "name": "Quote", "description": "quotes", "tags": ["prices"]}]
    })
}

/// An ERC-8004 registration file whose A2A service is at `endpoint`.
fn registration(name: &str, endpoint: &str) -> Value {
    json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": name, "description": format!("{name}, for a fee"),
        "services": [{"name": "A2A", "endpoint": endpoint, "version": "1.0"}],
        "x402Support": true, "active": true,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_x402_bazaar_client_lists_what_agents_charge_for() {
    let devnet = Devnet::start().await.unwrap();
    let server = DocServer::start().await;
    let accounts = devnet.accounts();
    let chain = devnet.chain_id();
    let hex = |a: Address| format!("{a:#x}");
    let (wallet_a, wallet_b) = (accounts[7], accounts[8]);
    let usdc = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

    // A factory agent: its anchored card names a resource of the real x402 server (behind a
    // redirect, set once the agent contract, the payTo the server asks for, exists), with the
    // network written as x402 version 1 wrote it and the payTo in checksum case.
    let paid_url = server.route("/pay", Route::Status(404));
    let paid_card = card(
        "Paid translator",
        x402_extension(json!([{
            "scheme": "exact", "network": "base-sepolia", "maxAmountRequired": "1000",
            "asset": usdc, "payTo": wallet_a.to_checksum(None), "resource": paid_url
        }])),
    )
    .to_string()
    .into_bytes();
    let mut anchored = demo::sample_card(&devnet, "Paid translator", Some(wallet_a));
    anchored.cardURI = server.route(
        "/paid-card.json",
        Route::Body("application/json", paid_card.clone()),
    );
    anchored.cardHash = keccak256(&paid_card);
    let factory = demo::via_factory(&devnet, accounts[2], anchored)
        .await
        .unwrap();
    let x402 = sdk::x402(&hex(factory)).await;
    server.route("/pay", Route::Redirect(format!("{}/translate", x402.base)));

    // An ERC-8004 agent whose card prices its A2A interface, naming no resource of its own.
    let oracle_card = card(
        "Card oracle",
        x402_extension(json!([{
            "scheme": "exact", "network": "84532", "maxAmountRequired": "250",
            "asset": usdc, "payTo": hex(wallet_b)
        }])),
    );
    server.route(
        "/oracle/.well-known/agent-card.json",
        Route::Body("application/json", oracle_card.to_string().into_bytes()),
    );
    let oracle_file = server.route(
        "/oracle.json",
        Route::Body(
            "application/json",
            registration("Card oracle", &format!("{}/oracle", server.base))
                .to_string()
                .into_bytes(),
        ),
    );
    let oracle = demo::via_erc8004(&devnet, accounts[3], &oracle_file)
        .await
        .unwrap();
    // Its listing is the A2A endpoint the file names, where it is paid.
    let oracle_card_url = format!("{}/oracle", server.base);

    // An ERC-8004 agent charging on Base for a resource that answers 404.
    let quote_url = server.route("/quote", Route::Status(404));
    let quote_card = card(
        "Quote desk",
        x402_extension(json!([{
            "scheme": "exact", "network": "eip155:8453", "maxAmountRequired": "5000",
            "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "payTo": hex(wallet_a), "resource": quote_url
        }])),
    );
    server.route(
        "/quote-desk/.well-known/agent-card.json",
        Route::Body("application/json", quote_card.to_string().into_bytes()),
    );
    let quote_file = server.route(
        "/quote-desk.json",
        Route::Body(
            "application/json",
            registration("Quote desk", &format!("{}/quote-desk", server.base))
                .to_string()
                .into_bytes(),
        ),
    );
    let quote = demo::via_erc8004(&devnet, accounts[4], &quote_file)
        .await
        .unwrap();

    let indexed = support::indexed_with_documents(&devnet).await;
    let store = support::open(&indexed.db).await;
    let mut worker = ProbeWorker::new(
        local_policy(Duration::from_millis(20)),
        Duration::ZERO,
        store.clone(),
        store.writer(4),
    )
    .unwrap();
    assert!(
        probe_all(&mut worker).await > 0,
        "the resources were probed"
    );
    let served = support::api::serve(store.clone(), &indexed.config).await;
    let graphql = format!("{}/graphql", served.base);

    let identity = hex(devnet.deployment().identity);
    let factory_key = format!("{chain}:{}", hex(factory));
    let oracle_key = format!("{chain}:{identity}:{oracle}");
    let quote_key = format!("{chain}:{identity}:{quote}");
    let mut everything = vec![paid_url.clone(), oracle_card_url.clone(), quote_url.clone()];
    everything.sort();

    let calls = json!([
        {"name": "all", "params": {}},
        {"name": "http", "params": {"type": "http"}},
        {"name": "a2a", "params": {"type": "a2a"}},
        {"name": "mcp", "params": {"type": "mcp"}},
        {"name": "payToA", "params": {"pay_to": wallet_a.to_checksum(None)}},
        {"name": "payToB", "params": {"pay_to": hex(wallet_b)}},
        {"name": "baseSepolia", "params": {"network": "eip155:84532"}},
        {"name": "base", "params": {"network": "base"}},
        {"name": "exact", "params": {"scheme": "exact"}},
        {"name": "upto", "params": {"scheme": "upto"}},
        {"name": "erc8004", "params": {"extensions": "erc8004"}},
        {"name": "ours", "params": {"extensions": "agentindex"}},
        {"name": "bazaarInfo", "params": {"extensions": "bazaar"}},
        {"name": "combined", "params": {"type": "http", "pay_to": hex(wallet_a), "network": "8453"}},
        {"name": "page0", "params": {"limit": 1}},
        {"name": "page1", "params": {"limit": 1, "offset": 1}},
        {"name": "page2", "params": {"limit": 1, "offset": 2}},
        {"name": "past", "params": {"limit": 5, "offset": 3}},
        {"name": "tooMany", "params": {"limit": 500}},
    ]);
    let r = bazaar(&served.base, &calls);

    let set = |name: &str| -> BTreeSet<String> { resources(&r[name]).into_iter().collect() };
    let of =
        |urls: &[&String]| -> BTreeSet<String> { urls.iter().map(|u| u.to_string()).collect() };
    assert_eq!(resources(&r["all"]), everything, "by resource");
    assert_eq!(r["all"]["x402Version"], 2);
    assert_eq!(
        r["all"]["pagination"],
        json!({"limit": 20, "offset": 0, "total": 3})
    );
    assert_eq!(set("http"), of(&[&paid_url, &quote_url]));
    assert_eq!(set("a2a"), of(&[&oracle_card_url]));
    assert!(set("mcp").is_empty());
    assert_eq!(
        set("payToA"),
        of(&[&paid_url, &quote_url]),
        "payTo in any case"
    );
    assert_eq!(set("payToB"), of(&[&oracle_card_url]));
    assert_eq!(
        set("baseSepolia"),
        of(&[&paid_url, &oracle_card_url]),
        "base-sepolia and 84532 are eip155:84532"
    );
    assert_eq!(set("base"), of(&[&quote_url]));
    assert_eq!(set("exact").len(), 3);
    assert!(set("upto").is_empty());
    assert_eq!(set("erc8004"), of(&[&oracle_card_url, &quote_url]));
    assert_eq!(set("ours").len(), 3);
    assert!(set("bazaarInfo").is_empty());
    assert_eq!(set("combined"), of(&[&quote_url]));
    let paged: Vec<String> = ["page0", "page1", "page2"]
        .iter()
        .flat_map(|page| {
            assert_eq!(r[*page]["pagination"]["total"], 3, "{page}");
            resources(&r[*page])
        })
        .collect();
    assert_eq!(paged, everything, "pages in order, none twice");
    assert!(resources(&r["past"]).is_empty());
    assert_eq!(r["past"]["pagination"]["total"], 3);
    let refused = r["tooMany"]["error"].as_str().unwrap();
    assert!(
        refused.contains("400") && refused.contains("limit"),
        "{refused}"
    );

    // Each listing: its terms in x402 version 2's words, its agent as /graphql has it.
    let item = |url: &String| -> Value {
        r["all"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|item| &item["resource"] == url)
            .unwrap()
            .clone()
    };
    let paid = item(&paid_url);
    assert_eq!(paid["type"], "http");
    assert_eq!(
        paid["accepts"],
        json!([{
            "scheme": "exact", "network": "eip155:84532", "amount": "1000",
            "asset": usdc, "payTo": hex(wallet_a), "extra": {"declaredIn": "a2a-x402"}
        }])
    );
    let ours = &paid["extensions"]["agentindex"];
    assert_eq!(ours["agentId"], factory_key);
    assert_eq!(ours["page"], format!("/agents/{factory_key}"));
    assert_eq!(
        ours["live"]["status"], "up",
        "the prober's answer: {paid:#}"
    );
    assert_eq!(ours["live"]["paysTheAgent"], true, "{paid:#}");
    assert!(paid["extensions"].get("erc8004").is_none());
    let quoted = item(&quote_url);
    // It answered, but not 402: degraded, and no terms seen live.
    let live = &quoted["extensions"]["agentindex"]["live"];
    assert_eq!(live["status"], "degraded", "{quoted:#}");
    assert_eq!(live["paysTheAgent"], Value::Null);
    assert_eq!(
        quoted["extensions"]["erc8004"],
        json!({"agentId": quote.to_string(), "agentRegistry": format!("eip155:{chain}:{identity}")})
    );
    let card_priced = item(&oracle_card_url);
    assert_eq!(card_priced["type"], "a2a");
    assert_eq!(card_priced["extensions"]["agentindex"]["live"], Value::Null);
    assert_eq!(card_priced["accepts"][0]["network"], "eip155:84532");
    for (url, key) in [
        (&paid_url, &factory_key),
        (&oracle_card_url, &oracle_key),
        (&quote_url, &quote_key),
    ] {
        let listed = item(url);
        let agent = data(
            &graphql,
            "query($id: ID!) { agent(id: $id) { id name description paymentTerms
                reputation { score } skills { tags } } }",
            json!({ "id": key }),
        )["agent"]
            .clone();
        assert_eq!(listed["extensions"]["agentindex"]["graphqlId"], agent["id"]);
        assert_eq!(listed["serviceName"], agent["name"]);
        assert_eq!(listed["description"], agent["description"]);
        assert_eq!(
            listed["extensions"]["agentindex"]["reputation"].as_f64(),
            agent["reputation"]["score"].as_f64()
        );
        assert_eq!(listed["tags"], json!(["prices"]));
        let terms = agent["paymentTerms"].as_array().unwrap();
        for accepted in listed["accepts"].as_array().unwrap() {
            assert!(
                terms.iter().any(|term| term["amount"] == accepted["amount"]
                    && term["pay_to"].as_str().map(str::to_lowercase)
                        == accepted["payTo"].as_str().map(str::to_string)),
                "{accepted} among {terms:?}"
            );
        }
    }
    served.stop().await;
}
