//! Connection hygiene of a running `agentindex serve`: connections that never finish their
//! request head (slow loris) are closed after the header-read timeout while `/healthz` keeps
//! answering; a client over its connection cap is answered 429 at accept and closed, and served
//! again once it closed one; `X-Forwarded-For` names the client only when the peer is a trusted
//! proxy (whose own connections are not capped per client), and a spoofed one from anyone else
//! is ignored; IPv6 clients of one /48 share four clients' rate; `unlimited_clients` are never
//! rate limited; `/metrics` is rate-limited like other paths, health checks never; an upload that
//! stalls is closed after the idle timeout.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest any refusal or close may take before the test calls it a hang.
const SAFETY: Duration = Duration::from_secs(20);

/// Starts `agentindex serve` over an empty database with `api` appended to its `[api]` table.
fn serve(dir: &Path, api: &str) -> (support::binary::Running, String) {
    let toml = format!(
        "[database]\nurl = \"{}\"\n\n[api]\nlisten = \"127.0.0.1:0\"\n{api}",
        support::database_url(&dir.join("index.db"))
    );
    let config = dir.join("serve.toml");
    std::fs::write(&config, toml).unwrap();
    support::binary::start(&["serve", "--config"], &config)
}

/// Reads until the server closes `stream` (end of stream or a reset) and returns what it sent.
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(SAFETY, stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return received,
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Err(_) => panic!("the server kept the connection open past {SAFETY:?}"),
        }
    }
}

