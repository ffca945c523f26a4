//! What the prober saw of many agents at once, for the liveness DataLoader: each agent's
//! endpoints with their last probe (`probe_targets` joined to `probe_endpoints`) and the tools
//! its MCP servers listed (`agent_capabilities`). The per-agent summary is a declared per-agent
//! row, read through the row loader.

use agentindex_indexer::schema::{agent_capabilities, probe_endpoints, probe_targets};
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::push_in;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// Keys bound per statement.
const KEYS_PER_STATEMENT: usize = 500;

/// One endpoint an agent declares, with its last probe.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct EndpointRow {
    pub(crate) agent_key: String,
    pub(crate) kind: String,
    pub(crate) url: String,
    pub(crate) source: String,
    pub(crate) status: String,
    pub(crate) reason: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) checked_at: Option<i64>,
    pub(crate) next_probe_at: i64,
    pub(crate) last_ok_at: Option<i64>,
    pub(crate) latency_ms: Option<i64>,
    pub(crate) http_status: Option<i64>,
    pub(crate) protocol_version: Option<String>,
}

/// What the prober saw of one agent.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AgentProbes {
    /// Its endpoints, by kind and URL.
    pub(crate) endpoints: Vec<EndpointRow>,
    /// What its endpoints showed it can do (MCP tools, extended-card skills), by kind and key.
    pub(crate) capabilities: Vec<agent_capabilities::Row>,
}

/// What the prober saw of each of `keys` that declares an endpoint.
pub(crate) async fn of_agents(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, AgentProbes>> {
    let mut out: HashMap<String, AgentProbes> = HashMap::new();
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let endpoints: Vec<EndpointRow> = over(
            pool,
            format!(
                "SELECT t.agent_key, t.kind, t.url, t.source, e.status, e.reason, e.error,
                   e.checked_at, e.next_probe_at, e.last_ok_at, e.latency_ms, e.http_status,
                   coalesce(e.protocol_version, t.protocol_version) AS protocol_version
                 FROM {targets} t JOIN {endpoints} e ON e.kind = t.kind AND e.url = t.url
                 WHERE t.agent_key",
                targets = probe_targets::NAME,
                endpoints = probe_endpoints::NAME,
            ),
            chunk,
            "ORDER BY t.agent_key, t.kind, t.url",
        )
        .build_query_as()
        .fetch_all(pool)
        .await?;
        for row in endpoints {
            out.entry(row.agent_key.clone())
                .or_default()
                .endpoints
                .push(row);
        }
        let capabilities: Vec<agent_capabilities::Row> = over(
            pool,
            format!(
                "SELECT {columns} FROM {capabilities} WHERE agent_key",
                columns = agent_capabilities::TABLE.column_list(),
                capabilities = agent_capabilities::NAME,
            ),
            chunk,
            "ORDER BY agent_key, kind, key",
        )
        .build_query_as()
        .fetch_all(pool)
        .await?;
        for row in capabilities {
            out.entry(row.agent_key.clone())
                .or_default()
                .capabilities
                .push(row);
        }
    }
    Ok(out)
}

/// `head`, ` IN (keys…)` (padded: [`push_in`]), then `tail`, written for `pool`'s database.
fn over<'a>(pool: &AnyPool, head: String, keys: &'a [String], tail: &str) -> QueryBuilder<'a, Any> {
    let mut query = QueryBuilder::<Any>::new(head);
    push_in(&mut query, keys.iter().map(String::as_str));
    query.push(tail);
    Dialect::of_pool(pool).portable(query)
}
