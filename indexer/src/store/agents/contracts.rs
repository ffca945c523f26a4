//! Current state of agent contracts (factory children and registry enrolments): how they were
//! found, their on-chain card, owner, active flag, heartbeat and status in each registry. A set
//! of contracts is recomputed with three queries.

use super::{push_in, write};
use crate::agents::AgentState;
use crate::agents::contracts::{
    Found, OwnFact, RegistryFact, SnapshotFact, apply_own, apply_registry, describe_card, found,
};
use crate::primitives::AgentKey;
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::StoreResult;
use crate::store::decode::{self, int};
use crate::store::sql::{fetch_packed, packed, packed_rows, sort_in_chain_order};
use alloy::primitives::Address;
use serde::de::DeserializeOwned;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// Recomputes the agent contracts `agents`, removing those nothing watches any more.
pub(super) async fn refresh(
    conn: &mut AnyConnection,
    chain_id: u64,
    agents: &[Address],
) -> StoreResult<()> {
    let addresses: Vec<String> = agents.iter().map(hex_address).collect();
    let mut rows: BTreeMap<String, AgentState> = BTreeMap::new();

    // How each was first found; an agent nothing found is gone.
    let mut discoveries: Vec<Discovery> = of_agents(
        conn,
        "SELECT {rows} FROM watched_agents w INDEXED BY watched_agents_address JOIN events e
           ON e.chain_id = w.chain_id AND e.block_number = w.block_number AND e.log_index = w.log_index
         WHERE w.chain_id = ",
        |d| packed(d, "w.address, w.discovered_by, w.via, w.block_number, w.log_index, e.block_timestamp"),
        (chain_id, "w.address", &addresses),
        "",
        "reading how agent contracts were found",
    )
    .await?;
    // Newest first, so the earliest discovery is the one left in the map.
    discoveries.sort_by_key(|d| std::cmp::Reverse((d.block_number, d.log_index)));
    for Discovery {
        address,
        discovered_by,
        via,
        block_number: block,
        log_index: _,
        block_timestamp: timestamp,
    } in discoveries
    {
        let state = found(Found {
            address: address.clone(),
            discovered_by,
            via,
            block,
            timestamp,
        });
        rows.insert(address, state);
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
    conn: &mut AnyConnection,
    chain_id: u64,
    addresses: &[String],
    rows: &mut BTreeMap<String, AgentState>,
) -> StoreResult<()> {
    let facts: Vec<OwnEvent> = of_agents(
        conn,
        "SELECT {rows} FROM (
           SELECT agent, kind, value, block_number, log_index, timestamp,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number DESC, log_index DESC) AS newest,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number, log_index) AS oldest
           FROM agent_contract_events WHERE chain_id = ",
        |d| packed(d, "agent, kind, value, block_number, log_index, timestamp, newest"),
        (chain_id, "agent", addresses),
        ") AS f WHERE newest = 1 OR (kind = 'interval' AND oldest = 1)",
        "reading agent contract events",
    )
    .await?;
    let own = facts
        .into_iter()
        .map(|event| OwnFact {
            agent: event.agent,
            kind: event.kind,
            value: event.value,
            at: (event.block_number, event.log_index),
            timestamp: event.timestamp,
            newest: event.newest == 1,
        })
        .collect();
    let snapshots = snapshot_facts(conn, chain_id, addresses).await?;
    apply_own(rows, own, snapshots)
        .map_err(|error| decode::corrupt("agent_contract_events", "value", &error.value, &error))
}

/// The fields of every enrolment snapshot of `addresses`, as (agent, kind, position, value)
/// in the shape the contracts' own events store them.
async fn snapshot_facts(
    conn: &mut AnyConnection,
    chain_id: u64,
    addresses: &[String],
) -> StoreResult<Vec<SnapshotFact>> {
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
        |d| packed(d, "agent, owner, card, active, heartbeat_interval, last_heartbeat, block_number, log_index"),
        (chain_id, "agent", addresses),
        "",
        "reading agent snapshots",
    )
    .await?;
    let mut facts = Vec::new();
    for (agent, owner, card, active, interval, heartbeat, block, log) in snapshots {
        let at = (block, log);
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
                facts.push(SnapshotFact {
                    agent: agent.clone(),
                    kind,
                    at,
                    value,
                });
            }
        }
    }
    Ok(facts)
}

/// Folds in registry events: the status in each registry, the metadata URI, and the enrolling
/// account as owner when the contract never named one.
async fn apply_registry_events(
    conn: &mut AnyConnection,
    chain_id: u64,
    addresses: &[String],
    rows: &mut BTreeMap<String, AgentState>,
) -> StoreResult<()> {
    let mut events: Vec<(i64, i64, RegistryRow)> = of_agents(
        conn,
        "SELECT {rows} FROM registry_events INDEXED BY registry_events_agent WHERE chain_id = ",
        |d| packed_rows(d, "agent, registry, kind, actor, metadata_uri, pending"),
        (chain_id, "agent", addresses),
        "",
        "reading registry events",
    )
    .await?;
    sort_in_chain_order(&mut events);
    let events = events
        .into_iter()
        .map(|(block, _, event)| RegistryFact {
            agent: event.agent,
            registry: event.registry,
            kind: event.kind,
            actor: event.actor,
            metadata_uri: event.metadata_uri,
            pending: event.pending.unwrap_or(0) != 0,
            block,
        })
        .collect();
    apply_registry(rows, events);
    Ok(())
}

/// Runs `{select} <chain_id> AND {column} IN (<addresses>) {tail}` with `{rows}` in `select`
/// standing for `rows`, a packed select list ([`packed`] or [`packed_rows`]): `select` ends in
/// the chain-id comparison (`… WHERE chain_id = `). Each row comes back as `T`; `context` names
/// the query in errors.
async fn of_agents<T: DeserializeOwned>(
    conn: &mut AnyConnection,
    select: &str,
    rows: impl FnOnce(Dialect) -> String,
    (chain_id, column, addresses): (u64, &str, &[String]),
    tail: &str,
    context: &'static str,
) -> StoreResult<Vec<T>> {
    let rows = rows(Dialect::of(conn));
    let mut query = QueryBuilder::<Any>::new(select.replace("{rows}", &rows));
    query.push_bind(int("chain_id", chain_id)?);
    query.push(format!(" AND {column}"));
    push_in(&mut query, addresses);
    query.push(tail);
    fetch_packed(conn, query, context).await
}