fn address(base: &str) -> String {
    base.trim_start_matches("http://").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_loris_connections_are_closed_after_the_header_timeout_while_healthz_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (_serving, base) = serve(
        dir.path(),
        "[api.connections]\nheader_read_timeout_secs = 2\nmax_connections_per_client = 1000\n",
    );
    let opened = Instant::now();
    let mut lorises = Vec::new();
    for i in 0..200 {
        let mut stream = TcpStream::connect(address(&base)).await.unwrap();
        if i % 2 == 0 {
            // Half start a request and never finish its head; half send nothing at all.
            stream
                .write_all(b"GET /graphql HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .await
                .unwrap();
        }
        lorises.push(stream);
    }
    // Meanwhile a real client is answered at once, on fresh connections.
    for _ in 0..5 {
        let asked = Instant::now();
        let health = reqwest::Client::new()
            .get(format!("{base}/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(health.status(), 200);
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "{:?}",
            asked.elapsed()
        );
    }
    for stream in &mut lorises {
        let sent = read_until_closed(stream).await;
        assert!(
            sent.is_empty() || sent.starts_with(b"HTTP/1.1 408"),
            "{}",
            String::from_utf8_lossy(&sent)
        );
    }
    let closed_after = opened.elapsed();
    assert!(
        closed_after >= Duration::from_secs(2),
        "closed by the 2 s timeout, not before: {closed_after:?}"
    );
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_over_its_connection_cap_is_refused_at_accept_until_it_closes_one() {
    let dir = tempfile::tempdir().unwrap();
    let (_serving, base) = serve(
        dir.path(),
        "[api.connections]\nmax_connections_per_client = 4\nheader_read_timeout_secs = 60\n",
    );
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(address(&base)).await.unwrap());
    }
    // Each of the four is served (a keep-alive request on each proves it is open).
    for stream in &mut held {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buffer = [0u8; 256];
        let n = stream.read(&mut buffer).await.unwrap();
        assert!(buffer[..n].starts_with(b"HTTP/1.1 200"));
    }
    let mut fifth = TcpStream::connect(address(&base)).await.unwrap();
    let refusal = String::from_utf8(read_until_closed(&mut fifth).await).unwrap();
    assert!(refusal.starts_with("HTTP/1.1 429"), "{refusal}");
    assert!(
        refusal.contains(
            "connection refused: 127.0.0.1 already holds 4 connections (at most 4 per client)"
        ),
        "{refusal}"
    );
    // Once one is closed, the client is served again.
    drop(held.pop());
    let deadline = Instant::now() + SAFETY;
    loop {
        let response = reqwest::Client::new()
            .get(format!("{base}/healthz"))
            .send()
            .await;
        match response {
            Ok(response) if response.status() == 200 => break,
            Ok(response) => assert_eq!(response.status(), 429, "refused, or served"),
            Err(_) => {}
        }
        assert!(Instant::now() < deadline, "the closed slot never came back");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_upload_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (_serving, base) = serve(
        dir.path(),
        "[api.connections]\nidle_timeout_secs = 1\nheader_read_timeout_secs = 30\n",
    );
    let mut stream = TcpStream::connect(address(&base)).await.unwrap();
    // The head is complete; the body promises 1,000 bytes and stops after 10.
    stream
        .write_all(
            b"POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n\
              content-length: 1000\r\n\r\n{\"query\":",
        )
        .await
        .unwrap();
    let stalled = Instant::now();
    let sent = read_until_closed(&mut stream).await;
    assert!(sent.is_empty(), "{}", String::from_utf8_lossy(&sent));
    let waited = stalled.elapsed();
    assert!(
        waited >= Duration::from_millis(900),
        "closed by the idle timeout, not before: {waited:?}"
    );
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
}

/// Statuses of `count` requests to `path` with `X-Forwarded-For: forwarded`, each on a
/// connection of its own.
async fn statuses(base: &str, path: &str, forwarded: &str, count: usize) -> Vec<u16> {
    let mut statuses = Vec::new();
    for _ in 0..count {
        let response = reqwest::Client::new()
            .get(format!("{base}{path}"))
            .header("x-forwarded-for", forwarded)
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    statuses
}

/// The 429 message of one more request to `path` forwarded for `forwarded`.
async fn refusal(base: &str, path: &str, forwarded: &str) -> String {
    let response = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .header("x-forwarded-for", forwarded)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_for_names_the_client_only_behind_a_trusted_proxy() {
    let limits = "requests_per_minute_per_client = 1\nclient_burst = 2\n";

    // Behind a trusted proxy (this test, on loopback): each forwarded client has its own
    // bucket, a spoofed hop left of the proxy's is not read, and the proxy's own connections
    // are not capped per client.
    let dir = tempfile::tempdir().unwrap();
    let (_proxied, base) = serve(
        dir.path(),
        &format!(
            "{limits}unlimited_clients = [\"198.51.100.9\"]\n\n[api.connections]\n\
             trusted_proxies = [\"127.0.0.0/8\"]\nmax_connections_per_client = 2\n"
        ),
    );
    assert_eq!(
        statuses(&base, "/status", "198.51.100.1", 2).await,
        [200, 200]
    );
    assert!(
        refusal(&base, "/status", "6.6.6.6, 198.51.100.1")
            .await
            .starts_with("rate limit for 198.51.100.1 exceeded; retry in ")
    );
    assert_eq!(
        statuses(&base, "/status", "198.51.100.2", 2).await,
        [200, 200]
    );
    // IPv6 clients by their /64: another address in the same /64 shares the bucket.
    assert_eq!(
        statuses(&base, "/status", "2001:db8:0:1::1", 2).await,
        [200, 200]
    );
    assert!(
        refusal(&base, "/status", "2001:db8:0:1::ffff")
            .await
            .starts_with("rate limit for 2001:db8:0:1::/64 exceeded")
    );
    // The /64s of one /48 share four clients' worth: three more /64s take the network's other
    // six requests, and a fifth /64, fresh as a client, is refused for its network.
    for subnet in 2..=4 {
        assert_eq!(
            statuses(&base, "/status", &format!("2001:db8:0:{subnet}::1"), 2).await,
            [200, 200]
        );
    }
    assert!(
        refusal(&base, "/status", "2001:db8:0:5::1")
            .await
            .starts_with("rate limit for network 2001:db8::/48 exceeded")
    );
    assert_eq!(
        statuses(&base, "/status", "2001:db8:1:5::1", 2).await,
        [200, 200],
        "another /48 has its own share"
    );
    // An unlimited client (an operator's own service) is never rate limited.
    assert_eq!(
        statuses(&base, "/status", "198.51.100.9", 6).await,
        [200; 6]
    );
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(address(&base)).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buffer = [0u8; 256];
        let n = stream.read(&mut buffer).await.unwrap();
        assert!(
            buffer[..n].starts_with(b"HTTP/1.1 200"),
            "a trusted proxy may hold more than the per-client cap"
        );
        held.push(stream);
    }

    // No trusted proxy: the header is the client's own word and ignored; every request is the
    // peer's, and /metrics is limited with the rest while /healthz never is.
    let dir = tempfile::tempdir().unwrap();
    let (_direct, base) = serve(dir.path(), limits);
    assert_eq!(
        statuses(&base, "/metrics", "198.51.100.1", 2).await,
        [200, 200]
    );
    assert!(
        refusal(&base, "/metrics", "198.51.100.2")
            .await
            .starts_with("rate limit for 127.0.0.1 exceeded; retry in ")
    );
    assert_eq!(
        statuses(&base, "/healthz", "198.51.100.3", 5).await,
        [200; 5],
        "health checks are never limited"
    );
}
