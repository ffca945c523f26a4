//! An agent contract (a factory's child or a registry's enrolment) from its facts: how it was
//! found, the newest word of each kind from its own events or its enrolment snapshot (owner,
//! card, active flag, heartbeat), and its status in each registry.

use super::{AgentState, Position};
use crate::primitives::sql_int;
use std::collections::BTreeMap;

/// How a contract was first found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The contract (lower-case hex).
    pub address: String,
    /// `factory` or `registry`.
    pub discovered_by: String,
    /// The factory or registry.
    pub via: String,
    /// Block it was found in.
    pub block: i64,
    /// Time of that block.
    pub timestamp: i64,
}

/// The state a contract starts from when it is found.
pub fn found(found: Found) -> AgentState {
    AgentState {
        source: found.discovered_by,
        registry: Some(found.via),
        payment_address: Some(found.address.clone()),
        address: Some(found.address),
        active: true,
        registered_block: found.block,
        registered_at: found.timestamp,
        last_event_block: found.block,
        ..AgentState::default()
    }
}

/// One of a contract's own events: the newest of its kind, or (`newest` false) the first
/// `interval`, whose time stands for the last heartbeat until one is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnFact {
    /// The contract.
    pub agent: String,
    /// `owner`, `card`, `active`, `interval`, `heartbeat`, …
    pub kind: String,
    /// The value as stored: an address, card JSON, `1`/`0`, a decimal u64.
    pub value: String,
    /// Where it happened.
    pub at: Position,
    /// Its block's time.
    pub timestamp: i64,
    /// Whether it is the newest of its kind.
    pub newest: bool,
}

/// One field of an enrolment snapshot, in the shape of the contract's own events.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotFact {
    /// The contract.
    pub agent: String,
    /// `owner`, `card`, `active`, `interval` or `heartbeat`.
    pub kind: &'static str,
    /// Where the enrolment happened.
    pub at: Position,
    /// The value, as an own event would carry it.
    pub value: String,
}

/// A value of a numeric kind that is not a decimal u64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent {agent}: {kind} value {value:?} is not a number")]
pub struct InvalidValue {
    /// The contract.
    pub agent: String,
    /// The kind of fact.
    pub kind: String,
    /// What was stored.
    pub value: String,
}

/// Folds the newest word of each kind, from own events and snapshots alike, into `rows` (by
/// contract). A contract may announce any u64 as interval or heartbeat; one past what the
/// column holds is unknown.
pub fn apply_own(
    rows: &mut BTreeMap<String, AgentState>,
    own: Vec<OwnFact>,
    snapshots: Vec<SnapshotFact>,
) -> Result<(), InvalidValue> {
    let mut newest: BTreeMap<(String, String), (Position, String)> = BTreeMap::new();
    let mut first_interval_at: BTreeMap<String, i64> = BTreeMap::new();
    for fact in own {
        if fact.kind == "interval" {
            if !fact.newest {
                first_interval_at.insert(fact.agent, fact.timestamp);
                continue;
            }
            first_interval_at
                .entry(fact.agent.clone())
                .or_insert(fact.timestamp);
        }
        newest.insert((fact.agent, fact.kind), (fact.at, fact.value));
    }
    for fact in snapshots {
        let entry = newest
            .entry((fact.agent, fact.kind.into()))
            .or_insert((fact.at, fact.value.clone()));
        if entry.0 < fact.at {
            *entry = (fact.at, fact.value);
        }
    }
    for ((agent, kind), ((block, _), value)) in newest {
        let Some(row) = rows.get_mut(&agent) else {
            continue;
        };
        row.last_event_block = row.last_event_block.max(block);
        let number = |value: &str| {
            value
                .parse::<u64>()
                .map(|n| sql_int(n).ok())
                .map_err(|_| InvalidValue {
                    agent: agent.clone(),
                    kind: kind.clone(),
                    value: value.to_string(),
                })
        };
        match kind.as_str() {
            "owner" => row.owner = value,
            "card" => row.card = Some(value),
            "active" => row.active = value == "1",
            "interval" => row.heartbeat_interval = number(&value)?,
            "heartbeat" => row.last_heartbeat = number(&value)?,
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

/// A registry's event about a contract.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistryFact {
    /// The contract.
    pub agent: String,
    /// The registry.
    pub registry: String,
    /// `AgentRegistered`, `AgentApproved`, `AgentRemoved`, `AgentDeregistered`, …
    pub kind: String,
    /// Who sent it (the enrolling account, for `AgentRegistered`).
    pub actor: String,
    /// The metadata URI it carries.
    pub metadata_uri: Option<String>,
    /// Whether a registration waits for approval.
    pub pending: bool,
    /// Its block.
    pub block: i64,
}

/// Folds registry events, in chain order, into `rows`: the status in each registry, the
/// metadata URI, and the enrolling account as owner when the contract never named one.
pub fn apply_registry(rows: &mut BTreeMap<String, AgentState>, events: Vec<RegistryFact>) {
    let mut statuses: BTreeMap<String, BTreeMap<String, &str>> = BTreeMap::new();
    for event in events {
        let Some(row) = rows.get_mut(&event.agent) else {
            continue;
        };
        row.last_event_block = row.last_event_block.max(event.block);
        let of_agent = statuses.entry(event.agent).or_default();
        let status = match event.kind.as_str() {
            "AgentRegistered" => {
                if row.owner.is_empty() {
                    row.owner = event.actor;
                }
                if event.pending { "pending" } else { "active" }
            }
            "AgentApproved" => "active",
            "AgentRemoved" => "removed",
            "AgentDeregistered" => "deregistered",
            _ => of_agent.get(&event.registry).copied().unwrap_or("active"),
        };
        if let Some(uri) = event.metadata_uri {
            row.uri = Some(uri);
        }
        of_agent.insert(event.registry, status);
    }
    for (agent, of_agent) in statuses {
        if let Some(row) = rows.get_mut(&agent) {
            row.registry_status = Some(serde_json::to_string(&of_agent).expect("serialises"));
        }
    }
}

/// Name, description, card URI and anchored card hash from the on-chain card JSON.
pub fn describe_card(row: &mut AgentState) {
    // The card is what the contract emitted: a card that is not JSON is the agent's own doing,
    // and leaves the agent without a name from it.
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
