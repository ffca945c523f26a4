//! The real SDK servers the liveness tests probe (`tools/liveness/`: the A2A Python SDK, the MCP
//! Python and TypeScript SDKs, an x402 resource server from the `x402` package), each started
//! on a loopback port and stopped when dropped (or when the test process dies: they exit when
//! their stdin closes), and a prober policy that may reach loopback.

use agentindex_indexer::config::{HostCredential, LivenessConfig};
use agentindex_indexer::documents::FetchPolicy;
use agentindex_indexer::engine::ProbeWorker;
use agentindex_indexer::liveness::LivenessPolicy;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};

fn tools() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tools"))
}

/// A running SDK server: killed on drop, and gone by itself when the test process dies (its
/// stdin closes).
pub(crate) struct SdkServer {
    child: Child,
    _stdin: ChildStdin,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

impl SdkServer {
    /// Stops the server and waits until it is gone.
    pub(crate) async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

async fn start(mut command: Command, what: &str) -> SdkServer {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what} (run scripts/install-tools): {e}"));
    let stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("{what} printed no port within a minute"))
        .unwrap()
        .unwrap_or_else(|| panic!("{what} ended before printing its port"));
    SdkServer {
        child,
        _stdin: stdin,
        base: format!("http://127.0.0.1:{}", port.trim()),
    }
}

fn python(script: &str) -> Command {
    let mut command = Command::new(tools().join(".venv/bin/python"));
    command.arg(tools().join("liveness").join(script));
    command
}

/// An A2A agent of the A2A Python SDK: its card at `/.well-known/agent-card.json`, JSON-RPC at
/// `/`.
pub(crate) async fn a2a(name: &str) -> SdkServer {
    a2a_with(name, &[]).await
}

/// [`a2a`] with more arguments: `--extended-token TOKEN` serves an authenticated extended card
/// (one more skill, `premium_translate`) to `Bearer TOKEN`; `--claim-extended-card` claims one
/// without serving it.
pub(crate) async fn a2a_with(name: &str, args: &[&str]) -> SdkServer {
    let mut command = python("a2a_server.py");
    command.args(["--name", name]).args(args);
    start(command, "the A2A SDK server").await
}

/// An MCP server of the MCP Python SDK at `/mcp` (streamable HTTP, sessions, event streams).
pub(crate) async fn mcp_python(name: &str) -> SdkServer {
    let mut command = python("mcp_server.py");
    command.args(["--name", name]);
    start(command, "the MCP Python SDK server").await
}

/// An MCP server of the MCP TypeScript SDK at `/mcp`.
pub(crate) async fn mcp_js(name: &str) -> SdkServer {
    let mut command = Command::new("node");
    command
        .arg(tools().join("liveness/mcp-server.mjs"))
        .args(["--name", name]);
    start(command, "the MCP TypeScript SDK server").await
}

/// An x402 resource server of the `x402` package, its paid route at `/translate`, paid to
/// `pay_to`.
pub(crate) async fn x402(pay_to: &str) -> SdkServer {
    let mut command = python("x402_server.py");
    command.args(["--pay-to", pay_to]);
    start(command, "the x402 resource server").await
}

/// The shipped liveness settings, with loopback and plain http open (as `[documents]` would
/// open them for a local test) and `interval` between two requests to one host.
pub(crate) fn local_policy(interval: Duration) -> LivenessPolicy {
    local_policy_with(interval, Vec::new())
}

/// [`local_policy`] with `credentials` for extended cards.
pub(crate) fn local_policy_with(
    interval: Duration,
    credentials: Vec<HostCredential>,
) -> LivenessPolicy {
    let liveness = LivenessConfig {
        min_interval_per_host_ms: interval.as_millis() as u64,
        requests_per_minute: 6_000,
        timeout_secs: 3,
        contact_url: "https://operator.example/about-probes".into(),
        credentials,
        ..LivenessConfig::default()
    };
    let documents = FetchPolicy {
        allow_private: true,
        allow_http: true,
        ..FetchPolicy::default()
    };
    LivenessPolicy::from_parts(&liveness, documents)
}

/// Steps the worker until nothing is due.
pub(crate) async fn probe_all(worker: &mut ProbeWorker) -> usize {
    let mut probed = 0;
    loop {
        let outcome = worker.step().await.unwrap();
        if outcome.probed == 0 {
            return probed;
        }
        probed += outcome.probed;
    }
}
