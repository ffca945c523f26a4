//! `/graphql/ws` of a running `agentindex serve` held to `[api.websocket]`, driven by a plain
//! websocket client speaking `graphql-transport-ws`: a client's websockets over its cap are
//! refused at the upgrade (429), subscriptions over a socket's cap get a GraphQL error naming
//! it (and a place comes back when one completes), a message over the size cap closes the
//! socket with 1009, and a `sinceBlock` replay from further back than `max_replay_blocks` is
//! refused with how far back is allowed while one within it is replayed; queries sent over a
//! socket take its places and get the row budget; a socket with nothing live, or whose client
//! answers no ping, is closed after `idle_timeout_secs`.

use crate::support;

use agentindex_contracts::{Devnet, confirm, demo};
use alloy::primitives::U256;
use alloy::providers::Provider;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};

/// Longest an answer may take before the test calls it a hang.
const SAFETY: Duration = Duration::from_secs(20);

type Stream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A `graphql-transport-ws` connection, acknowledged.
struct Socket(Stream);

impl Socket {
    /// Opens and initialises a connection, or the server's refusal of the upgrade.
    async fn open(url: &str) -> Result<Self, tungstenite::Error> {
        let mut request = url.into_client_request().unwrap();
        request.headers_mut().insert(
            "sec-websocket-protocol",
            "graphql-transport-ws".parse().unwrap(),
        );
        let (stream, _) = tokio_tungstenite::connect_async(request).await?;
        let mut socket = Self(stream);
        socket.send(json!({ "type": "connection_init" })).await;
        assert_eq!(socket.next().await["type"], "connection_ack");
        Ok(socket)
    }

    async fn send(&mut self, message: Value) {
        self.0
            .send(Message::Text(message.to_string().into()))
            .await
            .unwrap();
    }

    async fn subscribe(&mut self, id: &str, query: &str, variables: Value) {
        let payload = json!({ "query": query, "variables": variables });
        self.send(json!({ "id": id, "type": "subscribe", "payload": payload }))
            .await;
    }

    /// The next protocol message (pings answered by the library are skipped).
    async fn next(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(SAFETY, self.0.next())
                .await
                .expect("the server answers within the safety bound")
                .expect("the socket is open")
                .expect("the socket reads");
            match message {
                Message::Text(text) => return serde_json::from_str(&text).unwrap(),
                Message::Close(frame) => panic!("closed: {frame:?}"),
                _ => continue,
            }
        }
    }

    /// How the server closed the socket: the close frame's code, if it sent one.
    async fn closed(&mut self) -> Option<(CloseCode, String)> {
        loop {
            let message = tokio::time::timeout(SAFETY, self.0.next())
                .await
                .expect("the server closes within the safety bound");
            match message {
                Some(Ok(Message::Close(frame))) => {
                    return frame.map(|f| (f.code, f.reason.to_string()));
                }
                Some(Ok(_)) => continue,
                None | Some(Err(_)) => return None,
            }
        }
    }
}

/// The refusal of an operation over the socket's cap of two.
const FULL: &str = "this connection has 2 operations live (subscriptions and running queries), \
                    the most one connection may have \
                    (api.websocket.max_subscriptions_per_connection); stop one first";

