//! Facts of agent contracts and of the factories and registries that find them.

use super::payments::{bind_payments, insert_payment};
use super::{Touched, i};
use crate::sources::{Decoded, RegistryAction, hex_address, hex_b256};
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::keys::contract_agent_key;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use sqlx::SqliteConnection;

pub(super) async fn apply(
    conn: &mut SqliteConnection,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
    touched: &mut Touched,
) -> StoreResult<()> {
    let chain_id = chain.chain_id;
    let (block, log) = (i(ev.block_number), i(ev.log_index));
    let emitter = hex_address(&ev.address);
    match decoded {
        Decoded::AgentCreated { agent, owner: _ } => {
            watch(conn, chain_id, agent, ev, "factory").await?;
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
            sqlx::query(
                "INSERT INTO registry_events (chain_id, registry, agent, kind, actor, metadata_uri, pending, reason, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(hex_address(agent))
            .bind(decoded.kind())
            .bind(hex_address(actor))
            .bind(uri)
            .bind(pending)
            .bind(reason)
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a registry event")?;
            if matches!(action, RegistryAction::Registered { .. }) {
                watch(conn, chain_id, agent, ev, "registry").await?;
            }
            touched.contracts.insert(*agent);
        }
        Decoded::CardUpdated(card) => {
            let json = serde_json::to_string(card).expect("card fields serialise");
            agent_fact(conn, chain_id, ev, "card", &json).await?;
            touched.contracts.insert(ev.address);
        }
        Decoded::AgentOwnerChanged { new_owner } => {
            agent_fact(conn, chain_id, ev, "owner", &hex_address(new_owner)).await?;
            touched.contracts.insert(ev.address);
        }
        Decoded::ActiveChanged(active) => {
            agent_fact(
                conn,
                chain_id,
                ev,
                "active",
                if *active { "1" } else { "0" },
            )
            .await?;
            touched.contracts.insert(ev.address);
        }
        Decoded::HeartbeatIntervalChanged(interval) => {
            agent_fact(conn, chain_id, ev, "interval", &interval.to_string()).await?;
            touched.contracts.insert(ev.address);
        }
        Decoded::Heartbeat(at) => {
            agent_fact(conn, chain_id, ev, "heartbeat", &at.to_string()).await?;
            touched.contracts.insert(ev.address);
        }
        // Token payments are counted from the token's own Transfer; only native coin has no
        // other trace.
        Decoded::PaymentReceived {
            payer,
            token,
            amount,
        } if *token == Address::ZERO => {
            let key = contract_agent_key(chain_id, &ev.address);
            insert_payment(
                conn,
                chain_id,
                ev,
                &key,
                token,
                payer,
                &ev.address,
                amount,
                None,
            )
            .await?;
        }
        Decoded::Withdrawn { token, to, amount } => {
            sqlx::query(
                "INSERT INTO withdrawals (chain_id, agent, token, to_address, amount, block_number, log_index, tx_hash)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(hex_address(token))
            .bind(hex_address(to))
            .bind(amount.to_string())
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .execute(&mut *conn)
            .await
            .context("inserting a withdrawal")?;
        }
        Decoded::Rated { rater, score } => {
            sqlx::query(
                "INSERT INTO ratings (chain_id, agent, rater, score, block_number, log_index, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(hex_address(rater))
            .bind(i64::from(*score))
            .bind(block)
            .bind(log)
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting a rating")?;
        }
        _ => {}
    }
    Ok(())
}

/// Starts following an agent contract and counting payments into it.
async fn watch(
    conn: &mut SqliteConnection,
    chain_id: u64,
    agent: &Address,
    ev: &EventRecord,
    discovered_by: &str,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO watched_agents (chain_id, address, from_block, discovered_by, via, block_number, log_index)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(hex_address(agent))
    .bind(i(ev.block_number))
    .bind(discovered_by)
    .bind(hex_address(&ev.address))
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .execute(&mut *conn)
    .await
    .context("watching an agent contract")?;
    let key = contract_agent_key(chain_id, agent);
    bind_payments(conn, chain_id, &key, &hex_address(agent), ev).await
}

async fn agent_fact(
    conn: &mut SqliteConnection,
    chain_id: u64,
    ev: &EventRecord,
    kind: &str,
    value: &str,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO agent_contract_events (chain_id, agent, kind, value, block_number, log_index, timestamp)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(hex_address(&ev.address))
    .bind(kind)
    .bind(value)
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .bind(i(ev.block_timestamp))
    .execute(&mut *conn)
    .await
    .context("inserting an agent contract event")?;
    Ok(())
}
