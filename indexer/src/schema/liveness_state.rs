//! What the prober saw of the endpoints agents declare: the endpoints each agent declares, each
//! endpoint's state and schedule, raw outcomes within the retention window and their daily
//! rollups after it, and each agent's summary that the API serves and filters on. This
//! instance's observations, not facts of the chains: no stage writes them and the canonical
//! dump leaves them out. See [`super`] for what a declaration holds.

super::tables! {
    /// The endpoints each agent declares, by kind (`liveness::Kind`).
    probe_targets [agent_key, kind, url] {
        agent_key: String,
        kind: String,
        url: String,
        /// registration | card | payment: where it was declared
        source: String,
        /// the protocol version declared for it, if any
        protocol_version: Option<String>,
    }

    /// Each endpoint's state, probed once however many agents declare it.
    probe_endpoints [kind, url] {
        kind: String,
        url: String,
        /// pending | up | degraded | down | blocked
        status: String,
        /// why it is not up (`liveness::Reason`)
        reason: Option<String>,
        error: Option<String>,
        /// probes in a row that were not up
        failures: i64,
        /// unix seconds
        checked_at: Option<i64>,
        next_probe_at: i64,
        /// random, drawn when added: endpoints due at once are taken in this order, so a page
        /// of them spreads over many hosts
        shuffle: i64,
        last_ok_at: Option<i64>,
        latency_ms: Option<i64>,
        http_status: Option<i64>,
        /// the protocol version it answered with
        protocol_version: Option<String>,
        /// JSON: what was seen (an MCP server's tools, an x402 resource's requirements)
        detail: Option<String>,
    }

    /// Every probe's outcome, kept for the retention window.
    probe_results [kind, url, checked_at] {
        kind: String,
        url: String,
        checked_at: i64,
        status: String,
        reason: Option<String>,
        latency_ms: Option<i64>,
        http_status: Option<i64>,
    }

    /// Outcomes past the retention window, a row per endpoint and UTC day.
    probe_daily [kind, url, day] {
        kind: String,
        url: String,
        /// unix seconds of the day's midnight, UTC
        day: i64,
        probes: i64,
        /// of which answered (up or degraded)
        answered: i64,
        latency_p50_ms: Option<i64>,
        latency_max_ms: Option<i64>,
    }

    /// Each agent's liveness over its endpoints, as the API serves it.
    agent_liveness [agent_key] {
        agent_key: String,
        /// up | degraded | down | unknown
        status: String,
        /// 1 when an endpoint answered at its last probe
        reachable: i64,
        /// unix seconds of the newest probe an endpoint answered
        last_seen: Option<i64>,
        checked_at: Option<i64>,
        uptime_24h: Option<f64>,
        uptime_7d: Option<f64>,
        latency_p50_ms: Option<i64>,
        /// 1 when an x402 resource answered 402 with a payTo that is the agent's wallet
        x402_live: i64,
        /// JSON: the x402 resources' requirements and whether each payTo is the agent's
        x402_detail: Option<String>,
        /// its card's authenticated extended card: challenged | fetched | missing | unanswered
        extended_card: Option<String>,
    }

    /// What each agent's endpoints showed they can do at their last probe: the tools its MCP
    /// servers listed (`mcp_tool`) and the skills of its authenticated extended card
    /// (`extended_skill`), each looked up by its lower-case key.
    agent_capabilities [agent_key, kind, key] {
        agent_key: String,
        /// mcp_tool | extended_skill
        kind: String,
        /// the tool's name or the skill's id, lower-case, for lookups
        key: String,
        name: String,
        description: Option<String>,
    }
}
