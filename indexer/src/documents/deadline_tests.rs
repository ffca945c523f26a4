//! One deadline per document, key sets included: a card whose `jku` host drips its answer is
//! checked within `fetch_deadline_secs` (not once for the card and once more per key set), a
//! key set is not fetched at all once the deadline has passed, and the report says the deadline
//! ran out. Against a real HTTP server on 127.0.0.1 that sends its bytes slowly.

use super::signature::SignatureStatus;
use super::uri::ResolveOptions;
use super::{Checker, Expect, FetchPolicy, Fetcher, Severity};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The deadline for one document in these tests.
const DEADLINE: Duration = Duration::from_secs(2);
/// How long the card itself takes to arrive: half the deadline, so the key sets get the rest.
const CARD_TAKES: Duration = Duration::from_secs(1);
/// Time past the deadline a check may take to wind up (timers, the report).
const SLACK: Duration = Duration::from_millis(500);

/// What the server answers on a path.
#[derive(Clone)]
enum Answer {
    /// `body` in ten pieces spread over `takes`.
    Slow { body: Vec<u8>, takes: Duration },
    /// A body announced as 64 KiB that comes a byte every 50 ms, never ending in time.
    Drip,
}

/// An HTTP/1.1 server on 127.0.0.1 that answers each path as told and counts the requests.
struct SlowServer {
    base: String,
    routes: Arc<Mutex<HashMap<String, Answer>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl SlowServer {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let routes = Arc::new(Mutex::new(HashMap::new()));
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let (served, counted) = (routes.clone(), hits.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, served.clone(), counted.clone()));
            }
        });
        Self { base, routes, hits }
    }

    fn route(&self, path: &str, answer: Answer) -> String {
        self.routes.lock().unwrap().insert(path.into(), answer);
        format!("{}{path}", self.base)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

async fn serve(
    mut stream: TcpStream,
    routes: Arc<Mutex<HashMap<String, Answer>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buffer[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let answer = routes.lock().unwrap().get(&path).cloned();
    let header = |length: usize| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
        )
    };
    match answer {
        None => {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
        }
        Some(Answer::Slow { body, takes }) => {
            if stream
                .write_all(header(body.len()).as_bytes())
                .await
                .is_err()
            {
                return;
            }
            for piece in body.chunks(body.len().div_ceil(10)) {
                tokio::time::sleep(takes / 10).await;
                if stream.write_all(piece).await.is_err() {
                    return;
                }
            }
        }
        Some(Answer::Drip) => {
            if stream.write_all(header(64 << 10).as_bytes()).await.is_err() {
                return;
            }
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                if stream.write_all(b" ").await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A card with one signature per `jku` (unverifiable ones: only fetching the keys matters).
fn card_naming(jkus: &[String]) -> Vec<u8> {
    let signatures: Vec<_> = jkus
        .iter()
        .map(|jku| {
            let header = json!({"alg": "ES256", "kid": "site", "jku": jku});
            json!({
                "protected": URL_SAFE_NO_PAD.encode(header.to_string()),
                "signature": URL_SAFE_NO_PAD.encode([0u8; 64]),
            })
        })
        .collect();
    json!({
        "name": "Slow Agent", "description": "Answers slowly", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["x"]}],
        "signatures": signatures,
    })
    .to_string()
    .into_bytes()
}

fn checker() -> Checker {
    let fetcher = Fetcher::new(FetchPolicy {
        allow_private: true,
        allow_http: true,
        deadline: DEADLINE,
        // Longer than the deadline, so only the deadline can cut a fetch short.
        total_timeout: Duration::from_secs(30),
        ..FetchPolicy::default()
    })
    .unwrap();
    let resolve = ResolveOptions {
        allow_http: true,
        ..ResolveOptions::default()
    };
    Checker::new(fetcher, resolve, Vec::new())
}

#[tokio::test]
async fn key_sets_are_fetched_within_the_cards_deadline_and_not_at_all_once_it_passed() {
    let server = SlowServer::start().await;
    let jkus = [
        server.route("/jwks-0.json", Answer::Drip),
        server.route("/jwks-1.json", Answer::Drip),
    ];
    let card = server.route(
        "/card.json",
        Answer::Slow {
            body: card_naming(&jkus),
            takes: CARD_TAKES,
        },
    );
    let checker = checker();

    let started = Instant::now();
    let checked = checker.check(&card, Expect::Card, None).await;
    let took = started.elapsed();

    // Before, each key set had a deadline of its own: 1 s + 2 s + 2 s.
    assert!(
        took < DEADLINE + SLACK,
        "the card and its key sets took {took:?}, past the {DEADLINE:?} deadline"
    );
    assert!(
        took >= DEADLINE,
        "the key set had the rest of the deadline, {took:?} in all"
    );
    assert!(
        checked.bytes.is_some(),
        "the card arrived: {:?}",
        checked.report
    );
    assert_eq!(
        server.hits("/jwks-0.json"),
        1,
        "the first key set was asked for"
    );
    assert_eq!(
        server.hits("/jwks-1.json"),
        0,
        "no key set is asked for once the deadline has passed"
    );
    let Some(SignatureStatus::KeyUnavailable { reason }) = &checked.signature else {
        panic!("{:?}", checked.signature);
    };
    assert!(
        reason.contains("deadline for one document (documents.fetch_deadline_secs)"),
        "{reason}"
    );
    let lint = checked
        .report
        .lints
        .iter()
        .find(|lint| lint.code == "card.signature.deadline")
        .unwrap_or_else(|| panic!("{:?}", checked.report.lints));
    assert_eq!(lint.severity, Severity::Warning);
    assert!(lint.message.contains("ran out"), "{}", lint.message);
    assert!(
        !checked
            .report
            .lints
            .iter()
            .any(|lint| lint.code == "card.signature.key_unavailable"),
        "the deadline is named, not a missing key"
    );

    // The deadline was this document's, not the key host's fault: the next check asks again.
    checker.check(&card, Expect::Card, None).await;
    assert_eq!(server.hits("/jwks-0.json"), 2);
}

#[tokio::test]
async fn a_key_set_that_answers_in_time_is_used_and_kept() {
    let server = SlowServer::start().await;
    let empty = json!({"keys": []}).to_string().into_bytes();
    let jku = server.route(
        "/jwks.json",
        Answer::Slow {
            body: empty,
            takes: Duration::from_millis(100),
        },
    );
    let card = server.route(
        "/card.json",
        Answer::Slow {
            body: card_naming(std::slice::from_ref(&jku)),
            takes: Duration::from_millis(100),
        },
    );
    let checker = checker();
    for _ in 0..2 {
        let checked = checker.check(&card, Expect::Card, None).await;
        let Some(SignatureStatus::KeyUnavailable { reason }) = &checked.signature else {
            panic!("{:?}", checked.signature);
        };
        assert!(reason.contains("no key with kid"), "{reason}");
        let codes: Vec<_> = checked.report.lints.iter().map(|l| l.code).collect();
        assert!(
            codes.contains(&"card.signature.key_unavailable"),
            "{codes:?}"
        );
        assert!(!codes.contains(&"card.signature.deadline"), "{codes:?}");
    }
    assert_eq!(server.hits("/jwks.json"), 1, "fetched once, then kept");
}
