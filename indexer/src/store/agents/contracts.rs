//! Current state of agent contracts (factory children and registry enrolments): how they were
//! found, their on-chain card, owner, active flag, heartbeat and status in each registry. A set
//! of contracts is recomputed with three queries.

use super::{AgentRow, Position, push_in, write};
use crate::sources::hex_address;
use crate::store::keys::contract_agent_key;
use crate::store::sql::in_chain_order;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use std::collections::BTreeMap;

/// Recomputes the agent contracts `agents`, removing those nothing watches any more.
pub(super) async fn refresh(
    conn: &mut SqliteConnection,
    chain_id: u64,
    agents: &[Address],
) -> StoreResult<()> {
    let addresses: Vec<String> = agents.iter().map(hex_address).collect();
    let mut rows: BTreeMap<String, AgentRow> = BTreeMap::new();

    // How each was first found; an agent nothing found is gone.
    let found = of_agents(
        conn,
        "SELECT w.address, w.discovered_by, w.via, w.block_number, e.block_timestamp
         FROM watched_agents w INDEXED BY watched_agents_address JOIN events e
           ON e.chain_id = w.chain_id AND e.block_number = w.block_number AND e.log_index = w.log_index
         WHERE w.chain_id = ",
        chain_id,
        "w.address",
        &addresses,
        "ORDER BY w.block_number DESC, w.log_index DESC",
    )
    .await
    .context("reading how agent contracts were found")?;
    // Newest first, so the earliest discovery is the one left in the map.
    for row in found {
        let address: String = row.get("address");
        let block: i64 = row.get("block_number");
        rows.insert(
            address.clone(),
            AgentRow {
                key: String::new(),
                source: row.get("discovered_by"),
                registry: Some(row.get("via")),
                payment_address: Some(address.clone()),
                address: Some(address),
                active: true,
                registered_block: block,
                registered_at: row.get("block_timestamp"),
                last_event_block: block,
                ..AgentRow::default()
            },
        );
    }

    apply_own_events(conn, chain_id, &addresses, &mut rows).await?;
    apply_registry_events(conn, chain_id, &addresses, &mut rows).await?;

    let mut gone = Vec::new();
    let mut computed = Vec::with_capacity(rows.len());
    for agent in agents {
        let key = contract_agent_key(chain_id, agent);
        match rows.remove(&hex_address(agent)) {
            Some(mut row) => {
                row.key = key;
                describe_card(&mut row);
                computed.push(row);
            }
            None => gone.push(key),
        }
    }
    write(conn, chain_id, &computed, &gone).await
}

/// Folds in the contracts' own events and their state at enrolments: the newest of each kind
/// wins, and the heartbeat starts at the block time of the first interval setting until a
/// heartbeat is recorded.
async fn apply_own_events(
    conn: &mut SqliteConnection,
    chain_id: u64,
    addresses: &[String],
    rows: &mut BTreeMap<String, AgentRow>,
) -> StoreResult<()> {
    let facts = of_agents(conn, "SELECT agent, kind, value, block_number, log_index, timestamp, newest FROM (
           SELECT agent, kind, value, block_number, log_index, timestamp,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number DESC, log_index DESC) AS newest,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number, log_index) AS oldest
           FROM agent_contract_events WHERE chain_id = ", chain_id, "agent", addresses, ") WHERE newest = 1 OR (kind = 'interval' AND oldest = 1)")
        .await
        .context("reading agent contract events")?;
    let mut newest: BTreeMap<(String, String), (Position, String)> = BTreeMap::new();
    let mut first_interval_at: BTreeMap<String, i64> = BTreeMap::new();
    for fact in facts {
        let agent: String = fact.get("agent");
        let kind: String = fact.get("kind");
        if kind == "interval" {
            let at: i64 = fact.get("timestamp");
            if fact.get::<i64, _>("newest") != 1 {
                first_interval_at.insert(agent, at);
                continue;
            }
            first_interval_at.entry(agent.clone()).or_insert(at);
        }
        let at: Position = (fact.get("block_number"), fact.get("log_index"));
        newest.insert((agent, kind), (at, fact.get("value")));
    }
    for (agent, kind, at, value) in snapshot_facts(conn, chain_id, addresses).await? {
        let entry = newest
            .entry((agent, kind.into()))
            .or_insert((at, value.clone()));
        if entry.0 < at {
            *entry = (at, value);
        }
    }
    for ((agent, kind), ((block, _), value)) in newest {
        let Some(row) = rows.get_mut(&agent) else {
            continue;
        };
        row.last_event_block = row.last_event_block.max(block);
        match kind.as_str() {
            "owner" => row.owner = value,
            "card" => row.card = Some(value),
            "active" => row.active = value == "1",
            "interval" => row.heartbeat_interval = value.parse().ok(),
            "heartbeat" => row.last_heartbeat = value.parse().ok(),
            _ => {}
        }
    }
    for (agent, at) in first_interval_at {
        if let Some(row) = rows.get_mut(&agent) {
            row.last_heartbeat.get_or_insert(at);
        }
    }
    Ok(())
}

