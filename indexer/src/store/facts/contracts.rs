//! Facts of agent contracts and of the factories and registries that find them.

use super::Touched;
use super::payments::{Via, bind_payments, insert_payment};
use crate::primitives::AgentKey;
use crate::primitives::sql_int;
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
            rows.push(
registry_events::NAME,
"chain_id, registry, agent, kind, actor, metadata_uri, pending, reason, block_number, log_index",
vec![int("chain_id", chain_id)?.into(), (&emitter).into(), hex_address(agent).into(), decoded.kind().into(), hex_address(actor).into(), uri.into(), pending.into(), reason.into(), block.into(), log.into()],
);
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
        // Token payments are counted from the token's own Transfer; only native coin has no
        // other trace.
        Decoded::PaymentReceived {
            payer,
            token,
            amount,
        } if *token == Address::ZERO => {
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
            rows.push(
                withdrawals::NAME,
                "chain_id, agent, token, to_address, amount, block_number, log_index, tx_hash",
                vec![
                    int("chain_id", chain_id)?.into(),
                    (&emitter).into(),
                    hex_address(token).into(),
                    hex_address(to).into(),
                    amount.to_string().into(),
                    block.into(),
                    log.into(),
                    hex_b256(&ev.tx_hash).into(),
                ],
            );
        }
        Decoded::Rated { rater, score } => {
            rows.push(
                ratings::NAME,
                "chain_id, agent, rater, score, block_number, log_index, timestamp",
                vec![
                    int("chain_id", chain_id)?.into(),
                    (&emitter).into(),
                    hex_address(rater).into(),
                    i64::from(*score).into(),
                    block.into(),
                    log.into(),
                    int("block_timestamp", ev.block_timestamp)?.into(),
                ],
            );
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
    rows.push(
        agent_snapshots::NAME,
        "chain_id, agent, owner, card, active, heartbeat_interval, last_heartbeat, errors,
            block_number, log_index",
        vec![
            int("chain_id", chain_id)?.into(),
            hex_address(agent).into(),
            snapshot.owner.as_ref().map(hex_address).into(),
            snapshot
                .card
                .as_ref()
                .map(|card| serde_json::to_string(card).expect("card fields serialise"))
                .into(),
            snapshot.active.into(),
            snapshot
                .heartbeat_interval
                .and_then(|n| sql_int(n).ok())
                .into(),
            snapshot.last_heartbeat.and_then(|n| sql_int(n).ok()).into(),
            errors.into(),
            int("block_number", ev.block_number)?.into(),
            int("log_index", ev.log_index)?.into(),
        ],
    );
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
    rows.push(
        watched_agents::NAME,
        "chain_id, address, from_block, discovered_by, via, block_number, log_index",
        vec![
            int("chain_id", chain_id)?.into(),
            hex_address(agent).into(),
            int("block_number", ev.block_number)?.into(),
            discovered_by.into(),
            hex_address(&ev.address).into(),
            int("block_number", ev.block_number)?.into(),
            int("log_index", ev.log_index)?.into(),
        ],
    );
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
    rows.push(
        agent_contract_events::NAME,
        "chain_id, agent, kind, value, block_number, log_index, timestamp",
        vec![
            int("chain_id", chain_id)?.into(),
            hex_address(&ev.address).into(),
            kind.into(),
            value.into(),
            int("block_number", ev.block_number)?.into(),
            int("log_index", ev.log_index)?.into(),
            int("block_timestamp", ev.block_timestamp)?.into(),
        ],
    );
    Ok(())
}
