//! A small HTTP/1.1 server on loopback that serves documents the way real and hostile hosts do:
//! plain bodies, errors, redirects, bodies that never end or trickle in, huge declared lengths,
//! and conditional answers. Written by hand rather than with a framework so a test controls
//! every byte, including the misbehaving ones.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the server answers one path.
#[derive(Debug, Clone)]
pub(crate) enum Route {
    /// 200 with this body and content type.
    Body(&'static str, Vec<u8>),
    /// This status and no body.
    Status(u16),
    /// 302 to this location.
    Redirect(String),
    /// 200 with an ETag; 304 when the request carries it.
    Tagged(&'static str, Vec<u8>),
    /// 200 whose body trickles a byte every interval, forever.
    Trickle(Duration),
    /// 200 whose body never ends (no length, endless chunks).
    Endless,
    /// 200 that declares a huge Content-Length.
    HugeLength,
    /// This status after this wait (a server that answers slowly).
    Slow(Duration, u16),
    /// Each request the next of these statuses, round and round (a server that flaps).
    Cycle(Vec<u16>),
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// Its path.
    pub(crate) path: String,
    /// When its head arrived.
    pub(crate) at: std::time::Instant,
    /// Its `User-Agent`, if any.
    pub(crate) user_agent: Option<String>,
}

/// A running server; routes can be added while it runs.
#[derive(Clone)]
pub(crate) struct DocServer {
    pub(crate) base: String,
    routes: Arc<std::sync::Mutex<HashMap<String, Route>>>,
    hits: Arc<std::sync::Mutex<HashMap<String, Arc<AtomicU64>>>>,
    seen: Arc<std::sync::Mutex<Vec<Seen>>>,
    in_flight: Arc<AtomicU64>,
    most_in_flight: Arc<AtomicU64>,
}

impl DocServer {
    /// Starts a server on 127.0.0.1 and a free port.
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = Self {
            base: format!("http://{}", listener.local_addr().unwrap()),
            routes: Arc::default(),
            hits: Arc::default(),
            seen: Arc::default(),
            in_flight: Arc::default(),
            most_in_flight: Arc::default(),
        };
        let handle = server.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let handle = handle.clone();
                tokio::spawn(async move {
                    let now = handle.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    handle.most_in_flight.fetch_max(now, Ordering::SeqCst);
                    let _ = handle.answer(socket).await;
                    handle.in_flight.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        server
    }

    /// Serves `route` at `path`.
    pub(crate) fn route(&self, path: &str, route: Route) -> String {
        self.routes.lock().unwrap().insert(path.to_string(), route);
        format!("{}{path}", self.base)
    }

    /// Every request so far, in the order their heads arrived.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The most requests the server was answering at once (since the last reset).
    pub(crate) fn most_in_flight(&self) -> u64 {
        self.most_in_flight.load(Ordering::SeqCst)
    }

    /// Starts counting [`most_in_flight`](Self::most_in_flight) again.
    pub(crate) fn reset_most_in_flight(&self) {
        self.most_in_flight.store(0, Ordering::SeqCst);
    }

    /// Requests `path` has received.
    pub(crate) fn hits(&self, path: &str) -> u64 {
        self.hits
            .lock()
            .unwrap()
            .get(path)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    async fn answer(&self, mut socket: TcpStream) -> std::io::Result<()> {
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buffer).await?;
            if n == 0 {
                return Ok(());
            }
            request.extend_from_slice(&buffer[..n]);
        }
        let head = String::from_utf8_lossy(&request).to_string();
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let user_agent = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("user-agent")
                .then(|| value.trim().to_string())
        });
        self.seen.lock().unwrap().push(Seen {
            path: path.clone(),
            at: std::time::Instant::now(),
            user_agent,
        });
        let hit = self
            .hits
            .lock()
            .unwrap()
            .entry(path.clone())
            .or_default()
            .fetch_add(1, Ordering::Relaxed)
            + 1;
        let route = self.routes.lock().unwrap().get(&path).cloned();
        match route {
            None => write(&mut socket, 404, &[], b"").await,
            Some(Route::Body(kind, body)) => {
                write(
                    &mut socket,
                    200,
                    &[("Content-Type", kind.to_string())],
                    &body,
                )
                .await
            }
            Some(Route::Status(code)) => write(&mut socket, code, &[], b"").await,
            Some(Route::Redirect(to)) => write(&mut socket, 302, &[("Location", to)], b"").await,
            Some(Route::Tagged(etag, body)) => {
                let lower = head.to_ascii_lowercase();
                if lower.contains(&format!("if-none-match: {}", etag.to_ascii_lowercase())) {
                    write(&mut socket, 304, &[("ETag", etag.to_string())], b"").await
                } else {
                    write(&mut socket, 200, &[("ETag", etag.to_string())], &body).await
                }
            }
            Some(Route::Trickle(every)) => {
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{")
                    .await?;
                loop {
                    tokio::time::sleep(every).await;
                    socket.write_all(b" ").await?;
                }
            }
            Some(Route::Endless) => {
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .await?;
                let chunk = format!("{:x}\r\n{}\r\n", 8192, "a".repeat(8192));
                loop {
                    socket.write_all(chunk.as_bytes()).await?;
                }
            }
            Some(Route::Slow(wait, status)) => {
                tokio::time::sleep(wait).await;
                write(&mut socket, status, &[], b"ok").await
            }
            Some(Route::Cycle(statuses)) => {
                let status = statuses[(hit as usize - 1) % statuses.len()];
                write(&mut socket, status, &[], b"ok").await
            }
            Some(Route::HugeLength) => {
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n{}")
                    .await
            }
        }
    }
}

async fn write(
    socket: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body).await?;
    socket.shutdown().await
}
