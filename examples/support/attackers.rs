//! The attack benchmark's attackers: one loop per class of hostile request issue #30 measured,
//! each sending the worst request of its class over and over from a loopback address of its own
//! (127.0.0.N, so per-client limits see one client per class, as they would see one attacker)
//! until told to stop, counting what came back. Each sends at a fixed pace ([`pace`]: 50
//! requests, messages or connections a second unless `ATTACK_RATE` says otherwise), above the
//! per-client rate limit so its refusals are part of what is measured: what is measured is what
//! the worst request of each class costs the server, not how much traffic two cores can take
//! (a flood as fast as the server answers saturates any server's cores with any request, a
//! health probe included; that is the network's to stop).

#![allow(dead_code)]

use crate::lowered_runtime::{LoweredRuntime, lowered_runtime};
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Fragments spreading fragments, 2^24 fields once expanded, on `/graphql`.
    FragmentBombGraphql,
    /// The same on the subgraph endpoint.
    FragmentBombSubgraph,
    /// An argument value nested 4,000 lists deep.
    NestedValue,
    /// Thousands of tokens and hundreds of directives under the size cap.
    TokensAndDirectives,
    /// The costliest query the limits still let through (35 agents found by full-text search,
    /// 20 payments and 20 feedback each: first 40 is refused as too complex), distinct each
    /// time so no cache helps.
    CostliestAllowed,
    /// Distinct queries as fast as possible, each a new cache key with big variables.
    CacheKeyFlood,
    /// The reputation feed at blocks with and without one, in turn.
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

/// Seconds the attackers run before the measured pass (`ATTACK_WARMUP_SECS`, 5).
pub(crate) fn warmup() -> anyhow::Result<u64> {
    match std::env::var("ATTACK_WARMUP_SECS") {
        Err(_) => Ok(5),
        Ok(text) => text
            .parse()
            .map_err(|e| anyhow::anyhow!("ATTACK_WARMUP_SECS={text}: {e}")),
    }
}

/// The classes named in `ATTACK_CLASSES` (a comma-separated list of the names the report
/// prints, any case), or every class when it is unset: to find which class holds what.
pub(crate) fn chosen() -> anyhow::Result<Vec<Class>> {
    let Ok(names) = std::env::var("ATTACK_CLASSES") else {
        return Ok(Class::ALL.to_vec());
    };
    names
        .split(',')
        .map(|name| {
            Class::ALL
                .iter()
                .find(|class| format!("{class:?}").eq_ignore_ascii_case(name.trim()))
                .copied()
                .ok_or_else(|| anyhow::anyhow!("ATTACK_CLASSES: no class named {name:?}"))
        })
        .collect()
}

/// The runtime the attackers run on: two threads, at the lowest priority unless
/// `ATTACKERS_AT_NORMAL_PRIORITY` is set (the attackers stand for machines of their own).
pub(crate) fn runtime() -> anyhow::Result<LoweredRuntime> {
    lowered_runtime("attacker", "ATTACKERS_AT_NORMAL_PRIORITY")
}

