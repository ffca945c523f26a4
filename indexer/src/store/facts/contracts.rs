//! Facts of agent contracts and of the factories and registries that find them.

use super::Touched;
use super::payments::{Via, bind_payments, insert_payment};
use crate::primitives::AgentKey;
use crate::primitives::sql_int;
use crate::reputation::crediting;
use crate::schema::{
    agent_contract_events, agent_snapshots, ratings, registry_events, watched_agents, withdrawals,
};
use crate::sources::{Decoded, RegistryAction, hex_address, hex_b256};
use crate::store::StoreResult;
use crate::store::batch::{AgentSnapshot, ChainContext, EventRecord};
use crate::store::decode::int;
use crate::store::rows::Rows;
use alloy::primitives::Address;

pub(super) fn apply(
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
    touched: &mut Touched,
) -> StoreResult<()> {
    let chain_id = chain.chain_id;
    let (block, log) = (
        int("block_number", ev.block_number)?,
        int("log_index", ev.log_index)?,
    );
    let emitter = hex_address(&ev.address);
    match decoded {
        Decoded::AgentCreated { agent, owner: _ } => {
            watch(rows, chain_id, agent, ev, "factory")?;
            touched.contracts.insert(*agent);
        }
        Decoded::Registry {
            agent,
            action,
            actor,
        } => {
            let (uri, pending, reason) = match action {
                RegistryAction::Registered {
                    metadata_uri,
                    pending,
                } => (Some(metadata_uri.as_str()), Some(*pending), None),
                RegistryAction::Updated { metadata_uri } => {
                    (Some(metadata_uri.as_str()), None, None)
                }
                RegistryAction::Removed { reason } => (None, None, Some(reason.as_str())),
                RegistryAction::Approved | RegistryAction::Deregistered => (None, None, None),
            };
            rows.insert(registry_events::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: emitter,
                agent: hex_address(agent),
                kind: decoded.kind().to_string(),
                actor: hex_address(actor),
                metadata_uri: uri.map(str::to_string),
                pending: pending.map(i64::from),
                reason: reason.map(str::to_string),
                block_number: block,
                log_index: log,
            });
            if matches!(action, RegistryAction::Registered { .. }) {
                watch(rows, chain_id, agent, ev, "registry")?;
                if let Some(snapshot) = &ev.snapshot {
                    push_snapshot(rows, chain_id, agent, ev, snapshot)?;
                }
            }
            touched.contracts.insert(*agent);
        }
        Decoded::CardUpdated(card) => {
            let json = serde_json::to_string(card).expect("card fields serialise");
            agent_fact(rows, chain_id, ev, "card", &json)?;
            touched.contracts.insert(ev.address);
        }
        Decoded::AgentOwnerChanged { new_owner } => {
            agent_fact(rows, chain_id, ev, "owner", &hex_address(new_owner))?;
            touched.contracts.insert(ev.address);
        }
        Decoded::ActiveChanged(active) => {
            agent_fact(
                rows,
                chain_id,
                ev,
                "active",
                if *active { "1" } else { "0" },
            )?;
            touched.contracts.insert(ev.address);
        }
        Decoded::HeartbeatIntervalChanged(interval) => {
            agent_fact(rows, chain_id, ev, "interval", &interval.to_string())?;
            touched.contracts.insert(ev.address);
        }
        Decoded::Heartbeat(at) => {
            agent_fact(rows, chain_id, ev, "heartbeat", &at.to_string())?;
            touched.contracts.insert(ev.address);
        }
        Decoded::PaymentReceived {
            payer,
            token,
            amount,
        } if crediting::counts_payment_received(token) => {
            let key = AgentKey::contract(chain_id, ev.address).to_string();
            insert_payment(
                rows,
                chain_id,
                ev,
                &key,
                token,
                payer,
                &ev.address,
                amount,
                Via::Transfer(None),
            )?;
        }
        Decoded::Withdrawn { token, to, amount } => {
            rows.insert(withdrawals::Row {
                chain_id: int("chain_id", chain_id)?,
                agent: emitter,
                token: hex_address(token),
                to_address: hex_address(to),
                amount: amount.to_string(),
                block_number: block,
                log_index: log,
                tx_hash: hex_b256(&ev.tx_hash),
            });
        }
        Decoded::Rated { rater, score } => {
            rows.insert(ratings::Row {
                chain_id: int("chain_id", chain_id)?,
                agent: emitter,
                rater: hex_address(rater),
                score: i64::from(*score),
                block_number: block,
                log_index: log,
                timestamp: int("block_timestamp", ev.block_timestamp)?,
            });
        }
        _ => {}
    }
    Ok(())
}

/// Records an agent contract's state at its enrolment.
fn push_snapshot(
    rows: &mut Rows,
    chain_id: u64,
    agent: &Address,
    ev: &EventRecord,
    snapshot: &AgentSnapshot,
) -> StoreResult<()> {
    let errors = (!snapshot.errors.is_empty())
        .then(|| serde_json::to_string(&snapshot.errors).expect("strings serialise"));
    rows.insert(agent_snapshots::Row {
        chain_id: int("chain_id", chain_id)?,
        agent: hex_address(agent),
        owner: snapshot.owner.as_ref().map(hex_address),
        card: snapshot
            .card
            .as_ref()
            .map(|card| serde_json::to_string(card).expect("card fields serialise")),
        active: snapshot.active.map(i64::from),
        heartbeat_interval: snapshot.heartbeat_interval.and_then(|n| sql_int(n).ok()),
        last_heartbeat: snapshot.last_heartbeat.and_then(|n| sql_int(n).ok()),
        errors,
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
    });
    Ok(())
}

/// Starts following an agent contract and counting payments into it.
fn watch(
    rows: &mut Rows,
    chain_id: u64,
    agent: &Address,
    ev: &EventRecord,
    discovered_by: &str,
) -> StoreResult<()> {
    rows.insert(watched_agents::Row {
        chain_id: int("chain_id", chain_id)?,
        address: hex_address(agent),
        from_block: int("block_number", ev.block_number)?,
        discovered_by: discovered_by.to_string(),
        via: hex_address(&ev.address),
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
    });
    let key = AgentKey::contract(chain_id, *agent).to_string();
    bind_payments(rows, chain_id, &key, &hex_address(agent), ev)?;
    Ok(())
}

fn agent_fact(
    rows: &mut Rows,
    chain_id: u64,
    ev: &EventRecord,
    kind: &str,
    value: &str,
) -> StoreResult<()> {
    rows.insert(agent_contract_events::Row {
        chain_id: int("chain_id", chain_id)?,
        agent: hex_address(&ev.address),
        kind: kind.to_string(),
        value: value.to_string(),
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
        timestamp: int("block_timestamp", ev.block_timestamp)?,
    });
    Ok(())
}