/// The fields of every enrolment snapshot of `addresses`, as (agent, kind, position, value)
/// in the shape the contracts' own events store them.
async fn snapshot_facts(
    conn: &mut SqliteConnection,
    chain_id: u64,
    addresses: &[String],
) -> StoreResult<Vec<(String, &'static str, Position, String)>> {
    let snapshots = of_agents(conn, "SELECT agent, owner, card, active, heartbeat_interval, last_heartbeat, block_number, log_index
         FROM agent_snapshots WHERE chain_id = ", chain_id, "agent", addresses, "")
        .await
        .context("reading agent snapshots")?;
    let mut facts = Vec::new();
    for snapshot in snapshots {
        let agent: String = snapshot.get("agent");
        let at: Position = (snapshot.get("block_number"), snapshot.get("log_index"));
        let number = |column: &str| {
            snapshot
                .get::<Option<i64>, _>(column)
                .map(|n| n.to_string())
        };
        let fields = [
            ("owner", snapshot.get::<Option<String>, _>("owner")),
            ("card", snapshot.get::<Option<String>, _>("card")),
            (
                "active",
                snapshot
                    .get::<Option<bool>, _>("active")
                    .map(|on| if on { "1" } else { "0" }.to_string()),
            ),
            ("interval", number("heartbeat_interval")),
            ("heartbeat", number("last_heartbeat")),
        ];
        for (kind, value) in fields {
            if let Some(value) = value {
                facts.push((agent.clone(), kind, at, value));
            }
        }
    }
    Ok(facts)
}

/// Folds in registry events: the status in each registry, the metadata URI, and the enrolling
/// account as owner when the contract never named one.
async fn apply_registry_events(
    conn: &mut SqliteConnection,
    chain_id: u64,
    addresses: &[String],
    rows: &mut BTreeMap<String, AgentRow>,
) -> StoreResult<()> {
    let events = of_agents(
        conn,
        "SELECT agent, registry, kind, actor, metadata_uri, pending, block_number, log_index
         FROM registry_events INDEXED BY registry_events_agent
         WHERE chain_id = ",
        chain_id,
        "agent",
        addresses,
        "",
    )
    .await
    .context("reading registry events")?;
    let events = in_chain_order(events);
    let mut statuses: BTreeMap<String, BTreeMap<String, &str>> = BTreeMap::new();
    for event in events {
        let agent: String = event.get("agent");
        let Some(row) = rows.get_mut(&agent) else {
            continue;
        };
        row.last_event_block = row.last_event_block.max(event.get("block_number"));
        let registry: String = event.get("registry");
        let of_agent = statuses.entry(agent).or_default();
        let status = match event.get::<String, _>("kind").as_str() {
            "AgentRegistered" => {
                if row.owner.is_empty() {
                    row.owner = event.get("actor");
                }
                if event.get::<Option<bool>, _>("pending").unwrap_or(false) {
                    "pending"
                } else {
                    "active"
                }
            }
            "AgentApproved" => "active",
            "AgentRemoved" => "removed",
            "AgentDeregistered" => "deregistered",
            _ => of_agent.get(&registry).copied().unwrap_or("active"),
        };
        if let Some(uri) = event.get::<Option<String>, _>("metadata_uri") {
            row.uri = Some(uri);
        }
        of_agent.insert(registry, status);
    }
    for (agent, of_agent) in statuses {
        if let Some(row) = rows.get_mut(&agent) {
            row.registry_status = Some(serde_json::to_string(&of_agent).expect("serialises"));
        }
    }
    Ok(())
}

/// Name, description, card URI and anchored card hash from the on-chain card JSON.
fn describe_card(row: &mut AgentRow) {
    let parsed: Option<serde_json::Value> = row
        .card
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok());
    let text = |field: &str| {
        parsed
            .as_ref()
            .and_then(|c| c.get(field))
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    row.card_uri = text("cardUri");
    row.card_hash =
        text("cardHash").filter(|h| h.trim_start_matches("0x").chars().any(|c| c != '0'));
    row.name = text("name");
    row.description = text("description");
}

/// Runs `{select} <chain_id> AND {column} IN (<addresses>) {tail}`; `select` ends in the
/// chain-id comparison (`… WHERE chain_id = `).
async fn of_agents(
    conn: &mut SqliteConnection,
    select: &str,
    chain_id: u64,
    column: &str,
    addresses: &[String],
    tail: &str,
) -> Result<Vec<SqliteRow>, sqlx::Error> {
    let mut query = QueryBuilder::<Sqlite>::new(select);
    query.push_bind(chain_id as i64);
    query.push(format!(" AND {column}"));
    push_in(&mut query, addresses);
    query.push(tail);
    query.build().fetch_all(&mut *conn).await
}
