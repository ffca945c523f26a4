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

/// Applies the facts of a batch's events and writes them; returns the events whose raw rows
/// should be stored (token transfers only when credited to an agent). Raw rows are written in
/// bulk by [`insert_raw_events`].
pub(super) async fn apply_all<'e>(
    conn: &mut SqliteConnection,
    chain: &ChainContext,
    events: &'e [EventRecord],
    touched: &mut Touched,
) -> StoreResult<Vec<&'e EventRecord>> {
    let mut rows = Rows::default();
    let mut stored = Vec::with_capacity(events.len());
    let mut transfers = Vec::new();
    for event in events {
        if event.role == Role::Token {
            transfers.push(event);
        } else {
            apply(&mut rows, chain, event, touched).await?;
            stored.push(event);
        }
    }
    // Transfers are credited by position against every binding up to them, this batch's too.
    rows.flush_table(conn, "payment_bindings").await?;
    stored.extend(payments::credit_transfers(conn, &mut rows, chain, &transfers).await?);
    rows.flush(conn).await?;
    Ok(stored)
}

/// Buffers the facts of `ev`, which is not a token transfer.
async fn apply(
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
    touched: &mut Touched,
) -> StoreResult<()> {
    let Ok(decoded) = &ev.decoded else {
        return Ok(());
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
    Ok(())
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
