//! Endpoint liveness: whether the endpoints an agent declares answer, each with the protocol
//! it declares. One probe asks one endpoint a harmless question and reads the reply
//! ([`Prober::probe`]): an A2A card fetched and compared with the indexed one (`a2a.rs`), and
//! its authenticated extended card asked for when it claims one (`extended_card.rs`), an
//! A2A JSON-RPC or HTTP+JSON interface asked for a task that does not exist, an MCP server's
//! `initialize` and `tools/list` (`mcp.rs`), an x402 resource's unpaid answer with its payment
//! requirements (`x402.rs`), a web page's status (`web.rs`). When each endpoint is probed next
//! is `schedule.rs`; uptime and latency over a window of outcomes `rollup.rs`.
//!
//! Probes go through the documents' [`Fetcher`](crate::documents::Fetcher): the same address
//! rules on every hop, a per-host interval and a global budget. They never pay and send nothing
//! of anyone's: only the protocol's own discovery calls, with made-up ids.

mod a2a;
pub mod clean;
mod dispatch;
mod extended_card;
mod jsonrpc;
mod mcp;
mod policy;
mod prober;
pub mod rollup;
pub mod schedule;
pub mod summary;
mod web;
mod x402;

pub use policy::{LivenessPolicy, user_agent};
pub use prober::Prober;

use serde::{Deserialize, Serialize};

/// What kind of endpoint, and so which question a probe asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An A2A Agent Card URL: fetched and compared with the indexed card.
    A2aCard,
    /// An A2A interface with the JSON-RPC binding.
    A2aJsonrpc,
    /// An A2A interface with the HTTP+JSON (REST) binding.
    A2aRest,
    /// An MCP server over streamable HTTP.
    Mcp,
    /// An x402 resource: answers an unpaid request with 402 and its payment requirements.
    X402,
    /// A plain web endpoint: reachable or not.
    Web,
}

impl Kind {
    /// Every kind, in the order they are listed.
    pub const ALL: [Kind; 6] = [
        Kind::A2aCard,
        Kind::A2aJsonrpc,
        Kind::A2aRest,
        Kind::Mcp,
        Kind::X402,
        Kind::Web,
    ];

    /// Its name as stored and served.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::A2aCard => "a2a_card",
            Kind::A2aJsonrpc => "a2a_jsonrpc",
            Kind::A2aRest => "a2a_rest",
            Kind::Mcp => "mcp",
            Kind::X402 => "x402",
            Kind::Web => "web",
        }
    }

    /// The kind stored as `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// What a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Answered as its protocol says.
    Up,
    /// Answered, but not as its protocol says (a card other than the indexed one, an unknown
    /// JSON-RPC error, a resource that asks for no payment).
    Degraded,
    /// Did not answer, or answered with a server error.
    Down,
    /// Not probed: the address rules refuse where it is or where it redirects.
    Blocked,
}

impl Status {
    /// Its name as stored and served.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Up => "up",
            Status::Degraded => "degraded",
            Status::Down => "down",
            Status::Blocked => "blocked",
        }
    }

    /// The status stored as `name`; `None` for anything else (`pending`: never probed).
    pub fn parse(name: &str) -> Option<Status> {
        [Status::Up, Status::Degraded, Status::Down, Status::Blocked]
            .into_iter()
            .find(|status| status.as_str() == name)
    }

    /// Whether the endpoint answered at all (up or degraded).
    pub fn answered(self) -> bool {
        matches!(self, Status::Up | Status::Degraded)
    }
}

/// What went wrong, in classes a dashboard can count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No complete answer in time.
    Timeout,
    /// Could not connect, or the connection failed.
    Connect,
    /// The address rules refused the host or a redirect's.
    Blocked,
    /// An HTTP status the protocol does not answer with.
    HttpStatus,
    /// An answer that is not the protocol's.
    Protocol,
    /// The card served is not the one indexed.
    CardDiffers,
    /// A body over the size cap.
    TooLarge,
    /// Redirected where the probe does not follow, or in a loop.
    Redirect,
    /// A URL the prober does not fetch (scheme).
    Unsupported,
}

impl Reason {
    /// Its name as stored and served.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Timeout => "timeout",
            Reason::Connect => "connect",
            Reason::Blocked => "blocked",
            Reason::HttpStatus => "http_status",
            Reason::Protocol => "protocol",
            Reason::CardDiffers => "card_differs",
            Reason::TooLarge => "too_large",
            Reason::Redirect => "redirect",
            Reason::Unsupported => "unsupported",
        }
    }
}

/// One endpoint to probe, with what its answer is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// What it is.
    pub kind: Kind,
    /// Where.
    pub url: String,
    /// The protocol version declared for it (an A2A interface's), if any.
    pub protocol_version: Option<String>,
    /// For a card: the indexed card's bytes, to compare the served one with.
    pub indexed_card: Option<Vec<u8>>,
    /// For an x402 resource: the wallets its `payTo` should be one of (the agent's on-chain
    /// wallet, else its payment address), lower-case.
    pub wallets: Vec<String>,
}

impl Target {
    /// A target with nothing to compare with.
    pub fn new(kind: Kind, url: impl Into<String>) -> Self {
        Self {
            kind,
            url: url.into(),
            protocol_version: None,
            indexed_card: None,
            wallets: Vec::new(),
        }
    }
}

/// What one probe of one endpoint saw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The endpoint's kind.
    pub kind: Kind,
    /// The endpoint.
    pub url: String,
    /// What was found.
    pub status: Status,
    /// Why it is not up, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// What went wrong, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Milliseconds until the first answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<i64>,
    /// The HTTP status of the (last) answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The protocol version the endpoint answered with (MCP's negotiated version), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// What was seen, by kind: an MCP server's name and tools, an x402 resource's
    /// requirements, the JSON-RPC error an A2A interface answered.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

impl Outcome {
    /// An outcome of `target` with `status` and nothing else known yet.
    pub(crate) fn of(target: &Target, status: Status) -> Self {
        Self {
            kind: target.kind,
            url: target.url.clone(),
            status,
            reason: None,
            error: None,
            latency_ms: None,
            http_status: None,
            protocol_version: None,
            detail: serde_json::Value::Null,
        }
    }

    /// The same, not up for `reason`, said in `error`.
    pub(crate) fn failed(
        mut self,
        status: Status,
        reason: Reason,
        error: impl Into<String>,
    ) -> Self {
        self.status = status;
        self.reason = Some(reason);
        self.error = Some(error.into());
        self
    }
}
