//! Writes one event: its raw row and the facts decoded from it, and notes which agents it
//! touched so their current state can be recomputed once per batch.

use super::batch::{ChainContext, EventRecord};
use super::keys::{contract_agent_key, erc8004_agent_key};
use super::{QueryContext, StoreResult};
use crate::sources::{Decoded, RegistryAction, Role, hex_address, hex_b256};
use alloy::primitives::{Address, U256};
use sqlx::SqliteConnection;
use std::collections::BTreeSet;

/// Agents whose current state a batch may have changed.
#[derive(Debug, Default)]
pub(super) struct Touched {
    /// ERC-8004 agents: (identity registry, token id).
    pub(super) erc8004: BTreeSet<(Address, U256)>,
    /// Agent contracts.
    pub(super) contracts: BTreeSet<Address>,
    /// (registry, owner) pairs whose every agent's operators may have changed.
    pub(super) owners: BTreeSet<(Address, Address)>,
}

fn i(value: u64) -> i64 {
    value as i64
}

/// Applies `ev`; returns whether it was stored (token transfers are kept only when credited).
pub(super) async fn apply(
    conn: &mut SqliteConnection,
    chain: &ChainContext,
    ev: &EventRecord,
    touched: &mut Touched,
) -> StoreResult<bool> {
    let chain_id = chain.chain_id;
    let (block, log) = (i(ev.block_number), i(ev.log_index));
    let emitter = hex_address(&ev.address);
    // Token ids in reputation and validation events refer to the identity registry.
    let identity = chain.identity.unwrap_or(ev.address);
    let identity_hex = hex_address(&identity);

    if ev.role == Role::Token {
        return apply_token(conn, chain, ev).await;
    }
    insert_raw(conn, chain_id, ev).await?;
    let Ok(decoded) = &ev.decoded else {
        return Ok(true);
    };
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
        Decoded::PaymentReceived {
            payer,
            token,
            amount,
        } => {
            // Token payments are counted from the token's own Transfer; only native coin has
            // no other trace.
            if *token == Address::ZERO {
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
        Decoded::Registered {
            token_id,
            uri,
            owner,
        } => {
            sqlx::query(
                "INSERT INTO identity_registrations (chain_id, registry, token_id, owner, uri, block_number, log_index, tx_hash, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(hex_address(owner))
            .bind(uri)
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting a registration")?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::IdentityTransfer { from, to, token_id } => {
            sqlx::query(
                "INSERT INTO identity_transfers (chain_id, registry, token_id, from_address, to_address, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(hex_address(from))
            .bind(hex_address(to))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting an identity transfer")?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::Approval {
            owner,
            approved,
            token_id,
        } => {
            approval(
                conn,
                chain_id,
                &emitter,
                owner,
                approved,
                Some(token_id),
                *approved != Address::ZERO,
                ev,
            )
            .await?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::ApprovalForAll {
            owner,
            operator,
            approved,
        } => {
            approval(
                conn, chain_id, &emitter, owner, operator, None, *approved, ev,
            )
            .await?;
            touched.owners.insert((ev.address, *owner));
        }
        Decoded::UriUpdated {
            token_id,
            uri,
            updated_by,
        } => {
            sqlx::query(
                "INSERT INTO identity_uri_updates (chain_id, registry, token_id, uri, updated_by, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(uri)
            .bind(hex_address(updated_by))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a URI update")?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::MetadataSet {
            token_id,
            key,
            value,
        } => {
            sqlx::query(
                "INSERT INTO identity_metadata (chain_id, registry, token_id, key, value, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(key)
            .bind(value.as_ref())
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting metadata")?;
            if key == "agentWallet" {
                let agent_key = erc8004_agent_key(chain_id, &ev.address, token_id);
                let wallet = super::agents::wallet_from_metadata(value)
                    .map(|w| hex_address(&w))
                    .unwrap_or_default();
                bind_payments(conn, chain_id, &agent_key, &wallet, ev).await?;
            }
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::NewFeedback {
            token_id,
            client,
            index,
            value,
            decimals,
            tag1,
            tag2,
            endpoint,
            uri,
            hash,
            shape,
        } => {
            sqlx::query(
                "INSERT INTO feedback (chain_id, registry, token_id, client, feedback_index, value, value_decimals, tag1, tag2,
                    endpoint, feedback_uri, feedback_hash, shape, block_number, log_index, tx_hash, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(token_id.to_string())
            .bind(hex_address(client))
            .bind(index.map(i))
            .bind(value.to_string())
            .bind(i64::from(*decimals))
            .bind(tag1)
            .bind(tag2)
            .bind(endpoint)
            .bind(uri)
            .bind(hex_b256(hash))
            .bind(shape.as_str())
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting feedback")?;
        }
        Decoded::FeedbackRevoked {
            token_id,
            client,
            index,
        } => {
            sqlx::query(
                "INSERT INTO feedback_revocations (chain_id, registry, token_id, client, feedback_index, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(token_id.to_string())
            .bind(hex_address(client))
            .bind(i(*index))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a feedback revocation")?;
        }
        Decoded::ResponseAppended {
            token_id,
            client,
            index,
            responder,
            uri,
            hash,
        } => {
            sqlx::query(
                "INSERT INTO feedback_responses (chain_id, registry, token_id, client, feedback_index, responder, response_uri,
                    response_hash, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(token_id.to_string())
            .bind(hex_address(client))
            .bind(i(*index))
            .bind(hex_address(responder))
            .bind(uri)
            .bind(hex_b256(hash))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a feedback response")?;
        }
        Decoded::ValidationRequest {
            validator,
            token_id,
            uri,
            request_hash,
        } => {
            sqlx::query(
                "INSERT INTO validation_requests (chain_id, registry, request_hash, validator, token_id, request_uri,
                    block_number, log_index, tx_hash)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(hex_b256(request_hash))
            .bind(hex_address(validator))
            .bind(token_id.to_string())
            .bind(uri)
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .execute(&mut *conn)
            .await
            .context("inserting a validation request")?;
        }
        Decoded::ValidationResponse {
            validator,
            token_id,
            request_hash,
            response,
            uri,
            response_hash,
            tag,
            shape,
        } => {
            sqlx::query(
                "INSERT INTO validation_responses (chain_id, registry, request_hash, validator, token_id, response, response_uri,
                    response_hash, tag, shape, block_number, log_index, tx_hash, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(hex_b256(request_hash))
            .bind(hex_address(validator))
            .bind(token_id.to_string())
            .bind(i64::from(*response))
            .bind(uri)
            .bind(hex_b256(response_hash))
            .bind(tag)
            .bind(shape.as_str())
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting a validation response")?;
        }
        Decoded::TokenTransfer { .. } | Decoded::AuthorizationUsed { .. } | Decoded::Ignored(_) => {
        }
    }
    Ok(true)
}

/// A token Transfer counts when its recipient is bound to an agent at that point of the chain;
/// only then is it stored (so what is stored never depends on how ranges were cut).
async fn apply_token(
    conn: &mut SqliteConnection,
    chain: &ChainContext,
    ev: &EventRecord,
) -> StoreResult<bool> {
    let Ok(Decoded::TokenTransfer { from, to, value }) = &ev.decoded else {
        return Ok(false);
    };
    let agents: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT b.agent_key FROM payment_bindings b
         WHERE b.chain_id = ?1 AND b.address = ?2 AND (b.block_number, b.log_index) <= (?3, ?4)
           AND NOT EXISTS (
             SELECT 1 FROM payment_bindings n
             WHERE n.agent_key = b.agent_key
               AND (n.block_number, n.log_index) > (b.block_number, b.log_index)
               AND (n.block_number, n.log_index) <= (?3, ?4))",
    )
    .bind(i(chain.chain_id))
    .bind(hex_address(to))
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .fetch_all(&mut *conn)
    .await
    .context("finding the agents a payment address is bound to")?;
    if agents.is_empty() {
        return Ok(false);
    }
    insert_raw(conn, chain.chain_id, ev).await?;
    for agent_key in &agents {
        insert_payment(
            conn,
            chain.chain_id,
            ev,
            agent_key,
            &ev.address,
            from,
            to,
            value,
            ev.settlement_nonce.as_ref(),
        )
        .await?;
    }
    Ok(true)
}

async fn insert_raw(
    conn: &mut SqliteConnection,
    chain_id: u64,
    ev: &EventRecord,
) -> StoreResult<()> {
    let topics: Vec<String> = ev.topics.iter().map(hex_b256).collect();
    let (kind, error) = match &ev.decoded {
        Ok(decoded) => (Some(decoded.kind()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    sqlx::query(
        "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp, tx_hash, address, source,
            topic0, topics, data, kind, decode_error)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .bind(hex_b256(&ev.block_hash))
    .bind(i(ev.block_timestamp))
    .bind(hex_b256(&ev.tx_hash))
    .bind(hex_address(&ev.address))
    .bind(ev.role.as_str())
    .bind(ev.topic0.as_ref().map(hex_b256))
    .bind(serde_json::to_string(&topics).expect("strings serialise"))
    .bind(ev.data.as_ref())
    .bind(kind)
    .bind(error)
    .execute(&mut *conn)
    .await
    .context("inserting a raw event")?;
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

async fn bind_payments(
    conn: &mut SqliteConnection,
    chain_id: u64,
    agent_key: &str,
    address: &str,
    ev: &EventRecord,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO payment_bindings (chain_id, agent_key, address, block_number, log_index) VALUES (?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(agent_key)
    .bind(address)
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .execute(&mut *conn)
    .await
    .context("binding a payment address")?;
    Ok(())
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

#[allow(clippy::too_many_arguments)]
async fn approval(
    conn: &mut SqliteConnection,
    chain_id: u64,
    registry: &str,
    owner: &Address,
    operator: &Address,
    token_id: Option<&U256>,
    approved: bool,
    ev: &EventRecord,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO identity_approvals (chain_id, registry, owner, operator, token_id, approved, block_number, log_index)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(registry)
    .bind(hex_address(owner))
    .bind(hex_address(operator))
    .bind(token_id.map(U256::to_string))
    .bind(approved)
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .execute(&mut *conn)
    .await
    .context("inserting an approval")?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn insert_payment(
    conn: &mut SqliteConnection,
    chain_id: u64,
    ev: &EventRecord,
    agent_key: &str,
    token: &Address,
    payer: &Address,
    payee: &Address,
    amount: &U256,
    nonce: Option<&alloy::primitives::B256>,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO payments (chain_id, block_number, log_index, agent_key, tx_hash, token, payer, payee, amount,
            eip3009, nonce, timestamp)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .bind(agent_key)
    .bind(hex_b256(&ev.tx_hash))
    .bind(hex_address(token))
    .bind(hex_address(payer))
    .bind(hex_address(payee))
    .bind(amount.to_string())
    .bind(nonce.is_some())
    .bind(nonce.map(hex_b256))
    .bind(i(ev.block_timestamp))
    .execute(&mut *conn)
    .await
    .context("inserting a payment")?;
    Ok(())
}
