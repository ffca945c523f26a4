//! Abuse of the API of a running `agentindex run` (index and serve in one process): a query
//! nested 50 deep, one with 1,000 aliases, a 1 MB body and a flood of 10,000 requests are each
//! refused cleanly, the follower keeps indexing blocks mined during the flood, and `/metrics`
//! counts what happened. Over its rate a client gets 429 with Retry-After, and CORS follows the
//! config. A client over its share of the server's time is refused too, over HTTP (429) and
//! for queries sent on a websocket (a GraphQL error), while other clients are served.

use crate::support;

use agentindex_contracts::{Devnet, demo};
use agentindex_indexer::config::Config;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_queries_and_a_flood_are_refused_while_indexing_goes_on() {
    let devnet = Devnet::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    let config = dir.path().join("run.toml");
    std::fs::write(&config, toml).unwrap();
    let (_run, base) = support::binary::start(&["run", "--config"], &config);
    let store = support::open(&db).await;
    support::chain::wait_for_head(&devnet, &store, Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let post = |body: Value| client.post(format!("{base}/graphql")).json(&body).send();
    let first_error = |body: &Value| {
        body["errors"][0]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };

    // 50 levels deep.
    let deep = format!(
        "{{ __schema {{ types {}name{} }} }}",
        "{ fields { type ".to_string() + &"{ ofType ".repeat(47),
        " }".repeat(49)
    );
    let response = post(json!({ "query": deep })).await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let refused = first_error(&body);
    assert!(
        refused.contains("nested too deep") || refused.contains("recursion depth"),
        "{body}"
    );
    assert!(body["data"].is_null(), "nothing was executed");

    // 1,000 aliases of one field.
    let aliases: String = (0..1_000).map(|i| format!("a{i}:__typename ")).collect();
    let body: Value = post(json!({ "query": format!("{{ {aliases} }}") }))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Refused before it is parsed: 1,000 aliases are 3,002 tokens (`[api.query_limits]`).
    assert!(first_error(&body).contains("3002 tokens"), "{body}");

    // A 1 MB body.
    let huge =
        json!({ "query": format!("{{ indexerStatus {{ chainId }} }} #{}", "x".repeat(1 << 20)) });
    let response = post(huge).await.unwrap();
    assert_eq!(
        response.status(),
        413,
        "a body over the limit is refused before parsing"
    );

    // 10,000 requests at 64 at a time, while agents are registered on chain. A client of its
    // own: the server closes the connection it answered the 1 MB body on without reading it,
    // and a pooled client may hand that connection to the next request before it sees the close.
    let client = reqwest::Client::new();
    let flood = futures::stream::iter(0..10_000)
        .map(|_| {
            let client = client.clone();
            let url = format!("{base}/graphql");
            async move {
                client
                    .post(url)
                    .json(&json!({ "query": "{ indexerStatus { indexedBlock } }" }))
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
            }
        })
        .buffer_unordered(64)
        .collect::<Vec<_>>();
    let registering = async {
        let a = devnet.accounts();
        for i in 0..5 {
            demo::via_erc8004(
                &devnet,
                a[1],
                &format!("data:application/json,{{\"n\":{i}}}"),
            )
            .await
            .unwrap();
        }
    };
    let (statuses, ()) = tokio::join!(flood, registering);
    let (mut ok, mut limited) = (0, 0);
    for status in &statuses {
        match status {
            Ok(200) => ok += 1,
            Ok(429) => limited += 1,
            other => panic!("the flood got {other:?}"),
        }
    }
    assert!(ok >= 100, "the burst is served: {ok}");
    assert!(limited > 9_000, "the rest is refused: {limited} of 10000");

    // The follower kept going: the agents registered during the flood are indexed.
    support::chain::wait_for_head(&devnet, &store, Duration::from_secs(30)).await;
    let agents: i64 = sqlx::query_scalar("SELECT count(*) FROM agents WHERE source = 'erc8004'")
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(agents, 5);

    // /metrics tells the same story. It is rate-limited like the flood was, so this client,
    // having spent its budget, may have to wait as told (each wait is one more refusal counted).
    let mut metrics_limited = 0;
    let metrics = loop {
        let response = client.get(format!("{base}/metrics")).send().await.unwrap();
        if response.status() != 429 {
            assert_eq!(response.status(), 200);
            break response.text().await.unwrap();
        }
        metrics_limited += 1;
        assert!(metrics_limited < 5, "/metrics stays refused");
        let wait: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        tokio::time::sleep(Duration::from_secs(wait)).await;
    };
    let value = |prefix: &str| -> f64 {
        metrics
            .lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {prefix} in:\n{metrics}"))
    };
    assert_eq!(
        value("agentindex_api_rate_limited_requests_total"),
        (limited + metrics_limited) as f64
    );
    assert!(value("agentindex_api_requests_total{operation=\"anonymous\"}") >= ok as f64);
    assert_eq!(
        value("agentindex_agents{chain_id=\"31337\",source=\"erc8004\"}"),
        5.0
    );
    let head = support::indexed_block(&store, devnet.chain_id()).await;
    assert!(value("agentindex_chain_indexed_block{") >= head as f64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_over_their_rate_get_429_and_cors_follows_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let api = "requests_per_minute_per_client = 1\nclient_burst = 2\n\
               cors_origins = [\"https://explorer.example\"]";
    let served = serve_idle_chain(&dir, api).await;
    let base = served.base.clone();
    let client = reqwest::Client::new();
    let query = json!({ "query": "{ indexerStatus { chainId } }" });
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = client
            .post(format!("{base}/graphql"))
            .json(&query)
            .send()
            .await
            .unwrap();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
        statuses.push((response.status().as_u16(), retry_after));
    }
    assert_eq!(
        statuses[..2],
        [(200, None), (200, None)],
        "the burst is served"
    );
    let (status, retry_after) = statuses[2];
    assert_eq!(status, 429, "one a minute after the burst");
    assert!(
        retry_after.is_some_and(|s| (1..=60).contains(&s)),
        "{retry_after:?}"
    );
    let mcp = client
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 429, "/mcp spends the same client's rate");
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200, "health checks are never limited");

    let preflight = |origin: &'static str| {
        client
            .request(reqwest::Method::OPTIONS, format!("{base}/graphql"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
    };
    let allowed = preflight("https://explorer.example").await.unwrap();
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://explorer.example"
    );
    let refused = preflight("https://elsewhere.example").await.unwrap();
    assert!(
        refused
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    // A browser's MCP client sends its protocol version on every request after `initialize`.
    let mcp = client
        .request(reqwest::Method::OPTIONS, format!("{base}/mcp"))
        .header("origin", "https://explorer.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,mcp-protocol-version",
        )
        .send()
        .await
        .unwrap();
    let headers = mcp.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(headers.contains("mcp-protocol-version"), "{headers}");

    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_over_its_share_of_the_servers_time_is_refused_and_others_are_not() {
    let dir = tempfile::tempdir().unwrap();
    // A millisecond a second, a millisecond at once: a few requests use it up.
    let api = "requests_per_minute_per_client = 1000000\nclient_burst = 100000\n\
               server_ms_per_second_per_client = 1\nserver_ms_burst_per_client = 1";
    let served = serve_idle_chain(&dir, api).await;
    let base = served.base.clone();
    let query = json!({ "query": "{ agents(first: 20) { edges { node { id name } } } }" });
    let ask = |client: reqwest::Client| {
        let url = format!("{base}/graphql");
        let query = query.clone();
        async move { client.post(url).json(&query).send().await.unwrap() }
    };

    let greedy = client_from([127, 0, 0, 1]);
    let mut served_before = 0;
    let refused = loop {
        let response = ask(greedy.clone()).await;
        if response.status() == 429 {
            break response;
        }
        assert_eq!(response.status(), 200);
        served_before += 1;
        assert!(served_before < 1_000, "never refused");
    };
    assert!(served_before >= 1, "a client that owes nothing is served");
    let retry_after = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(retry_after.parse::<u64>().unwrap() >= 1, "{retry_after}");
    let message = refused.text().await.unwrap();
    assert!(
        message.contains("127.0.0.1 used its share of the server's time"),
        "{message}"
    );

    let other = ask(client_from([127, 0, 0, 2])).await;
    assert_eq!(other.status(), 200, "another client keeps its own share");
    let health = greedy.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200, "health checks are never limited");

    // Queries sent on a websocket are charged to its client as they run.
    let mut socket = support::graphql_ws::websocket(&base).await;
    let mut refusal = None;
    // Well under the 200 messages a socket may send at once.
    for n in 0..150 {
        let id = format!("q{n}");
        let answer = support::graphql_ws::subscribe(
            &mut socket,
            &id,
            "query { agents(first: 20) { edges { node { id name } } } }",
        )
        .await;
        if let Some(message) = support::graphql_ws::refusal(&answer) {
            refusal = Some(message);
            break;
        }
        assert!(answer["payload"]["data"]["agents"].is_object(), "{answer}");
    }
    let refusal = refusal.expect("a websocket's queries are charged too");
    assert!(
        refusal.contains("used its share of the server's time"),
        "{refusal}"
    );

    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_owing_server_time_is_served_at_low_priority_and_others_are_not() {
    let dir = tempfile::tempdir().unwrap();
    // Any time owed moves a client aside; nobody is refused. 127.0.0.3 reads /metrics and is
    // never charged, so its scrapes never count.
    let api = "requests_per_minute_per_client = 1000000\nclient_burst = 100000\n\
               server_ms_per_second_per_client = 1\nserver_ms_burst_per_client = 1000000\n\
               low_priority_after_ms_per_client = 0\nunlimited_clients = [\"127.0.0.3\"]\n\
               [api.caches]\nmetrics_cache_secs = 1";
    let served = serve_idle_chain(&dir, api).await;
    let base = served.base.clone();
    // Each request a page size of its own, so none is answered from the response cache.
    let ask = |client: &reqwest::Client, first: u32| {
        let query =
            format!("query Lane {{ agents(first: {first}) {{ edges {{ node {{ id }} }} }} }}");
        let request = client
            .post(format!("{base}/graphql"))
            .json(&json!({ "query": query }))
            .send();
        async move {
            let response = request.await.unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()
        }
    };
    let (busy, light, scraper) = (
        client_from([127, 0, 0, 1]),
        client_from([127, 0, 0, 2]),
        client_from([127, 0, 0, 3]),
    );
    // The first request owes nothing before it: served as anyone's. The second comes from a
    // client that owes the first one's time: served on the low-priority lane, and the same.
    let first = ask(&busy, 5).await;
    let second = ask(&busy, 6).await;
    assert_eq!(second, first, "the lane answers as the ordinary path does");
    assert!(first["data"]["agents"]["edges"].is_array(), "{first}");
    let other = ask(&light, 7).await;
    assert_eq!(other, first);

    // Once `/metrics` counts the three requests, it counts one of them at low priority.
    let counted = "agentindex_api_requests_total{operation=\"Lane\"} 3";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let text = loop {
        let response = scraper.get(format!("{base}/metrics")).send().await.unwrap();
        let text = response.text().await.unwrap();
        if text.lines().any(|line| line == counted) {
            break text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never counted:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let lane = text
        .lines()
        .find_map(|line| line.strip_prefix("agentindex_api_low_priority_requests_total "))
        .unwrap_or_else(|| panic!("no low-priority counter in:\n{text}"));
    assert_eq!(lane, "1", "only the client that owed time was moved aside");

    served.stop().await;
}

/// An HTTP client whose requests come from `address` (a loopback one), so each is a client
/// of its own to the per-client limits.
fn client_from(address: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from(address))
        .build()
        .unwrap()
}

/// `serve` over a new store in `dir` with `api` as its `[api]` section and one chain that is
/// never indexed.
async fn serve_idle_chain(dir: &tempfile::TempDir, api: &str) -> support::api::Served {
    let db = support::database_url(&dir.path().join("index.db"));
    let toml = format!(
        "[database]\nurl = \"{db}\"\n\n[api]\n{api}\n\n\
         [[chains]]\nname = \"idle\"\nchain_id = 31337\nrpc = [\"http://127.0.0.1:9\"]\n"
    );
    let config =
        Config::from_toml_and_env(&toml, std::path::Path::new("api.toml"), Vec::new()).unwrap();
    let store = agentindex_indexer::store::Store::open(&config.database.url)
        .await
        .unwrap();
    support::api::serve(store, &config).await
}
