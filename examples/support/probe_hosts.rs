//! The hosts the liveness benchmark's endpoints live on, every one on loopback: live hosts
//! (tiny HTTP servers bound to 127.2.0.k that answer a web page's GET with 200 and speak just
//! enough MCP over HTTP for a probe to list their tools) and silent hosts (127.3.x.y: they
//! accept a connection and never answer, as a hung or half-firewalled server does, so the probe
//! waits out its timeout). Each records when every request (for a silent host, every
//! connection) arrived, whether it began a probe (a page's GET, MCP's `initialize`; the rest of
//! an MCP probe's requests follow it in a row) and how many it had in flight at once. Dead
//! hosts need nothing here: nothing listens at their address (`probe_layout.rs`).

#![allow(dead_code)]

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// How long a live host takes to answer: long enough that two requests to one host at once
/// would overlap and be counted.
const ANSWER_DELAY: Duration = Duration::from_millis(50);

/// What one host saw.
#[derive(Default)]
pub(crate) struct HostLog {
    /// When each request arrived, and whether it began a probe.
    arrivals: Mutex<Vec<(Instant, bool)>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

/// One request (or connection) in flight at a host, counted until dropped (answered, or given
/// up on by the client).
struct InFlight<'a>(&'a HostLog);

impl<'a> InFlight<'a> {
    fn enter(log: &'a HostLog, starts_probe: bool) -> Self {
        log.arrivals
            .lock()
            .expect("never poisoned")
            .push((Instant::now(), starts_probe));
        let now = log.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        log.most_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(log)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl HostLog {
    /// Requests (connections) so far.
    pub(crate) fn count(&self) -> usize {
        self.arrivals.lock().expect("never poisoned").len()
    }

    /// The most requests (connections) it had in flight at once.
    pub(crate) fn most_in_flight(&self) -> usize {
        self.most_in_flight.load(Ordering::SeqCst)
    }

    /// Probes so far (their first requests).
    pub(crate) fn probes(&self) -> usize {
        (self.arrivals.lock().expect("never poisoned").iter())
            .filter(|(_, starts)| *starts)
            .count()
    }

    /// The gaps between two requests in a row, or between two probes' first requests.
    fn gaps(&self, probes_only: bool) -> Vec<Duration> {
        let mut arrivals: Vec<Instant> = (self.arrivals.lock().expect("never poisoned").iter())
            .filter(|(_, starts)| *starts || !probes_only)
            .map(|(at, _)| *at)
            .collect();
        arrivals.sort();
        arrivals.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

/// A host listening on loopback, with what it saw.
pub(crate) struct Host {
    pub(crate) address: SocketAddr,
    pub(crate) log: Arc<HostLog>,
}

/// A listener on `ip` (any free port), to be served on another runtime than the caller's.
fn listen(ip: Ipv4Addr) -> anyhow::Result<(std::net::TcpListener, SocketAddr)> {
    let listener = std::net::TcpListener::bind((ip, 0))?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    Ok((listener, address))
}

/// Starts a live host on `ip` (any free port), served on the runtime `on`.
pub(crate) fn start_live(on: &tokio::runtime::Handle, ip: Ipv4Addr) -> anyhow::Result<Host> {
    let (listener, address) = listen(ip)?;
    let log = Arc::new(HostLog::default());
    let app = axum::Router::new().fallback(answer).with_state(log.clone());
    on.spawn(async move {
        if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
            let _ = axum::serve(listener, app).await;
        }
    });
    Ok(Host { address, log })
}

/// A live host's answer: a page for GET, an MCP reply for POST, 200 for an MCP session's
/// DELETE.
async fn answer(State(log): State<Arc<HostLog>>, method: Method, body: Bytes) -> Response {
    let starts_probe = method == Method::GET
        || (method == Method::POST
            && serde_json::from_slice::<Value>(&body).is_ok_and(|m| m["method"] == "initialize"));
    let _in_flight = InFlight::enter(&log, starts_probe);
    tokio::time::sleep(ANSWER_DELAY).await;
    match method {
        Method::POST => mcp(&body),
        Method::DELETE => StatusCode::OK.into_response(),
        _ => (
            [(header::CONTENT_TYPE, "text/html")],
            "<!doctype html><title>agent</title><p>up</p>",
        )
            .into_response(),
    }
}

/// The reply to one MCP message: `initialize` (with tools), `tools/list` (one tool), a
/// notification accepted, anything else an error.
fn mcp(body: &[u8]) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let id = message["id"].clone();
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "liveness-bench", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [{"name": "echo", "description": "Says it back"}]}),
        Some(_) if id.is_null() => return StatusCode::ACCEPTED.into_response(),
        _ => {
            return Json(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "no such method"},
            }))
            .into_response();
        }
    };
    (
        [("mcp-session-id", "liveness-bench")],
        Json(json!({"jsonrpc": "2.0", "id": id, "result": result})),
    )
        .into_response()
}

/// Starts a silent host on `ip` (any free port), served on the runtime `on`: it accepts
/// connections, reads what it is sent and never answers; a connection counts as in flight
/// until the client closes it.
pub(crate) fn start_silent(on: &tokio::runtime::Handle, ip: Ipv4Addr) -> anyhow::Result<Host> {
    let (listener, address) = listen(ip)?;
    let log = Arc::new(HostLog::default());
    let kept = log.clone();
    on.spawn(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let log = kept.clone();
            tokio::spawn(async move {
                let _open = InFlight::enter(&log, true);
                let mut sink = [0u8; 1024];
                while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
            });
        }
    });
    Ok(Host { address, log })
}

/// The per-host figures of `hosts` together.
pub(crate) struct PerHost {
    pub(crate) requests: usize,
    /// Probes (their first requests).
    pub(crate) probes: usize,
    /// The smallest gap between two probes of one host, those under `interval`, and those
    /// more than 1% under it. A gap a few milliseconds short is how a host sees two probes the
    /// worker started an interval apart when the first one's request took longer to arrive (a
    /// new connection, the other one reused).
    pub(crate) smallest_probe_gap: Option<Duration>,
    pub(crate) probe_gaps_under: usize,
    pub(crate) probe_gaps_well_under: usize,
    /// The smallest gap between any two requests to one host (a probe's own go in a row).
    pub(crate) smallest_gap: Option<Duration>,
    /// The most requests in flight at one host at once.
    pub(crate) most_in_flight: usize,
}

/// [`PerHost`] over `hosts`, against `interval`.
pub(crate) fn per_host(hosts: &[Host], interval: Duration) -> PerHost {
    let probe_gaps: Vec<Duration> = hosts.iter().flat_map(|h| h.log.gaps(true)).collect();
    PerHost {
        requests: hosts.iter().map(|h| h.log.count()).sum(),
        probes: hosts.iter().map(|h| h.log.probes()).sum(),
        smallest_probe_gap: probe_gaps.iter().min().copied(),
        probe_gaps_under: probe_gaps.iter().filter(|g| **g < interval).count(),
        probe_gaps_well_under: (probe_gaps.iter())
            .filter(|g| **g < interval.mul_f64(0.99))
            .count(),
        smallest_gap: hosts.iter().flat_map(|h| h.log.gaps(false)).min(),
        most_in_flight: hosts
            .iter()
            .map(|h| h.log.most_in_flight())
            .max()
            .unwrap_or(0),
    }
}