const PAYMENTS: &str =
    "subscription($since: Int) { newPayments(sinceBlock: $since) { payer amount blockNumber } }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websockets_subscriptions_messages_and_replays_are_held_to_their_caps() {
    // An agent paid twice, 300 blocks after the contracts were deployed.
    let devnet = Devnet::start().await.unwrap();
    let a = devnet.accounts();
    let agent = demo::via_factory(&devnet, a[1], demo::sample_card(&devnet, "Capped", None))
        .await
        .unwrap();
    let _: Value = devnet
        .provider()
        .raw_request("anvil_mine".into(), ("0x12c",))
        .await
        .unwrap();
    let usdc = devnet.usdc();
    for (payer, amount) in [(a[5], 1_000_000u64), (a[6], 2_000_000)] {
        let send = usdc.transfer(agent, U256::from(amount)).from(payer);
        confirm("paying the agent", send.send()).await.unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let head = support::indexed_block(&support::open(&db).await, devnet.chain_id()).await as i64;
    assert!(head > 300);
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n\n[api.websocket]\nmax_message_bytes = 4096\n\
           max_websockets_per_client = 3\nmax_subscriptions_per_connection = 2\n\
           max_replay_blocks = 100\n\n[api.reads]\nmax_rows_per_request = 3\n";
    let config = dir.path().join("serve.toml");
    std::fs::write(&config, toml).unwrap();
    let (_serving, base) = support::binary::start(&["serve", "--config"], &config);
    let url = format!("ws://{}/graphql/ws", base.trim_start_matches("http://"));

    // A replay from block 0 reaches further back than 100 blocks: refused, saying how far.
    let mut first = Socket::open(&url).await.unwrap();
    first
        .subscribe("far", PAYMENTS, json!({ "since": 0 }))
        .await;
    let refused = first.next().await;
    let message = refused["payload"]["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "sinceBlock 0 is {head} blocks behind chain {}'s",
            devnet.chain_id()
        )),
        "{refused}"
    );
    assert!(
        message.ends_with(&format!(
            "a replay may start at most 100 blocks back (sinceBlock >= {})",
            head - 100
        )),
        "{message}"
    );
    assert_eq!(first.next().await["type"], "complete");

    // Within the bound, the two payments are replayed.
    first
        .subscribe("near", PAYMENTS, json!({ "since": head - 50 }))
        .await;
    let amounts: Vec<Value> = [first.next().await, first.next().await]
        .iter()
        .map(|m| m["payload"]["data"]["newPayments"]["amount"].clone())
        .collect();
    assert_eq!(amounts, [json!("1000000"), json!("2000000")]);

    // Two subscriptions live on the socket ("near" and "live"); a third is refused with the cap
    // named, and once one completes there is room again.
    first
        .subscribe("live", PAYMENTS, json!({ "since": null }))
        .await;
    first
        .subscribe("third", PAYMENTS, json!({ "since": head - 10 }))
        .await;
    let over = first.next().await;
    assert_eq!(over["id"], "third");
    assert_eq!(over["payload"]["errors"][0]["message"], FULL);
    assert_eq!(first.next().await["type"], "complete");
    // A query sent over the full socket takes a place while it runs, so it is refused too: a
    // client cannot pile up queries in flight on one socket.
    first
        .subscribe("query", "{ agents(first: 1) { totalCount } }", json!({}))
        .await;
    let over = first.next().await;
    assert_eq!(over["id"], "query");
    assert_eq!(over["payload"]["errors"][0]["message"], FULL, "{over}");
    assert_eq!(first.next().await["type"], "complete");
    first
        .send(json!({ "id": "live", "type": "complete" }))
        .await;
    let stopped = first.next().await;
    assert_eq!(
        (&stopped["type"], &stopped["id"]),
        (&json!("complete"), &json!("live"))
    );
    // Stopping it dropped its stream, and with it its place.
    first
        .subscribe("again", PAYMENTS, json!({ "since": head - 10 }))
        .await;
    let again = first.next().await;
    assert_eq!(again["id"], "again");
    assert_eq!(
        again["payload"]["data"]["newPayments"]["amount"], "1000000",
        "{again}"
    );
    let again = first.next().await;
    assert_eq!(
        again["payload"]["data"]["newPayments"]["amount"], "2000000",
        "{again}"
    );

    // Three websockets per client: a fourth upgrade is refused with 429.
    let _second = Socket::open(&url).await.unwrap();
    let mut third = Socket::open(&url).await.unwrap();
    match Socket::open(&url).await {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 429);
            let body = String::from_utf8(response.body().clone().unwrap_or_default()).unwrap();
            assert_eq!(
                body,
                "websocket refused: 127.0.0.1 already holds 3 websockets (at most 3 per client)"
            );
        }
        Err(other) => panic!("refused otherwise: {other}"),
        Ok(_) => panic!("a fourth websocket was accepted"),
    }

    // A query over a websocket has the same row budget as one over HTTP (3 rows here): a page
    // of five is refused before it is read, a page of one is answered.
    third
        .subscribe(
            "rows",
            "{ agents(first: 5) { edges { node { id } } } }",
            json!({}),
        )
        .await;
    let refused = third.next().await;
    let message = refused["payload"]["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("this request would read more than 3 rows"),
        "{refused}"
    );
    assert_eq!(third.next().await["type"], "complete");
    third
        .subscribe(
            "row",
            "{ agents(first: 1) { edges { node { id } } } }",
            json!({}),
        )
        .await;
    let answered = third.next().await;
    assert_eq!(
        answered["payload"]["data"]["agents"]["edges"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{answered}"
    );
    assert_eq!(third.next().await["type"], "complete");

    // A message over 4096 bytes closes its socket with 1009; the others are unaffected.
    let padding = "#".repeat(5_000);
    third
        .subscribe("big", &format!("{PAYMENTS} {padding}"), json!({}))
        .await;
    let (code, reason) = third.closed().await.expect("a close frame");
    assert_eq!(code, CloseCode::Size);
    assert_eq!(reason, "a message was larger than 4096 bytes");
    first
        .send(json!({ "id": "near", "type": "complete" }))
        .await;
    assert_eq!(
        first.next().await["type"],
        "complete",
        "the first socket still answers"
    );
    // Its place is given back once it closed.
    let deadline = Instant::now() + SAFETY;
    while Socket::open(&url).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the closed websocket's place never came back"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_and_unanswering_websockets_are_closed_and_busy_ones_kept() {
    let devnet = Devnet::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    support::index_until_synced(&support::config(&devnet, &db, 0)).await;
    let toml = support::config_toml(&devnet, &[devnet.endpoint()], &db, 0, "")
        + "\n[api]\nlisten = \"127.0.0.1:0\"\n\n[api.websocket]\nidle_timeout_secs = 1\n\
           max_websockets_per_client = 1\n";
    let config = dir.path().join("serve.toml");
    std::fs::write(&config, toml).unwrap();
    let (_serving, base) = support::binary::start(&["serve", "--config"], &config);
    let url = format!("ws://{}/graphql/ws", base.trim_start_matches("http://"));

    // Nothing live: closed normally once the idle second has passed, not before.
    let opened = Instant::now();
    let mut quiet = Socket::open(&url).await.unwrap();
    let (code, reason) = quiet.closed().await.expect("a close frame");
    assert_eq!(
        (code, reason.as_str()),
        (
            CloseCode::Normal,
            "nothing was live on this websocket for 1 s"
        )
    );
    assert!(
        opened.elapsed() >= Duration::from_secs(1),
        "{:?}",
        opened.elapsed()
    );

    // A live subscription whose client reads (and so answers pings) is kept well past it.
    let mut busy = Socket::open(&url).await.unwrap();
    busy.subscribe("live", PAYMENTS, json!({ "since": null }))
        .await;
    let kept_until = Instant::now() + Duration::from_secs(3);
    while let Ok(message) = tokio::time::timeout_at(kept_until.into(), busy.0.next()).await {
        match message {
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("a busy, answering socket got {other:?}"),
        }
    }

    // The client lets it go; once the server has its place back (one socket per client here),
    // the next opens.
    drop(busy);
    let mut deaf = open_within_safety(&url).await;

    // A live subscription whose client stops reading answers no ping: closed as gone away,
    // and its place given back, so another socket opens while it is still not read.
    deaf.subscribe("live", PAYMENTS, json!({ "since": null }))
        .await;
    // Not reading is the behaviour under test: nothing is read for three idle times.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let _next = open_within_safety(&url).await;
    // Reading on, tungstenite first writes the pongs it owes for the pings it reads, and that
    // write can fail on the closed socket before the close frame is reached: the code is
    // checked when it arrives.
    if let Some((code, reason)) = deaf.closed().await {
        assert_eq!(
            (code, reason.as_str()),
            (CloseCode::Away, "no answer to pings for 1 s")
        );
    }
}

/// A socket, opened as soon as the server takes one (it answers 429 while the client holds its
/// share), within the safety bound.
async fn open_within_safety(url: &str) -> Socket {
    let deadline = Instant::now() + SAFETY;
    loop {
        match Socket::open(url).await {
            Ok(socket) => return socket,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("no websocket within {SAFETY:?}: {error}"),
        }
    }
}
