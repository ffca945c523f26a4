//! The attack benchmark's attackers: one loop per class of hostile request issue #30 measured,
//! each sending the worst request of its class over and over from a loopback address of its own
//! (127.0.0.N, so per-client limits see one client per class, as they would see one attacker)
//! until told to stop, counting what came back.

#![allow(dead_code)]

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;

/// One class of attack.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Class {
    /// Fragments spreading fragments, 2^24 fields once expanded, on `/graphql`.
    FragmentBombGraphql,
    /// The same on the subgraph endpoint.
    FragmentBombSubgraph,
    /// An argument value nested 4,000 lists deep.
    NestedValue,
    /// Thousands of tokens and hundreds of directives under the size cap.
    TokensAndDirectives,
    /// The costliest query the limits still let through, distinct each time so no cache helps.
    CostliestAllowed,
    /// Distinct queries as fast as possible, each a new cache key with big variables.
    CacheKeyFlood,
    /// The reputation feed at ever-different blocks.
    FeedAtAnyBlock,
    /// `/metrics` as fast as possible.
    MetricsFlood,
    /// 400 connections that never finish their headers, reopened as the server closes them.
    SlowHeaders,
    /// Websockets: 1 MiB messages, and subscriptions opened until refused, replaying from 0.
    Websockets,
}

impl Class {
    /// Every class, in the order the report lists them.
    pub(crate) const ALL: [Class; 10] = [
        Class::FragmentBombGraphql,
        Class::FragmentBombSubgraph,
        Class::NestedValue,
        Class::TokensAndDirectives,
        Class::CostliestAllowed,
        Class::CacheKeyFlood,
        Class::FeedAtAnyBlock,
        Class::MetricsFlood,
        Class::SlowHeaders,
        Class::Websockets,
    ];
}

/// What one attacker sent and got back.
#[derive(Default, Debug)]
pub(crate) struct Tally {
    /// Requests (or connections, or messages) sent.
    pub(crate) sent: AtomicU64,
    /// Answered with a refusal (an error body, 4xx, 429, 503, or a closed socket).
    pub(crate) refused: AtomicU64,
    /// Answered with data.
    pub(crate) answered: AtomicU64,
}

/// A running attacker.
pub(crate) struct Attacker {
    pub(crate) class: Class,
    pub(crate) tally: Arc<Tally>,
    task: tokio::task::JoinHandle<()>,
}

/// Starts one attacker per class against `base` until `stop` turns true.
pub(crate) fn start_all(base: &str, stop: &Arc<AtomicBool>) -> Vec<Attacker> {
    Class::ALL
        .iter()
        .enumerate()
        .map(|(n, class)| {
            let tally = Arc::new(Tally::default());
            let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10 + n as u8));
            let task = tokio::spawn(run(
                *class,
                base.to_string(),
                from,
                stop.clone(),
                tally.clone(),
            ));
            Attacker {
                class: *class,
                tally,
                task,
            }
        })
        .collect()
}

impl Attacker {
    /// Waits for the attacker to notice the stop.
    pub(crate) async fn join(self) -> (Class, Arc<Tally>) {
        let _ = self.task.await;
        (self.class, self.tally)
    }
}

/// `depth` fragments each spreading the next twice, under `root`'s selection.
pub(crate) fn fragment_bomb(root: &str, close: &str, on: &str, depth: usize) -> String {
    let mut text = format!("query {{ {root} {{ ...F0 }}{close} }}");
    for level in 0..depth {
        let next = level + 1;
        text += &format!(" fragment F{level} on {on} {{ ...F{next} ...F{next} }}");
    }
    text + &format!(" fragment F{depth} on {on} {{ id }}")
}

