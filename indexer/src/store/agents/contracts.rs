//! Current state of agent contracts (factory children and registry enrolments): how they were
//! found, their on-chain card, owner, active flag, heartbeat and status in each registry. A set
//! of contracts is recomputed with three queries.

use super::{AgentRow, Position, push_in, write};
use crate::primitives::AgentKey;
use crate::primitives::sql_int;
use crate::sources::hex_address;
use crate::store::StoreResult;
use crate::store::decode::{self, int};
use crate::store::sql::{fetch_packed, packed, packed_rows, sort_in_chain_order};
use alloy::primitives::Address;
use serde::de::DeserializeOwned;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
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
    let mut found: Vec<Discovery> = of_agents(
        conn,
        "SELECT {rows} FROM watched_agents w INDEXED BY watched_agents_address JOIN events e
           ON e.chain_id = w.chain_id AND e.block_number = w.block_number AND e.log_index = w.log_index
         WHERE w.chain_id = ",
        &packed("w.address, w.discovered_by, w.via, w.block_number, w.log_index, e.block_timestamp"),
        (chain_id, "w.address", &addresses),
        "",
        "reading how agent contracts were found",
    )
    .await?;
    // Newest first, so the earliest discovery is the one left in the map.
    found.sort_by_key(|d| std::cmp::Reverse((d.block_number, d.log_index)));
    for Discovery {
        address,
        discovered_by,
        via,
        block_number: block,
        log_index: _,
        block_timestamp: timestamp,
    } in found
    {
        rows.insert(
            address.clone(),
            AgentRow {
                key: String::new(),
                source: discovered_by,
                registry: Some(via),
                payment_address: Some(address.clone()),
                address: Some(address),
                active: true,
                registered_block: block,
                registered_at: timestamp,
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
        let key = AgentKey::contract(chain_id, *agent).to_string();
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
/// How an agent contract was found (`watched_agents` with its event's time), packed.
#[derive(serde::Deserialize)]
struct Discovery {
    address: String,
    discovered_by: String,
    via: String,
    block_number: i64,
    log_index: i64,
    block_timestamp: i64,
}

/// An agent contract's own event (`agent_contract_events`), packed, with its rank among the
/// agent's events of its kind, newest first.
#[derive(serde::Deserialize)]
struct OwnEvent {
    agent: String,
    kind: String,
    value: String,
    block_number: i64,
    log_index: i64,
    timestamp: i64,
    newest: i64,
}

/// A `registry_events` row, packed.
#[derive(serde::Deserialize)]
struct RegistryRow {
    agent: String,
    registry: String,
    kind: String,
    actor: String,
    metadata_uri: Option<String>,
    pending: Option<i64>,
}

async fn apply_own_events(
    conn: &mut SqliteConnection,
    chain_id: u64,
    addresses: &[String],
    rows: &mut BTreeMap<String, AgentRow>,
) -> StoreResult<()> {
    let facts: Vec<OwnEvent> = of_agents(
        conn,
        "SELECT {rows} FROM (
           SELECT agent, kind, value, block_number, log_index, timestamp,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number DESC, log_index DESC) AS newest,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number, log_index) AS oldest
           FROM agent_contract_events WHERE chain_id = ",
        &packed("agent, kind, value, block_number, log_index, timestamp, newest"),
        (chain_id, "agent", addresses),
        ") WHERE newest = 1 OR (kind = 'interval' AND oldest = 1)",
        "reading agent contract events",
    )
    .await?;
    let mut newest: BTreeMap<(String, String), (Position, String)> = BTreeMap::new();
    let mut first_interval_at: BTreeMap<String, i64> = BTreeMap::new();
    for OwnEvent {
        agent,
        kind,
        value,
        block_number: block,
        log_index: log,
        timestamp,
        newest: newest_rank,
    } in facts
    {
        if kind == "interval" {
            if newest_rank != 1 {
                first_interval_at.insert(agent, timestamp);
                continue;
            }
            first_interval_at.entry(agent.clone()).or_insert(timestamp);
        }
        newest.insert((agent, kind), ((block, log), value));
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
            // A contract may announce any u64; one past what the column holds is unknown.
            "interval" => row.heartbeat_interval = stored_u64(&value)?,
            "heartbeat" => row.last_heartbeat = stored_u64(&value)?,
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
    type SnapshotRow = (
        String,
        Option<String>,
        Option<String>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        i64,
        i64,
    );
    let snapshots: Vec<SnapshotRow> = of_agents(
        conn,
        "SELECT {rows} FROM agent_snapshots WHERE chain_id = ",
        &packed("agent, owner, card, active, heartbeat_interval, last_heartbeat, block_number, log_index"),
        (chain_id, "agent", addresses),
        "",
        "reading agent snapshots",
    )
    .await?;
    let mut facts = Vec::new();
    for (agent, owner, card, active, interval, heartbeat, block, log) in snapshots {
        let at: Position = (block, log);
        let fields = [
            ("owner", owner),
            ("card", card),
            (
                "active",
                active.map(|on| if on != 0 { "1" } else { "0" }.to_string()),
            ),
            ("interval", interval.map(|n| n.to_string())),
            ("heartbeat", heartbeat.map(|n| n.to_string())),
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
    let mut events: Vec<(i64, i64, RegistryRow)> = of_agents(
        conn,
        "SELECT {rows} FROM registry_events INDEXED BY registry_events_agent WHERE chain_id = ",
        &packed_rows("agent, registry, kind, actor, metadata_uri, pending"),
        (chain_id, "agent", addresses),
        "",
        "reading registry events",
    )
    .await?;
    sort_in_chain_order(&mut events);
    let mut statuses: BTreeMap<String, BTreeMap<String, &str>> = BTreeMap::new();
    for (block, _, event) in events {
        let RegistryRow {
            agent,
            registry,
            kind,
            actor,
            metadata_uri,
            pending,
        } = event;
        let Some(row) = rows.get_mut(&agent) else {
            continue;
        };
        row.last_event_block = row.last_event_block.max(block);
        let of_agent = statuses.entry(agent).or_default();
        let status = match kind.as_str() {
            "AgentRegistered" => {
                if row.owner.is_empty() {
                    row.owner = actor;
                }
                if pending.unwrap_or(0) != 0 {
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
        if let Some(uri) = metadata_uri {
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

/// A u64 an agent contract emitted, kept as text in `agent_contract_events.value`, as the
/// `agents` table holds it: `None` when it is past `i64::MAX`.
fn stored_u64(value: &str) -> StoreResult<Option<i64>> {
    let value: u64 = decode::parse("agent_contract_events", "value", value)?;
    Ok(sql_int(value).ok())
}

/// Name, description, card URI and anchored card hash from the on-chain card JSON.
fn describe_card(row: &mut AgentRow) {
    // The card is what the contract emitted, not a value the store wrote: a card that is not
    // JSON is the agent's own doing, and leaves the agent without a name from it.
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

/// Runs `{select} <chain_id> AND {column} IN (<addresses>) {tail}` with `{rows}` in `select`
/// standing for `rows`, a packed select list ([`packed`] or [`packed_rows`]): `select` ends in
/// the chain-id comparison (`… WHERE chain_id = `). Each row comes back as `T`; `context` names
/// the query in errors.
async fn of_agents<T: DeserializeOwned>(
    conn: &mut SqliteConnection,
    select: &str,
    rows: &str,
    (chain_id, column, addresses): (u64, &str, &[String]),
    tail: &str,
    context: &'static str,
) -> StoreResult<Vec<T>> {
    let mut query = QueryBuilder::<Sqlite>::new(select.replace("{rows}", rows));
    query.push_bind(int("chain_id", chain_id)?);
    query.push(format!(" AND {column}"));
    push_in(&mut query, addresses);
    query.push(tail);
    fetch_packed(conn, query, context).await
}
