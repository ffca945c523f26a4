//! A loopback JSON-RPC proxy in front of anvil that misbehaves on purpose: 429s, timeouts,
//! dropped connections, "range too large" answers with and without a suggested range, and "too
//! many results". It speaks just enough HTTP/1.1 for a JSON-RPC client.

use alloy::transports::http::reqwest;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

/// What the proxy did, for the test to check every fault was exercised.
#[derive(Default, Debug)]
pub(crate) struct FaultCounts {
    pub(crate) forwarded: AtomicU64,
    pub(crate) rate_limited: AtomicU64,
    pub(crate) timed_out: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) range_with_hint: AtomicU64,
    pub(crate) range_without_hint: AtomicU64,
    pub(crate) too_many: AtomicU64,
}

/// Starts the proxy in front of `upstream`; `stall` must exceed the client's request timeout.
pub(crate) async fn start(
    upstream: String,
    seed: u64,
    stall: Duration,
) -> (String, Arc<FaultCounts>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let counts = Arc::new(FaultCounts::default());
    let rng = Arc::new(Mutex::new(StdRng::seed_from_u64(seed)));
    let client = reqwest::Client::new();
    let shared = counts.clone();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (client, upstream, rng, counts) = (
                client.clone(),
                upstream.clone(),
                rng.clone(),
                shared.clone(),
            );
            tokio::spawn(async move {
                let _ = serve(socket, client, &upstream, rng, counts, stall).await;
            });
        }
    });
    (url, counts)
}

async fn serve(
    mut socket: TcpStream,
    client: reqwest::Client,
    upstream: &str,
    rng: Arc<Mutex<StdRng>>,
    counts: Arc<FaultCounts>,
    stall: Duration,
) -> std::io::Result<()> {
    let body = read_request(&mut socket).await?;
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = request["method"].as_str().unwrap_or("").to_string();
    let id = request["id"].clone();
    let roll: u32 = rng.lock().await.random_range(0..100);

    // Range complaints for eth_getLogs spanning more than 4 blocks, each wording in turn.
    if method == "eth_getLogs" {
        let filter = &request["params"][0];
        let number = |v: &Value| {
            v.as_str()
                .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        };
        if let (Some(from), Some(to)) = (number(&filter["fromBlock"]), number(&filter["toBlock"]))
            && to - from + 1 > 4
        {
            let complaints = counts.range_with_hint.load(Ordering::Relaxed)
                + counts.range_without_hint.load(Ordering::Relaxed)
                + counts.too_many.load(Ordering::Relaxed);
            let message = match complaints % 3 {
                0 => {
                    counts.range_with_hint.fetch_add(1, Ordering::Relaxed);
                    format!(
                        "query exceeds max block range, try this block range [{from:#x}, {:#x}]",
                        from + 2
                    )
                }
                1 => {
                    counts.range_without_hint.fetch_add(1, Ordering::Relaxed);
                    "block range too large".to_string()
                }
                _ => {
                    counts.too_many.fetch_add(1, Ordering::Relaxed);
                    "query returned more than 10000 results".to_string()
                }
            };
            let error =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32005, "message": message}});
            return respond(&mut socket, 200, &error.to_string()).await;
        }
    }
    match roll {
        0..=9 => {
            counts.rate_limited.fetch_add(1, Ordering::Relaxed);
            respond(&mut socket, 429, "Too Many Requests").await
        }
        10..=14 => {
            counts.dropped.fetch_add(1, Ordering::Relaxed);
            socket.shutdown().await
        }
        15..=16 => {
            counts.timed_out.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(stall).await;
            Ok(())
        }
        _ => {
            counts.forwarded.fetch_add(1, Ordering::Relaxed);
            let answer = client
                .post(upstream)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map_err(std::io::Error::other)?
                .text()
                .await
                .map_err(std::io::Error::other)?;
            respond(&mut socket, 200, &answer).await
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let headers = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    Ok(buffer[header_end..].to_vec())
}

async fn respond(socket: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Error" };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}
