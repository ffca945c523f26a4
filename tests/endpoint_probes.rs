//! Probes of real servers, one endpoint at a time: the A2A Python SDK's card and JSON-RPC
//! routes, the MCP Python and TypeScript SDKs over streamable HTTP, and an x402 resource server
//! from the `x402` package, each seen up with what it says and then down once stopped; and the
//! ways endpoints fail (server errors, slowness, flapping, a card other than the indexed one, a
//! 402 that pays someone else, a redirect to a private address), each with its reason. The
//! prober's politeness (its User-Agent, one host's interval, the global budget) is measured on
//! a test server that records every request.

use crate::support;

use agentindex_indexer::config::HostCredential;
use agentindex_indexer::liveness::{Kind, Outcome, Prober, Reason, Status, Target};
use std::time::{Duration, Instant};
use support::doc_server::{DocServer, Route};
use support::liveness::{self as sdk, local_policy};

fn prober() -> Prober {
    Prober::new(&local_policy(Duration::from_millis(1))).unwrap()
}

async fn probe(prober: &Prober, kind: Kind, url: &str) -> Outcome {
    prober.probe(&Target::new(kind, url)).await
}

#[track_caller]
fn assert_up(outcome: &Outcome) {
    assert_eq!(outcome.status, Status::Up, "{outcome:#?}");
    assert!(outcome.latency_ms.is_some(), "{outcome:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_a2a_sdk_agent_answers_its_card_and_an_unknown_task() {
    let server = sdk::a2a("Probe Target").await;
    let prober = prober();
    let card_url = format!("{}/.well-known/agent-card.json", server.base);
    let served = reqwest::get(&card_url)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();

    let mut card = Target::new(Kind::A2aCard, &card_url);
    card.indexed_card = Some(served.to_vec());
    assert_up(&prober.probe(&card).await);
    // The indexed card says something else: the endpoint answers, with another card.
    let mut other: serde_json::Value = serde_json::from_slice(&served).unwrap();
    other["description"] = "what the index holds".into();
    card.indexed_card = Some(other.to_string().into_bytes());
    let differs = prober.probe(&card).await;
    assert_eq!(differs.status, Status::Degraded);
    assert_eq!(differs.reason, Some(Reason::CardDiffers));

    // JSON-RPC: A2A 1.0's GetTask, v0.3's tasks/get, and either when no version is declared.
    for version in [Some("1.0"), Some("0.3"), None] {
        let mut rpc = Target::new(Kind::A2aJsonrpc, format!("{}/", server.base));
        rpc.protocol_version = version.map(str::to_string);
        let outcome = prober.probe(&rpc).await;
        assert_up(&outcome);
        assert_eq!(
            outcome.detail["errorCode"], -32001,
            "{version:?}: {outcome:#?}"
        );
    }

    let rpc_url = format!("{}/", server.base);
    server.stop().await;
    let gone = probe(&prober, Kind::A2aJsonrpc, &rpc_url).await;
    assert_eq!(gone.status, Status::Down, "{gone:#?}");
    assert_eq!(gone.reason, Some(Reason::Connect));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_sdk_servers_list_their_tools_and_are_down_once_stopped() {
    let prober = prober();
    for (server, name) in [
        (sdk::mcp_python("probe-mcp-py").await, "probe-mcp-py"),
        (sdk::mcp_js("probe-mcp-js").await, "probe-mcp-js"),
    ] {
        let url = format!("{}/mcp", server.base);
        let outcome = probe(&prober, Kind::Mcp, &url).await;
        assert_up(&outcome);
        assert_eq!(outcome.protocol_version.as_deref(), Some("2025-06-18"));
        assert_eq!(outcome.detail["server"]["name"], name, "{outcome:#?}");
        let tools: Vec<&str> = outcome.detail["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(tools.contains(&"translate_text"), "{name}: {tools:?}");
        assert!(tools.contains(&"detect_language"), "{name}: {tools:?}");
        let described = &outcome.detail["tools"][0]["description"];
        assert!(
            described.as_str().is_some_and(|d| !d.is_empty()),
            "{outcome:#?}"
        );

        server.stop().await;
        let gone = probe(&prober, Kind::Mcp, &url).await;
        assert_eq!(gone.status, Status::Down, "{name}: {gone:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_x402_resource_asks_for_payment_and_its_pay_to_is_compared_with_the_wallet() {
    let wallet = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    let server = sdk::x402(wallet).await;
    let prober = prober();
    let url = format!("{}/translate", server.base);

    let mut target = Target::new(Kind::X402, &url);
    target.wallets = vec![wallet.to_lowercase()];
    let paid_to_agent = prober.probe(&target).await;
    assert_up(&paid_to_agent);
    assert_eq!(paid_to_agent.http_status, Some(402));
    let accept = &paid_to_agent.detail["accepts"][0];
    assert_eq!(
        accept["payTo"].as_str().unwrap().to_lowercase(),
        wallet.to_lowercase()
    );
    assert_eq!(accept["scheme"], "exact");
    assert_eq!(accept["network"], "eip155:84532");
    assert_eq!(accept["amount"], "1000");
    assert_eq!(paid_to_agent.detail["walletMatches"], true);

    target.wallets = vec!["0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc".into()];
    let paid_to_someone_else = prober.probe(&target).await;
    assert_up(&paid_to_someone_else);
    assert_eq!(paid_to_someone_else.detail["walletMatches"], false);

    server.stop().await;
    assert_eq!(probe(&prober, Kind::X402, &url).await.status, Status::Down);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_endpoints_say_why() {
    let server = DocServer::start().await;
    let prober = prober();
    let errors = server.route("/errors", Route::Status(500));
    let slow = server.route("/slow", Route::Slow(Duration::from_secs(10), 200));
    let flapping = server.route("/flapping", Route::Cycle(vec![200, 503]));
    let to_metadata = server.route(
        "/to-metadata",
        Route::Redirect("http://169.254.169.254/latest/meta-data/".into()),
    );
    let page = server.route("/page", Route::Body("text/html", b"<p>hello</p>".to_vec()));
    let free = server.route("/free", Route::Body("application/json", b"{}".to_vec()));

    let failed = probe(&prober, Kind::Web, &errors).await;
    assert_eq!(
        (failed.status, failed.reason),
        (Status::Down, Some(Reason::HttpStatus))
    );
    assert_eq!(failed.http_status, Some(500));

    let started = Instant::now();
    let timed_out = probe(&prober, Kind::Web, &slow).await;
    assert_eq!(
        (timed_out.status, timed_out.reason),
        (Status::Down, Some(Reason::Timeout))
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "cut off at the probe timeout"
    );

    let mut flaps = Vec::new();
    for _ in 0..4 {
        flaps.push(probe(&prober, Kind::Web, &flapping).await.status);
    }
    assert_eq!(flaps, [Status::Up, Status::Down, Status::Up, Status::Down]);

    let blocked = probe(&prober, Kind::Web, &to_metadata).await;
    assert_eq!(
        (blocked.status, blocked.reason),
        (Status::Blocked, Some(Reason::Blocked))
    );
    assert_up(&probe(&prober, Kind::Web, &page).await);

    // An x402 resource that answers without asking for payment is not live.
    let unpaid = probe(&prober, Kind::X402, &free).await;
    assert_eq!(
        (unpaid.status, unpaid.reason),
        (Status::Degraded, Some(Reason::Protocol))
    );
    // A POST is never redirected: a URL a stranger chose cannot send it on elsewhere.
    let moved = server.route("/mcp-moved", Route::Redirect(errors.clone()));
    let before = server.hits("/errors");
    let redirected = probe(&prober, Kind::Mcp, &moved).await;
    assert_eq!(
        (redirected.status, redirected.reason),
        (Status::Down, Some(Reason::Redirect)),
        "{redirected:#?}"
    );
    assert_eq!(
        server.hits("/errors"),
        before,
        "the redirect was not followed"
    );
    // An MCP endpoint that is only a web page.
    let not_mcp = probe(&prober, Kind::Mcp, &page).await;
    assert_eq!(not_mcp.status, Status::Degraded, "{not_mcp:#?}");
    // Private addresses are closed unless the operator opens them.
    let closed = Prober::new(&agentindex_indexer::liveness::LivenessPolicy::from_parts(
        &Default::default(),
        agentindex_indexer::documents::FetchPolicy {
            allow_http: true,
            ..Default::default()
        },
    ))
    .unwrap();
    assert_eq!(
        probe(&closed, Kind::Web, &page).await.status,
        Status::Blocked
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_name_agentindex_and_keep_their_interval_and_budget() {
    let server = DocServer::start().await;
    let page = server.route("/page", Route::Body("text/html", b"<p>hi</p>".to_vec()));

    // One host: a probe's own few requests may go in a row (a burst of 8), past that they are
    // a whole interval apart, however many probes ask at once. (That one host sees one probe
    // at a time is the worker's, tested end to end.)
    let interval = Duration::from_millis(250);
    let polite = Prober::new(&local_policy(interval)).unwrap();
    futures::future::join_all((0..11).map(|_| probe(&polite, Kind::Web, &page))).await;
    let mut seen = server.seen();
    seen.sort_by_key(|s| s.at);
    assert_eq!(seen.len(), 11);
    // The last four after the burst's eight took three intervals (arrival times jitter by a
    // few milliseconds each way: the span is what the limiter holds).
    let span = seen[10].at - seen[7].at;
    assert!(span >= 3 * interval - Duration::from_millis(50), "{span:?}");
    let agent = seen[0].user_agent.as_deref().unwrap();
    assert!(agent.starts_with("agentindex-prober/"), "{agent}");
    assert!(
        agent.contains("+https://operator.example/about-probes"),
        "{agent}"
    );

    // The global budget: 60 a minute with a burst of 6, so 9 requests take 3 s at least.
    let mut policy = local_policy(Duration::from_millis(1));
    policy.requests_per_minute = 60;
    let budgeted = Prober::new(&policy).unwrap();
    let started = Instant::now();
    futures::future::join_all((0..9).map(|_| probe(&budgeted, Kind::Web, &page))).await;
    assert!(
        started.elapsed() >= Duration::from_millis(2_900),
        "{:?}",
        started.elapsed()
    );
}

/// `agentindex probe` run as a user would: its JSON outcomes and its exit code.
fn probe_command(args: &[&str]) -> (Vec<serde_json::Value>, bool) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agentindex"))
        .arg("probe")
        .args(args)
        .output()
        .unwrap();
    let outcomes = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "agentindex probe {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (outcomes, output.status.success())
}

fn kinds_and_statuses(outcomes: &[serde_json::Value]) -> Vec<(String, String)> {
    outcomes
        .iter()
        .map(|o| {
            let text = |key: &str| o[key].as_str().unwrap().to_string();
            (text("kind"), text("status"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_command_guesses_what_an_endpoint_is() {
    let a2a = sdk::a2a("Probed by hand").await;
    let mcp = sdk::mcp_js("probed-by-hand").await;
    let wallet = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
    let x402 = sdk::x402(wallet).await;
    let server = DocServer::start().await;
    let page = server.route("/page", Route::Body("text/html", b"<p>hi</p>".to_vec()));

    let card = format!("{}/.well-known/agent-card.json", a2a.base);
    let (outcomes, ok) = probe_command(&[&card]);
    assert!(ok, "{outcomes:#?}");
    assert_eq!(
        kinds_and_statuses(&outcomes),
        [
            ("a2a_card".into(), "up".into()),
            ("a2a_jsonrpc".into(), "up".into()),
            ("a2a_jsonrpc".into(), "up".into())
        ],
        "the card, then its JSON-RPC interface as declared for 1.0 (GetTask) and 0.3 (tasks/get)"
    );
    let methods: Vec<&str> = outcomes[1..]
        .iter()
        .map(|o| o["detail"]["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["GetTask", "tasks/get"]);

    let (outcomes, ok) = probe_command(&[&format!("{}/mcp", mcp.base)]);
    assert!(ok);
    assert_eq!(kinds_and_statuses(&outcomes), [("mcp".into(), "up".into())]);
    assert_eq!(outcomes[0]["detail"]["server"]["name"], "probed-by-hand");

    let resource = format!("{}/translate", x402.base);
    let (outcomes, ok) = probe_command(&[&resource, "--wallet", wallet]);
    assert!(ok);
    assert_eq!(
        kinds_and_statuses(&outcomes),
        [("x402".into(), "up".into())]
    );
    assert_eq!(outcomes[0]["detail"]["walletMatches"], true);

    let (outcomes, ok) = probe_command(&[&page]);
    assert!(ok);
    assert_eq!(kinds_and_statuses(&outcomes), [("web".into(), "up".into())]);

    // Told what it is, it asks only that; a server that is gone fails the command.
    let (outcomes, ok) = probe_command(&[&page, "--kind", "mcp"]);
    assert!(!ok);
    assert_eq!(
        kinds_and_statuses(&outcomes),
        [("mcp".into(), "degraded".into())]
    );
    let rpc = format!("{}/", a2a.base);
    a2a.stop().await;
    let (outcomes, ok) = probe_command(&[&rpc, "--kind", "a2a-jsonrpc"]);
    assert!(!ok);
    assert_eq!(outcomes[0]["status"], "down");
    assert_eq!(outcomes[0]["reason"], "connect");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extended_card_is_challenged_fetched_with_credentials_or_missing() {
    let guarded = sdk::a2a_with("Members only", &["--extended-token", "s3cret"]).await;
    let claiming = sdk::a2a_with("All talk", &["--claim-extended-card"]).await;
    let card =
        |base: &str| Target::new(Kind::A2aCard, format!("{base}/.well-known/agent-card.json"));

    // Without credentials the server asks for them: it has one.
    let outcome = prober().probe(&card(&guarded.base)).await;
    assert_up(&outcome);
    let extended = &outcome.detail["extendedCard"];
    assert_eq!(extended["status"], "challenged", "{outcome:#?}");
    assert_eq!(extended["httpStatus"], 401);

    // With the operator's credentials for the host, the card is fetched and read.
    let credentials = vec![HostCredential {
        origin: guarded.base.clone(),
        header: "Authorization".into(),
        value: "Bearer s3cret".into(),
    }];
    let trusted = Prober::new(&support::liveness::local_policy_with(
        Duration::from_millis(1),
        credentials,
    ))
    .unwrap();
    let outcome = trusted.probe(&card(&guarded.base)).await;
    assert_up(&outcome);
    let extended = &outcome.detail["extendedCard"];
    assert_eq!(extended["status"], "fetched", "{outcome:#?}");
    assert_eq!(extended["method"], "GetExtendedAgentCard");
    let skills: Vec<&str> = extended["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["echo", "premium_translate"]);
    assert!(
        !format!("{trusted:?}").contains("s3cret"),
        "credentials are never shown"
    );

    // The same card served from another origin cannot aim the credential at the host that
    // has one: asked without it.
    let copied = reqwest::get(format!("{}/.well-known/agent-card.json", guarded.base))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec();
    let elsewhere = DocServer::start().await;
    let copy_url = elsewhere.route("/card.json", Route::Body("application/json", copied));
    let outcome = trusted.probe(&Target::new(Kind::A2aCard, copy_url)).await;
    let extended = &outcome.detail["extendedCard"];
    assert_eq!(extended["status"], "challenged", "{outcome:#?}");
    assert_eq!(extended["credentialed"], false);

    // A card that claims one the server does not have is not what it says.
    let outcome = trusted.probe(&card(&claiming.base)).await;
    assert_eq!(
        (outcome.status, outcome.reason),
        (Status::Degraded, Some(Reason::Protocol)),
        "{outcome:#?}"
    );
    assert_eq!(outcome.detail["extendedCard"]["status"], "missing");
    assert_eq!(outcome.detail["extendedCard"]["errorCode"], -32007);
}
