//! Liveness end to end, on anvil and on either database: agents registered on-chain declare
//! endpoints served by the real SDK servers (an A2A agent, an MCP server, an x402 resource paid
//! to the agent's payment address) and by a test server (a web page, a JSON-RPC interface that
//! answers 500); after indexing, the
//! probe worker probes them as the engine runs it, and the API serves what it saw (status,
//! uptime, latency, endpoints, MCP tools, the extended card fetched with the operator's
//! credentials, x402 verified live) and filters on it. A stopped
//! server turns its agent degraded and its endpoint is backed off. Probing never touches what
//! is derived from the chain: the canonical dump and the reputation feed are byte-equal before
//! and after.

use crate::support;

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::config::HostCredential;
use agentindex_indexer::engine::ProbeWorker;
use agentindex_indexer::store::{StoreRead, Writer};
use alloy::primitives::{Address, keccak256};
use serde_json::{Value, json};
use std::time::Duration;
use support::doc_server::{DocServer, Route};
use support::graphql::data;
use support::liveness::{self as sdk, local_policy_with, probe_all};

const LIVENESS: &str = "query($id: ID!) { agent(id: $id) { liveness {
    status reachable lastSeen checkedAt uptime24h uptime7d latencyP50
    endpoints { kind url status latencyMs httpStatus reason error }
    mcpTools { name description }
    extendedCard extendedSkills { id name }
    x402Live { live resources { url walletMatches live accepts { scheme network amount payTo } } }
} } }";

/// Seconds since the Unix epoch.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn endpoint<'a>(liveness: &'a Value, kind: &str) -> &'a Value {
    liveness["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} endpoint in {liveness:#}"))
}