async fn run(class: Class, base: String, from: IpAddr, stop: Arc<AtomicBool>, tally: Arc<Tally>) {
    let client = reqwest::Client::builder()
        .local_address(from)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a client");
    let mut n: u64 = 0;
    match class {
        Class::SlowHeaders => return slow_headers(&base, from, &stop, &tally).await,
        Class::Websockets => return websockets(&base, &stop, &tally).await,
        _ => {}
    }
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let (path, body) = request(class, n);
        tally.sent.fetch_add(1, Ordering::Relaxed);
        let outcome = match body {
            Some(body) => {
                client
                    .post(format!("{base}{path}"))
                    .json(&body)
                    .send()
                    .await
            }
            None => client.get(format!("{base}{path}")).send().await,
        };
        let refused = match outcome {
            Ok(response) if !response.status().is_success() => true,
            Ok(response) => match response.bytes().await {
                Ok(bytes) => serde_json::from_slice::<Value>(&bytes)
                    .map(|v| v.get("errors").is_some())
                    .unwrap_or(false),
                Err(_) => true,
            },
            Err(_) => true,
        };
        let counter = if refused {
            &tally.refused
        } else {
            &tally.answered
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The `n`th request of `class`: its path and JSON body (`None` for a GET).
fn request(class: Class, n: u64) -> (String, Option<Value>) {
    let graphql = |query: String| ("/graphql".to_string(), Some(json!({ "query": query })));
    match class {
        Class::FragmentBombGraphql => graphql(fragment_bomb(
            "agents(first: 50) { edges { node",
            " } }",
            "Agent",
            24,
        )),
        Class::FragmentBombSubgraph => (
            "/subgraphs/name/agent0".into(),
            Some(json!({ "query": fragment_bomb("agents(first: 1000)", "", "Agent", 24) })),
        ),
        Class::NestedValue => graphql(format!(
            "{{ agents(filter: {{ tags: {}{} }}) {{ totalCount }} }}",
            "[".repeat(4_000),
            "]".repeat(4_000)
        )),
        Class::TokensAndDirectives => graphql(format!(
            "{{ agents(filter: {{ tags: [{}] }}) {{ totalCount }} __typename {} }}",
            vec!["\"a\""; 2_500].join(","),
            "@include(if: true) ".repeat(200)
        )),
        Class::CostliestAllowed => graphql(format!(
            "{{ agents(first: 100, search: \"agent {n}\") {{ edges {{ node {{ id name \
             payments(first: 20) {{ edges {{ node {{ amount }} }} }} \
             feedback(first: 20) {{ edges {{ node {{ value }} }} }} }} }} }} }}"
        )),
        Class::CacheKeyFlood => (
            "/graphql".into(),
            Some(json!({
                "query": "query($skill: String) { agents(filter: { skill: $skill }, first: 5) { totalCount } }",
                "variables": { "skill": format!("{n}{}", "x".repeat(8 * 1024)) },
            })),
        ),
        Class::FeedAtAnyBlock => (format!("/feeds/reputation.jsonl?block={}", n * 7919), None),
        Class::MetricsFlood => ("/metrics".into(), None),
        Class::SlowHeaders | Class::Websockets => unreachable!("not plain requests"),
    }
}

/// Holds up to 400 connections that send half a request line's headers, reopening each as the
/// server closes it.
async fn slow_headers(base: &str, from: IpAddr, stop: &AtomicBool, tally: &Tally) {
    let address: std::net::SocketAddr = base
        .trim_start_matches("http://")
        .parse()
        .expect("a socket address");
    let mut held: Vec<TcpStream> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        // Drop the connections the server has closed (a write to them fails).
        let mut still = Vec::with_capacity(held.len());
        for mut stream in held.drain(..) {
            if stream.write_all(b"x").await.is_ok() {
                still.push(stream);
            } else {
                tally.refused.fetch_add(1, Ordering::Relaxed);
            }
        }
        held = still;
        while held.len() < 400 && !stop.load(Ordering::Relaxed) {
            let socket = TcpSocket::new_v4().expect("a socket");
            if socket.bind((from, 0).into()).is_err() {
                break;
            }
            tally.sent.fetch_add(1, Ordering::Relaxed);
            match socket.connect(address).await {
                Ok(mut stream) => {
                    let _ = stream
                        .write_all(b"GET /graphql HTTP/1.1\r\nHost: attacker\r\nX-Slow: ")
                        .await;
                    held.push(stream);
                }
                Err(_) => {
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Opens websockets that send 1 MiB messages and subscribe until refused, replaying from
/// block 0.
async fn websockets(base: &str, stop: &AtomicBool, tally: &Tally) {
    let url = format!("{}/graphql/ws", base.replacen("http", "ws", 1));
    while !stop.load(Ordering::Relaxed) {
        let mut request =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                url.as_str(),
            )
            .expect("a websocket URL");
        request.headers_mut().insert(
            "sec-websocket-protocol",
            "graphql-transport-ws".parse().expect("a header value"),
        );
        tally.sent.fetch_add(1, Ordering::Relaxed);
        let Ok((mut socket, _)) = tokio_tungstenite::connect_async(request).await else {
            tally.refused.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let init = json!({ "type": "connection_init" }).to_string();
        if socket.send(Message::text(init)).await.is_err() {
            continue;
        }
        let _ = socket.next().await;
        for id in 0..1_000u32 {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let subscribe = json!({
                "id": id.to_string(), "type": "subscribe",
                "payload": { "query": "subscription { newPayments(sinceBlock: 0) { amount } }" }
            });
            tally.sent.fetch_add(1, Ordering::Relaxed);
            if socket
                .send(Message::text(subscribe.to_string()))
                .await
                .is_err()
            {
                tally.refused.fetch_add(1, Ordering::Relaxed);
                break;
            }
        }
        tally.sent.fetch_add(1, Ordering::Relaxed);
        let big = json!({ "type": "ping", "payload": { "pad": "x".repeat(1 << 20) } });
        if socket.send(Message::text(big.to_string())).await.is_err() {
            tally.refused.fetch_add(1, Ordering::Relaxed);
        }
        // Read what comes back until the server closes the socket or a second passes.
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while let Some(Ok(message)) = socket.next().await {
                if message.is_close() {
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        })
        .await;
    }
}
