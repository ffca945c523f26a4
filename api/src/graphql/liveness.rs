//! `Agent.liveness`: what this instance's prober saw of the endpoints an agent declares. The
//! summary is the agent's `agent_liveness` row (through the row loader); its endpoints and MCP
//! tools come through the liveness loader. Observations of this instance, never part of the
//! reputation feed.

use super::loader_set::Loaders;
use crate::read::agent_rows::Cells;
use crate::read::liveness::EndpointRow;
use agentindex_indexer::schema::{agent_capabilities, agent_liveness};
use async_graphql::{Context, Enum, Object, Result, SimpleObject};
use serde::Deserialize;
use std::sync::Arc;

/// An agent's liveness over its endpoints.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub(crate) enum LivenessStatus {
    /// Every probed endpoint answered as its protocol says.
    Up,
    /// Some endpoints answered, or answered wrongly.
    Degraded,
    /// No endpoint answered.
    Down,
    /// Not probed yet.
    Unknown,
}

/// What the last probe of one endpoint found.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub(crate) enum EndpointStatus {
    /// Not probed yet.
    Pending,
    /// Answered as its protocol says.
    Up,
    /// Answered, but not as its protocol says.
    Degraded,
    /// Did not answer, or answered with a server error.
    Down,
    /// Not probed: the address rules refuse it or where it redirects.
    Blocked,
}

/// The kind of an endpoint, and so the question a probe asks it.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub(crate) enum EndpointKind {
    /// An A2A Agent Card, compared with the indexed one.
    #[graphql(name = "A2A_CARD")]
    A2aCard,
    /// An A2A JSON-RPC interface.
    #[graphql(name = "A2A_JSONRPC")]
    A2aJsonrpc,
    /// An A2A HTTP+JSON interface.
    #[graphql(name = "A2A_REST")]
    A2aRest,
    /// An MCP server (streamable HTTP).
    Mcp,
    /// An x402 resource.
    #[graphql(name = "X402")]
    X402,
    /// A web page.
    Web,
}

/// An agent's liveness as this instance's prober saw it.
pub(crate) struct Liveness {
    pub(crate) agent_key: String,
    pub(crate) row: Arc<Cells>,
}

#[Object]
impl Liveness {
    /// Up when every probed endpoint is up, degraded when some answered, down when none did.
    async fn status(&self) -> LivenessStatus {
        match self.row.text(agent_liveness::status) {
            Some("up") => LivenessStatus::Up,
            Some("degraded") => LivenessStatus::Degraded,
            Some("down") => LivenessStatus::Down,
            _ => LivenessStatus::Unknown,
        }
    }

    /// Whether an endpoint answered at its last probe.
    async fn reachable(&self) -> bool {
        self.row.integer(agent_liveness::reachable) == Some(1)
    }

    /// When an endpoint last answered (unix seconds).
    async fn last_seen(&self) -> Option<i64> {
        self.row.integer(agent_liveness::last_seen)
    }

    /// When an endpoint was last probed (unix seconds).
    async fn checked_at(&self) -> Option<i64> {
        self.row.integer(agent_liveness::checked_at)
    }

    /// The share of probes answered over the last 24 hours (0 to 1).
    #[graphql(name = "uptime24h")]
    async fn uptime_24h(&self) -> Option<f64> {
        self.row.real(agent_liveness::uptime_24h)
    }

    /// The share of probes answered over the last 7 days (0 to 1).
    #[graphql(name = "uptime7d")]
    async fn uptime_7d(&self) -> Option<f64> {
        self.row.real(agent_liveness::uptime_7d)
    }

    /// The median latency of the probes answered over the last 24 hours, in milliseconds.
    async fn latency_p50(&self) -> Option<i64> {
        self.row.integer(agent_liveness::latency_p50_ms)
    }

    /// Each endpoint the agent declares, with its last probe.
    async fn endpoints(&self, ctx: &Context<'_>) -> Result<Vec<LivenessEndpoint>> {
        let probes = ctx
            .data_unchecked::<Loaders>()
            .liveness
            .load_one(self.agent_key.clone())
            .await?;
        Ok(probes
            .map(|p| p.endpoints.into_iter().map(LivenessEndpoint).collect())
            .unwrap_or_default())
    }

    /// The tools the agent's MCP servers listed at their last probe.
    async fn mcp_tools(&self, ctx: &Context<'_>) -> Result<Vec<McpTool>> {
        Ok(self
            .capabilities(ctx, "mcp_tool")
            .await?
            .into_iter()
            .map(|tool| McpTool {
                name: tool.name,
                description: tool.description,
            })
            .collect())
    }

    /// What asking for its card's authenticated extended card found: `challenged` (the server
    /// asks for credentials: it has one), `fetched` (with this instance's credentials for the
    /// host), `missing` (claimed, not served) or `unanswered`; null when no card claims one.
    async fn extended_card(&self) -> Option<&str> {
        self.row.text(agent_liveness::extended_card)
    }

    /// The skills of its extended card, when one was fetched: beside the public card's, not
    /// among them.
    async fn extended_skills(&self, ctx: &Context<'_>) -> Result<Vec<ExtendedSkill>> {
        Ok(self
            .capabilities(ctx, "extended_skill")
            .await?
            .into_iter()
            .map(|skill| ExtendedSkill {
                id: skill.key,
                name: skill.name,
                description: skill.description,
            })
            .collect())
    }