fn ids(answer: &Value) -> Vec<String> {
    let mut ids: Vec<String> = answer["agents"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_endpoints_are_probed_stored_and_served() {
    let devnet = Devnet::start().await.unwrap();
    let server = DocServer::start().await;
    let accounts = devnet.accounts();
    let chain = devnet.chain_id();
    let hex = |a: Address| format!("{a:#x}");
    let wallet = accounts[7];

    // Its extended card is served to this instance's credentials.
    let a2a = sdk::a2a_with("Liveness Echo", &["--extended-token", "members"]).await;
    let mcp = sdk::mcp_python("live-translator").await;
    let page = server.route("/home", Route::Body("text/html", b"<h1>home</h1>".to_vec()));
    let failing_rpc = server.route("/rpc", Route::Status(500));

    // An ERC-8004 agent: its registration file lists the A2A agent, the MCP server and a page.
    let mcp_url = format!("{}/mcp", mcp.base);
    let registration = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Live translator", "description": "Translates, and answers",
        "services": [
            {"name": "A2A", "endpoint": a2a.base, "version": "1.0"},
            {"name": "MCP", "endpoint": mcp_url, "version": "2025-06-18"},
            {"name": "web", "endpoint": page},
        ],
    });
    let reg_url = server.route(
        "/reg.json",
        Route::Body("application/json", registration.to_string().into_bytes()),
    );
    let erc_id = demo::via_erc8004(&devnet, accounts[1], &reg_url)
        .await
        .unwrap();

    // A factory agent: its anchored card names an x402 resource and a JSON-RPC interface that
    // answers 500. The resource redirects to the x402 server, started once the agent contract
    // (its payment address, the payTo the server asks for) is deployed.
    let x402_url = server.route("/pay", Route::Status(404));
    let card = json!({
        "name": "Paid translator", "description": "Translates for a fee", "version": "1.0.0",
        "supportedInterfaces": [{"url": failing_rpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false, "extensions": [{
            "uri": "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.1",
            "params": {"accepts": [{
                "scheme": "exact", "network": "eip155:84532", "maxAmountRequired": "1000",
                "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
                "payTo": hex(wallet), "resource": x402_url
            }]}
        }]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "translate", "name": "translate", "description": "translates", "tags": ["language"]}]
    })
    .to_string()
    .into_bytes();
    let mut data_card = demo::sample_card(&devnet, "Paid translator", Some(wallet));
    data_card.cardURI = server.route(
        "/paid-card.json",
        Route::Body("application/json", card.clone()),
    );
    data_card.cardHash = keccak256(&card);
    let factory = demo::via_factory(&devnet, accounts[2], data_card)
        .await
        .unwrap();
    let x402 = sdk::x402(&hex(factory)).await;
    server.route("/pay", Route::Redirect(format!("{}/translate", x402.base)));

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let config = support::config_with_local_documents(&devnet, &db);
    support::index_with_documents(&config).await;

    // The documents worker fetched several at once; the prober must not.
    server.reset_most_in_flight();
    let before_probing = server.seen().len();
    let store = support::open(&db).await;
    let served = support::api::serve(store.clone(), &config).await;
    let graphql = format!("{}/graphql", served.base);
    let feed_before = support::api::feed(&served.base, "").await;
    let dump_before = store.canonical_dump().await.unwrap();

    let writer: Writer = store.writer(4);
    let credentials = vec![HostCredential {
        origin: a2a.base.clone(),
        header: "Authorization".into(),
        value: "Bearer members".into(),
    }];
    let interval = Duration::from_millis(200);
    let mut worker = ProbeWorker::new(
        local_policy_with(interval, credentials),
        Duration::ZERO,
        store.clone(),
        writer.clone(),
    )
    .unwrap();
    // Registration: card, JSON-RPC, MCP, web; factory: card, JSON-RPC, x402.
    assert_eq!(probe_all(&mut worker).await, 7);
    // Every server here is on one host (127.0.0.1): one probe at a time, an interval apart.
    assert_eq!(server.most_in_flight(), 1);
    let mut seen = server.seen()[before_probing..].to_vec();
    seen.sort_by_key(|s| s.at);
    assert_eq!(
        seen.len(),
        4,
        "web, JSON-RPC, card and the x402 redirect: {seen:?}"
    );
    let span = seen[3].at - seen[0].at;
    assert!(
        span >= 3 * interval - Duration::from_millis(50),
        "{span:?}: {seen:?}"
    );

    let erc_key = format!("{chain}:{}:{erc_id}", hex(devnet.deployment().identity));
    let factory_key = format!("{chain}:{}", hex(factory));
    let erc = data(&graphql, LIVENESS, json!({"id": erc_key}))["agent"]["liveness"].clone();
    assert_eq!(erc["status"], "UP", "{erc:#}");
    assert_eq!(erc["reachable"], true);
    assert_eq!(erc["uptime24h"], 1.0);
    assert!(erc["latencyP50"].as_i64().is_some(), "{erc:#}");
    for kind in ["A2A_CARD", "A2A_JSONRPC", "MCP", "WEB"] {
        assert_eq!(endpoint(&erc, kind)["status"], "UP", "{kind}: {erc:#}");
    }
    assert_eq!(endpoint(&erc, "MCP")["url"], mcp_url);
    let tools: Vec<&str> = erc["mcpTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["detect_language", "translate_text"]);
    assert_eq!(erc["extendedCard"], "fetched", "{erc:#}");
    assert_eq!(
        erc["extendedSkills"],
        json!([{"id": "echo", "name": "Echo"}, {"id": "premium_translate", "name": "Premium Translate"}])
    );

    let paid = data(&graphql, LIVENESS, json!({"id": factory_key}))["agent"]["liveness"].clone();
    assert_eq!(paid["status"], "DEGRADED", "{paid:#}");
    assert_eq!(paid["reachable"], true);
    assert_eq!(endpoint(&paid, "A2A_CARD")["status"], "UP", "{paid:#}");
    let rpc = endpoint(&paid, "A2A_JSONRPC");
    assert_eq!(
        (rpc["status"].as_str(), rpc["httpStatus"].as_i64()),
        (Some("DOWN"), Some(500))
    );
    assert_eq!(rpc["reason"], "http_status");
    assert_eq!(paid["x402Live"]["live"], true, "{paid:#}");
    let resource = &paid["x402Live"]["resources"][0];
    assert_eq!(resource["url"], x402_url);
    assert_eq!(resource["walletMatches"], true);
    assert_eq!(resource["accepts"][0]["amount"], "1000");

    let listed = |filter: Value| {
        ids(&data(
            &graphql,
            "query($f: AgentFilter) { agents(filter: $f, first: 50) { edges { node { id } } } }",
            json!({"f": filter}),
        ))
    };
    let mut both = vec![erc_key.clone(), factory_key.clone()];
    both.sort();
    assert_eq!(listed(json!({"reachable": true})), both);
    assert!(listed(json!({"reachable": false})).is_empty());
    assert_eq!(
        listed(json!({"mcpTool": "Translate_Text"})),
        vec![erc_key.clone()]
    );
    assert_eq!(listed(json!({"x402Live": true})), vec![factory_key.clone()]);
    assert_eq!(listed(json!({"minUptime": 0.9})), vec![erc_key.clone()]);
    assert_eq!(
        listed(json!({"extendedSkill": "Premium_Translate"})),
        vec![erc_key.clone()]
    );

    // The explorer shows it, in a browser: the agent page's liveness section, and the search
    // page with only reachable agents.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut node = std::process::Command::new("node");
    node.arg(root.join("tools/explorer/liveness.mjs"))
        .current_dir(root.join("tools"));
    let page = support::tool::json_through(
        node,
        &json!({ "base": served.base, "agent": erc_key }),
        "the explorer's liveness section (tools/explorer/liveness.mjs)",
    );
    assert_eq!(page["status"], "up", "{page:#}");
    assert_eq!(page["uptime24h"], "100%", "{page:#}");
    let shown: Vec<(&str, &str)> = page["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kindEnum"].as_str().unwrap(),
                e["statusEnum"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("A2A_CARD", "UP"),
            ("A2A_JSONRPC", "UP"),
            ("MCP", "UP"),
            ("WEB", "UP")
        ],
        "{page:#}"
    );
    let tools_shown: Vec<&str> = page["mcpTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools_shown, ["detect_language", "translate_text"]);
    assert_eq!(page["extendedCard"], "fetched", "{page:#}");
    assert_eq!(page["extendedSkills"], json!(["echo", "premium_translate"]));
    let mut reachable: Vec<String> = page["search"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    reachable.sort();
    assert_eq!(
        reachable, both,
        "the search page's reachable-only filter: {page:#}"
    );

    // The MCP server goes away: the agent turns degraded and the endpoint is backed off.
    mcp.stop().await;
    let url = support::database_url(&db);
    let schedule = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("UPDATE probe_endpoints SET next_probe_at = 0")
        .execute(&schedule)
        .await
        .unwrap();
    assert_eq!(probe_all(&mut worker).await, 7);
    let erc = data(&graphql, LIVENESS, json!({"id": erc_key}))["agent"]["liveness"].clone();
    assert_eq!(erc["status"], "DEGRADED", "{erc:#}");
    assert_eq!(endpoint(&erc, "MCP")["status"], "DOWN");
    assert_eq!(endpoint(&erc, "MCP")["reason"], "connect");
    assert_eq!(erc["uptime24h"], 7.0 / 8.0, "{erc:#}");
    assert!(
        erc["mcpTools"].as_array().unwrap().is_empty(),
        "a server that is down lists nothing"
    );
    let (failures, wait): (i64, i64) = sqlx::query_as(
        "SELECT failures, next_probe_at - checked_at FROM probe_endpoints WHERE kind = 'mcp'",
    )
    .fetch_one(&schedule)
    .await
    .unwrap();
    assert_eq!(failures, 1);
    assert!(
        (270..=330).contains(&wait),
        "retried after retry_secs give or take a tenth: {wait}"
    );
    assert!(listed(json!({"mcpTool": "translate_text"})).is_empty());

    // Raw outcomes past the retention window are rolled up per day, then dropped.
    let day = 86_400;
    let old_day = (unix_now() - 10 * day) / day * day;
    for (offset, status, latency) in [
        (60, "up", Some(40)),
        (120, "down", None),
        (180, "up", Some(20)),
    ] {
        sqlx::query(
            "INSERT INTO probe_results (kind, url, checked_at, status, reason, latency_ms, http_status)
             VALUES ('mcp', $1, $2, $3, NULL, $4, NULL)",
        )
        .bind(&mcp_url)
        .bind(old_day + offset)
        .bind(status)
        .bind(latency)
        .execute(&schedule)
        .await
        .unwrap();
    }
    sqlx::query("UPDATE probe_endpoints SET next_probe_at = 0 WHERE kind = 'web'")
        .execute(&schedule)
        .await
        .unwrap();
    probe_all(&mut worker).await;
    let (probes, answered, p50, max): (i64, i64, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT probes, answered, latency_p50_ms, latency_max_ms FROM probe_daily
         WHERE kind = 'mcp' AND url = $1 AND day = $2",
    )
    .bind(&mcp_url)
    .bind(old_day)
    .fetch_one(&schedule)
    .await
    .unwrap();
    assert_eq!((probes, answered, p50, max), (3, 2, Some(20), Some(40)));
    let raw_left: i64 =
        sqlx::query_scalar("SELECT count(*) FROM probe_results WHERE checked_at < $1")
            .bind(old_day + day)
            .fetch_one(&schedule)
            .await
            .unwrap();
    assert_eq!(raw_left, 0);

    // What the chain says is untouched.
    let feed_after = support::api::feed(&served.base, "").await;
    assert_eq!(feed_after.digest, feed_before.digest);
    assert_eq!(feed_after.body, feed_before.body);
    support::assert_same_index(
        &store.canonical_dump().await.unwrap(),
        &dump_before,
        "after probing",
    );

    // An operator who weighs availability gets it in the composite: the agents probed are
    // rescored with their 7-day uptime as a component.
    let mut weighing = config.clone();
    weighing.reputation.weights.availability = 1.0;
    let contexts = std::sync::Arc::new(agentindex_indexer::engine::chain_contexts(&weighing));
    let mut worker = ProbeWorker::new(
        local_policy_with(Duration::from_millis(1), Vec::new()),
        Duration::ZERO,
        store.clone(),
        writer.clone(),
    )
    .unwrap()
    .rescoring(contexts);
    sqlx::query("UPDATE probe_endpoints SET next_probe_at = 0")
        .execute(&schedule)
        .await
        .unwrap();
    probe_all(&mut worker).await;
    let weighed = data(
        &graphql,
        "query($id: ID!) { agent(id: $id) { liveness { uptime7d }
            reputation { components { availability } weights { availability } } } }",
        json!({"id": erc_key}),
    )["agent"]
        .clone();
    let uptime = weighed["liveness"]["uptime7d"].as_f64().unwrap();
    let component = weighed["reputation"]["components"]["availability"].as_f64();
    assert_eq!(component, Some(uptime * 100.0), "{weighed:#}");
    assert!(
        weighed["reputation"]["weights"]["availability"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    served.stop().await;
}
