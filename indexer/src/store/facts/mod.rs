//! Writes one event: its raw row and the facts decoded from it, and notes which agents it
//! touched so their current state can be recomputed once per batch. One submodule per event
//! family.

mod contracts;
mod identity;
mod payments;
mod reputation;

use super::batch::{ChainContext, EventRecord};
use super::rows::Rows;
use super::{QueryContext, StoreResult};
use crate::sources::{Decoded, Role, hex_address, hex_b256};
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

/// Applies the facts of `ev`; returns whether its raw row should be stored (token transfers are
/// kept only when credited). Raw rows are written in bulk by [`insert_raw_events`].
pub(super) async fn apply(
    conn: &mut SqliteConnection,
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
    touched: &mut Touched,
) -> StoreResult<bool> {
    if ev.role == Role::Token {
        return payments::apply_token(conn, rows, chain, ev).await;
    }
    let Ok(decoded) = &ev.decoded else {
        return Ok(true);
    };
    match decoded {
        Decoded::AgentCreated { .. }
        | Decoded::Registry { .. }
        | Decoded::CardUpdated(_)
        | Decoded::AgentOwnerChanged { .. }
        | Decoded::ActiveChanged(_)
        | Decoded::HeartbeatIntervalChanged(_)
        | Decoded::Heartbeat(_)
        | Decoded::PaymentReceived { .. }
        | Decoded::Withdrawn { .. }
        | Decoded::Rated { .. } => contracts::apply(rows, chain, ev, decoded, touched).await?,
        Decoded::Registered { .. }
        | Decoded::IdentityTransfer { .. }
        | Decoded::Approval { .. }
        | Decoded::ApprovalForAll { .. }
        | Decoded::UriUpdated { .. }
        | Decoded::MetadataSet { .. } => identity::apply(rows, chain, ev, decoded, touched).await?,
        Decoded::NewFeedback { .. }
        | Decoded::FeedbackRevoked { .. }
        | Decoded::ResponseAppended { .. }
        | Decoded::ValidationRequest { .. }
        | Decoded::ValidationResponse { .. } => reputation::apply(rows, chain, ev, decoded).await?,
        Decoded::TokenTransfer { .. } | Decoded::AuthorizationUsed { .. } | Decoded::Ignored(_) => {
        }
    }
    Ok(true)
}

/// Raw events per multi-row INSERT (13 parameters each, well under SQLite's 32,766).
const RAW_ROWS_PER_STATEMENT: usize = 500;

/// Stores the raw rows of `events` with a few multi-row INSERTs instead of one per event.
pub(super) async fn insert_raw_events(
    conn: &mut SqliteConnection,
    chain_id: u64,
    events: &[&EventRecord],
) -> StoreResult<()> {
    for chunk in events.chunks(RAW_ROWS_PER_STATEMENT) {
        let mut insert = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp, tx_hash, address,
                source, topic0, topics, data, kind, decode_error) ",
        );
        insert.push_values(chunk, |mut row, ev| {
            let topics: Vec<String> = ev.topics.iter().map(hex_b256).collect();
            let (kind, error) = match &ev.decoded {
                Ok(decoded) => (Some(decoded.kind()), None),
                Err(e) => (None, Some(e.to_string())),
            };
            row.push_bind(i(chain_id))
                .push_bind(i(ev.block_number))
                .push_bind(i(ev.log_index))
                .push_bind(hex_b256(&ev.block_hash))
                .push_bind(i(ev.block_timestamp))
                .push_bind(hex_b256(&ev.tx_hash))
                .push_bind(hex_address(&ev.address))
                .push_bind(ev.role.as_str())
                .push_bind(ev.topic0.as_ref().map(hex_b256))
                .push_bind(serde_json::to_string(&topics).expect("strings serialise"))
                .push_bind(ev.data.to_vec())
                .push_bind(kind)
                .push_bind(error);
        });
        insert
            .build()
            .execute(&mut *conn)
            .await
            .context("inserting raw events")?;
    }
    Ok(())
}