/// Starts one attacker per class in `classes`, on the runtime `on`, against `base` until
/// `stop` turns true. `round` numbers the attack: each round's requests differ from every
/// other round's (an attacker does not repeat questions the response cache kept).
pub(crate) fn start(
    on: &tokio::runtime::Handle,
    base: &str,
    classes: &[Class],
    rate: u32,
    stop: &Arc<AtomicBool>,
    round: u64,
) -> Vec<Attacker> {
    classes
        .iter()
        .enumerate()
        .map(|(n, class)| {
            let tally = Arc::new(Tally::default());
            let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10 + n as u8));
            let task = on.spawn(run(
                *class,
                base.to_string(),
                from,
                rate,
                round * REQUESTS_PER_ROUND,
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

/// Requests (messages, connections) each attacker sends a second: `ATTACK_RATE`, else 50.
pub(crate) fn rate() -> anyhow::Result<u32> {
    match std::env::var("ATTACK_RATE") {
        Ok(text) => text
            .parse()
            .ok()
            .filter(|rate| *rate > 0)
            .ok_or_else(|| anyhow::anyhow!("ATTACK_RATE={text:?} is not a positive number")),
        Err(_) => Ok(50),
    }
}

/// A ticker at `rate` a second; a tick missed while an answer was awaited is not made up.
fn pace(rate: u32) -> tokio::time::Interval {
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / rate);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks
}

/// More requests than one attacker sends in a round: each round numbers its requests from a
/// multiple of this.
const REQUESTS_PER_ROUND: u64 = 10_000_000;

/// Sends `class`'s requests from `from` to `base` at `rate` a second, numbering them from
/// `first` on, until `stop`.
async fn run(
    class: Class,
    base: String,
    from: IpAddr,
    rate: u32,
    first: u64,
    stop: Arc<AtomicBool>,
    tally: Arc<Tally>,
) {
    let client = reqwest::Client::builder()
        .local_address(from)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a client");
    let mut n: u64 = first;
    let mut ticks = pace(rate);
    // The feed attacker asks for blocks below the indexed one (any block above is refused
    // before anything is computed).
    let indexed = indexed_block(&client, &base).await.unwrap_or(1).max(1);
    match class {
        Class::SlowHeaders => return slow_headers(&base, from, &mut ticks, &stop, &tally).await,
        Class::Websockets => return websockets(&base, from, &mut ticks, &stop, &tally).await,
        _ => {}
    }
    while !stop.load(Ordering::Relaxed) {
        ticks.tick().await;
        n += 1;
        let (path, body) = request(class, n, indexed);
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
            Ok(response) => match read_head(response).await {
                Some(head) => serde_json::from_slice::<Value>(&head)
                    .map(|v| v.get("errors").is_some())
                    .unwrap_or(false),
                None => true,
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

/// Bytes of an answer an attacker keeps: enough for any GraphQL answer it gets.
const HEAD_BYTES: usize = 64 * 1024;

/// Reads `response` to its end, keeping its first [`HEAD_BYTES`] and dropping the rest as it
/// arrives (a feed is hundreds of megabytes: a remote attacker's machine would take it, and
/// gathering it whole here would take this one's cores and memory from the server and the
/// legitimate load); `None` if the answer broke off.
async fn read_head(mut response: reqwest::Response) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        let room = HEAD_BYTES.saturating_sub(head.len());
        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Some(head)
}

/// The indexed block of the first chain `/status` lists.
async fn indexed_block(client: &reqwest::Client, base: &str) -> Option<u64> {
    let status: Value = client
        .get(format!("{base}/status"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    status[0]["indexed_block"].as_u64()
}

/// The `n`th request of `class`: its path and JSON body (`None` for a GET); `indexed` is the
/// chain's indexed block.
fn request(class: Class, n: u64, indexed: u64) -> (String, Option<Value>) {
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
            "{{ agents(first: 35, search: \"agent {n}\") {{ edges {{ node {{ id name \
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
        Class::FeedAtAnyBlock => {
            // Each kind of feed request in turn: a block with no feed (refused), the indexed
            // block's (computed once per database version), and the three epoch boundaries
            // below it (stored by the indexer, read back).
            let boundary = indexed - indexed % 1_000;
            let query = match n % 5 {
                0 => format!("?block={}", n * 7919 % indexed),
                1 => String::new(),
                k => format!("?block={}", boundary.saturating_sub(1_000 * (k - 1))),
            };
            (format!("/feeds/reputation.jsonl{query}"), None)
        }
        Class::MetricsFlood => ("/metrics".into(), None),
        Class::SlowHeaders | Class::Websockets => unreachable!("not plain requests"),
    }
}

/// A TCP connection to `base` from `from`.
async fn connect(base: &str, from: IpAddr) -> std::io::Result<TcpStream> {
    let address: std::net::SocketAddr = base
        .trim_start_matches("http://")
        .parse()
        .expect("a socket address");
    let socket = TcpSocket::new_v4()?;
    socket.bind((from, 0).into())?;
    socket.connect(address).await
}

/// Holds up to 400 connections that send half a request line's headers, reopening each (one a
/// tick) as the server closes it.
async fn slow_headers(
    base: &str,
    from: IpAddr,
    ticks: &mut tokio::time::Interval,
    stop: &AtomicBool,
    tally: &Tally,
) {
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
            ticks.tick().await;
            tally.sent.fetch_add(1, Ordering::Relaxed);
            match connect(base, from).await {
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
/// block 0, one connection or message a tick.
async fn websockets(
    base: &str,
    from: IpAddr,
    ticks: &mut tokio::time::Interval,
    stop: &AtomicBool,
    tally: &Tally,
) {
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
        ticks.tick().await;
        tally.sent.fetch_add(1, Ordering::Relaxed);
        let opened = match connect(base, from).await {
            Ok(stream) => tokio_tungstenite::client_async(request, stream).await.ok(),
            Err(_) => None,
        };
        let Some((mut socket, _)) = opened else {
            tally.refused.fetch_add(1, Ordering::Relaxed);
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
            ticks.tick().await;
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
