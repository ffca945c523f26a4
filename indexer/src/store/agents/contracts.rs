//! Current state of agent contracts (factory children and registry enrolments): how they were
//! found, their on-chain card, owner, active flag, heartbeat and status in each registry. A set
//! of contracts is recomputed with three queries.

use super::{push_in, write};
use crate::agents::AgentState;
use crate::agents::contracts::{
    Found, OwnFact, RegistryFact, SnapshotFact, apply_own, apply_registry, describe_card, found,
};
use crate::primitives::AgentKey;
use crate::schema::{
    agent_contract_events, agent_snapshots, events, registry_events, watched_agents,
};
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::StoreResult;
use crate::store::decode::{self, int};
use crate::store::packed_row::{PackedRow, packed_row};
use crate::store::sql::{fetch_packed, fetch_packed_in_chain_order, packed, packed_rows};
use alloy::primitives::Address;
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
        &format!(
            "SELECT {{rows}} FROM {watched_agents_table} w{hint} JOIN {events_table} e
           ON e.chain_id = w.chain_id AND e.block_number = w.block_number AND e.log_index = w.log_index
         WHERE w.chain_id = ",
            watched_agents_table = watched_agents::NAME,
            hint = Dialect::of(conn).index_hint("watched_agents_address"),
            events_table = events::NAME,
        ),
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

packed_row! {
    /// How an agent contract was found (`watched_agents` as `w`, with its event `e`'s time).
    struct Discovery {
        address: String = "w.address",
        discovered_by: String = "w.discovered_by",
        via: String = "w.via",
        block_number: i64 = "w.block_number",
        log_index: i64 = "w.log_index",
        block_timestamp: i64 = "e.block_timestamp",
    }
}

packed_row! {
    /// An agent contract's own event (`agent_contract_events`), with its rank among the agent's
    /// events of its kind, newest first.
    struct OwnEvent {
        agent: String = agent_contract_events::agent,
        kind: String = agent_contract_events::kind,
        value: String = agent_contract_events::value,
        block_number: i64 = agent_contract_events::block_number,
        log_index: i64 = agent_contract_events::log_index,
        timestamp: i64 = agent_contract_events::timestamp,
        newest: i64 = "newest",
    }
}

packed_row! {
    /// An agent contract's state read at an enrolment (`agent_snapshots`); NULL where the
    /// contract did not answer.
    struct SnapshotRow {
        agent: String = agent_snapshots::agent,
        owner: Option<String> = agent_snapshots::owner,
        card: Option<String> = agent_snapshots::card,
        active: Option<i64> = agent_snapshots::active,
        heartbeat_interval: Option<i64> = agent_snapshots::heartbeat_interval,
        last_heartbeat: Option<i64> = agent_snapshots::last_heartbeat,
        block_number: i64 = agent_snapshots::block_number,
        log_index: i64 = agent_snapshots::log_index,
    }
}

packed_row! {
    /// A registry's enrolment event (`registry_events`).
    struct RegistryRow {
        agent: String = registry_events::agent,
        registry: String = registry_events::registry,
        kind: String = registry_events::kind,
        actor: String = registry_events::actor,
        metadata_uri: Option<String> = registry_events::metadata_uri,
        pending: Option<i64> = registry_events::pending,
    }
}

/// Folds in the contracts' own events and their state at enrolments: the newest of each kind
/// wins, and the heartbeat starts at the block time of the first interval setting until a
/// heartbeat is recorded.
async fn apply_own_events(
    conn: &mut AnyConnection,
    chain_id: u64,
    addresses: &[String],
    rows: &mut BTreeMap<String, AgentState>,
) -> StoreResult<()> {
    let facts: Vec<OwnEvent> = of_agents(
        conn,
        &format!(
            "SELECT {{rows}} FROM (
           SELECT agent, kind, value, block_number, log_index, timestamp,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number DESC, log_index DESC) AS newest,
             row_number() OVER (PARTITION BY agent, kind ORDER BY block_number, log_index) AS oldest
           FROM {agent_contract_events_table} WHERE chain_id = ",
            agent_contract_events_table = agent_contract_events::NAME,
        ),
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
    apply_own(rows, own, snapshots).map_err(|error| {
        decode::corrupt(agent_contract_events::NAME, "value", &error.value, &error)
    })
}

/// The fields of every enrolment snapshot of `addresses`, as (agent, kind, position, value)
/// in the shape the contracts' own events store them.
async fn snapshot_facts(
    conn: &mut AnyConnection,
    chain_id: u64,
    addresses: &[String],
) -> StoreResult<Vec<SnapshotFact>> {
    let snapshots: Vec<SnapshotRow> = of_agents(
        conn,
        &format!(
            "SELECT {{rows}} FROM {agent_snapshots_table} WHERE chain_id = ",
            agent_snapshots_table = agent_snapshots::NAME,
        ),
        (chain_id, "agent", addresses),
        "",
        "reading agent snapshots",
    )
    .await?;
    let mut facts = Vec::new();
    for SnapshotRow {
        agent,
        owner,
        card,
        active,
        heartbeat_interval: interval,
        last_heartbeat: heartbeat,
        block_number,
        log_index,
    } in snapshots
    {
        let at = (block_number, log_index);
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
    let events: Vec<(i64, i64, RegistryRow)> = of_agents_in_chain_order(
        conn,
        &format!(
            "SELECT {{rows}} FROM {registry_events_table}{hint} WHERE chain_id = ",
            registry_events_table = registry_events::NAME,
            hint = Dialect::of(conn).index_hint("registry_events_agent"),
        ),
        (chain_id, "agent", addresses),
        "",
        "reading registry events",
    )
    .await?;
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
/// standing for the [`packed`] select list of `T`: `select` ends in the chain-id comparison
/// (`… WHERE chain_id = `). `context` names the query in errors.
async fn of_agents<T: PackedRow>(
    conn: &mut AnyConnection,
    select: &str,
    agents: AgentsOfChain<'_>,
    tail: &str,
    context: &'static str,
) -> StoreResult<Vec<T>> {
    let rows = packed::<T>(Dialect::of(conn));
    let query = agents_query(select, &rows, agents, tail)?;
    fetch_packed(conn, query, context).await
}

/// [`of_agents`] for rows with a place on the chain ([`packed_rows`] of `T`), in chain order.
async fn of_agents_in_chain_order<T: PackedRow>(
    conn: &mut AnyConnection,
    select: &str,
    agents: AgentsOfChain<'_>,
    tail: &str,
    context: &'static str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let rows = packed_rows::<T>(Dialect::of(conn));
    let query = agents_query(select, &rows, agents, tail)?;
    fetch_packed_in_chain_order(conn, query, context).await
}

/// The agents a query is about: the chain, the column naming the agent, their addresses.
type AgentsOfChain<'a> = (u64, &'a str, &'a [String]);

/// The query [`of_agents`] runs, `rows` in place of `{rows}`.
fn agents_query<'a>(
    select: &str,
    rows: &str,
    (chain_id, column, addresses): AgentsOfChain<'a>,
    tail: &str,
) -> StoreResult<QueryBuilder<'a, Any>> {
    let mut query = QueryBuilder::<Any>::new(select.replace("{rows}", rows));
    query.push_bind(int("chain_id", chain_id)?);
    query.push(format!(" AND {column}"));
    push_in(&mut query, addresses);
    query.push(tail);
    Ok(query)
}