    /// Its x402 resources as probed: live when one answered 402 asking to be paid to the
    /// agent's on-chain wallet or payment address.
    async fn x402_live(&self) -> Result<X402Live> {
        let resources: Vec<X402Resource> = match self.row.text(agent_liveness::x402_detail) {
            Some(text) => serde_json::from_str::<Vec<StoredResource>>(text)
                .map_err(|error| {
                    async_graphql::Error::new(format!(
                        "agent_liveness.x402_detail does not read back: {error}"
                    ))
                })?
                .into_iter()
                .map(StoredResource::served)
                .collect(),
            None => Vec::new(),
        };
        Ok(X402Live {
            live: self.row.integer(agent_liveness::x402_live) == Some(1),
            resources,
        })
    }
}

impl Liveness {
    /// What the agent's endpoints showed it can do, of `kind`, through the liveness loader.
    async fn capabilities(
        &self,
        ctx: &Context<'_>,
        kind: &str,
    ) -> Result<Vec<agent_capabilities::Row>> {
        let probes = ctx
            .data_unchecked::<Loaders>()
            .liveness
            .load_one(self.agent_key.clone())
            .await?;
        Ok(probes
            .map(|p| {
                p.capabilities
                    .into_iter()
                    .filter(|c| c.kind == kind)
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// One endpoint an agent declares, with its last probe.
pub(crate) struct LivenessEndpoint(EndpointRow);

#[Object]
impl LivenessEndpoint {
    /// What kind of endpoint.
    async fn kind(&self) -> Option<EndpointKind> {
        Some(match self.0.kind.as_str() {
            "a2a_card" => EndpointKind::A2aCard,
            "a2a_jsonrpc" => EndpointKind::A2aJsonrpc,
            "a2a_rest" => EndpointKind::A2aRest,
            "mcp" => EndpointKind::Mcp,
            "x402" => EndpointKind::X402,
            "web" => EndpointKind::Web,
            _ => return None,
        })
    }

    /// Its URL.
    async fn url(&self) -> &str {
        &self.0.url
    }

    /// Where the agent declares it: `card`, `registration` or `payment`.
    async fn source(&self) -> &str {
        &self.0.source
    }

    /// What its last probe found.
    async fn status(&self) -> EndpointStatus {
        match self.0.status.as_str() {
            "up" => EndpointStatus::Up,
            "degraded" => EndpointStatus::Degraded,
            "down" => EndpointStatus::Down,
            "blocked" => EndpointStatus::Blocked,
            _ => EndpointStatus::Pending,
        }
    }

    /// When it was last probed (unix seconds).
    async fn checked_at(&self) -> Option<i64> {
        self.0.checked_at
    }

    /// When it is probed next (unix seconds).
    async fn next_check_at(&self) -> i64 {
        self.0.next_probe_at
    }

    /// When it last answered (unix seconds).
    async fn last_ok_at(&self) -> Option<i64> {
        self.0.last_ok_at
    }

    /// Milliseconds until its last answer.
    async fn latency_ms(&self) -> Option<i64> {
        self.0.latency_ms
    }

    /// The HTTP status of its last answer.
    async fn http_status(&self) -> Option<i64> {
        self.0.http_status
    }

    /// The protocol version it answered with, else the one declared.
    async fn protocol_version(&self) -> Option<&str> {
        self.0.protocol_version.as_deref()
    }

    /// Why it is not up, as a class: `timeout`, `connect`, `blocked`, `http_status`,
    /// `protocol`, `card_differs`, `too_large`, `redirect` or `unsupported`.
    async fn reason(&self) -> Option<&str> {
        self.0.reason.as_deref()
    }

    /// What went wrong, in words.
    async fn error(&self) -> Option<&str> {
        self.0.error.as_deref()
    }
}

/// A tool an MCP server of the agent listed.
#[derive(SimpleObject)]
pub(crate) struct McpTool {
    /// Its name.
    name: String,
    /// Its description.
    description: Option<String>,
}

/// A skill of an agent's authenticated extended card.
#[derive(SimpleObject)]
pub(crate) struct ExtendedSkill {
    /// Its id (what the `extendedSkill` filter matches, any case).
    id: String,
    /// Its name.
    name: String,
    /// What it does.
    description: Option<String>,
}

/// An agent's x402 resources as probed.
#[derive(SimpleObject)]
pub(crate) struct X402Live {
    /// Whether a resource answered 402 asking to be paid to the agent's own wallet.
    live: bool,
    /// Each resource probed.
    resources: Vec<X402Resource>,
}

/// One x402 resource as probed.
#[derive(SimpleObject)]
pub(crate) struct X402Resource {
    /// Its URL.
    url: String,
    /// What its last probe found.
    status: Option<String>,
    /// When (unix seconds).
    checked_at: Option<i64>,
    /// Whether a `payTo` of its 402 is the agent's wallet (unknown until it answered 402).
    wallet_matches: Option<bool>,
    /// Answered 402 asking to be paid to the agent's wallet.
    live: bool,
    /// Its payment requirements.
    accepts: Vec<X402Accept>,
}

/// One payment requirement of an x402 resource's 402.
#[derive(SimpleObject, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct X402Accept {
    /// `exact`, …
    scheme: Option<String>,
    /// The network, as the server names it.
    network: Option<String>,
    /// The token contract.
    asset: Option<String>,
    /// The amount, in the token's smallest unit.
    amount: Option<String>,
    /// Who is paid.
    pay_to: Option<String>,
}

/// A resource as the store keeps it in `agent_liveness.x402_detail`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredResource {
    url: String,
    status: Option<String>,
    checked_at: Option<i64>,
    wallet_matches: Option<bool>,
    #[serde(default)]
    live: bool,
    #[serde(default)]
    accepts: Vec<X402Accept>,
}

impl StoredResource {
    fn served(self) -> X402Resource {
        X402Resource {
            url: self.url,
            status: self.status,
            checked_at: self.checked_at,
            wallet_matches: self.wallet_matches,
            live: self.live,
            accepts: self.accepts,
        }
    }
}
