//! The rows each event adds: its raw row and the facts decoded from it, noting which agents it
//! touched so their current state can be recomputed once per batch. One submodule per event
//! family.
//!
//! [`prepare`] binds every row that needs nothing from the database, before the batch reaches
//! the writer; [`write`] then credits token transfers against the stored payment bindings and
//! executes it all inside the batch's transaction.

mod cardano;
mod contracts;
mod funding;
mod identity;
mod payments;
mod reputation;

use super::StoreResult;
use super::batch::{Batch, ChainContext, EventRecord};
use super::decode::int;
use super::rows::Rows;
use crate::schema::{events, payment_bindings, x402_channels};
use crate::sources::{Decoded, Role};
use alloy::primitives::{Address, U256};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};

/// Agents whose current state a batch may have changed.
#[derive(Debug, Default)]
pub(super) struct Touched {
    /// ERC-8004 agents: (identity registry, token id).
    pub(super) erc8004: BTreeSet<(Address, U256)>,
    /// Agent contracts.
    pub(super) contracts: BTreeSet<Address>,
    /// (registry, owner) pairs whose every agent's operators may have changed.
    pub(super) owners: BTreeSet<(Address, Address)>,
    /// Masumi agents, by key.
    pub(super) masumi: BTreeSet<String>,
    /// Masumi escrows, by key.
    pub(super) escrows: BTreeSet<String>,
}

/// A batch with its rows bound, ready for the writer (`SqlWriter`'s prepared batch).
#[derive(Debug)]
pub struct PreparedBatch {
    /// The batch, without its events.
    pub(super) batch: Batch,
    /// Raw and fact rows of every event but token transfers.
    rows: Rows,
    /// Token transfers, stored only when credited to an agent.
    transfers: Vec<EventRecord>,
    /// Claims on x402 batch-settlement channels, credited once the channels are written.
    claims: Vec<EventRecord>,
    /// Events whose rows are in `rows`.
    stored: u64,
    /// Events stored, by (source, kind), for the metrics once committed.
    pub(super) kinds: BTreeMap<(&'static str, &'static str), u64>,
    /// Agents to recompute.
    pub(super) touched: Touched,
}

impl PreparedBatch {
    /// The rows the batch writes, by table (all of them once [`write`] has run).
    pub(super) fn rows_by_table(&self) -> &BTreeMap<&'static str, u64> {
        self.rows.counts()
    }
}

/// Binds the rows of `batch`'s events.
pub(super) fn prepare(mut batch: Batch) -> StoreResult<PreparedBatch> {
    let events = std::mem::take(&mut batch.events);
    let cardano = std::mem::take(&mut batch.cardano);
    let mut prepared = PreparedBatch {
        batch,
        rows: Rows::default(),
        transfers: Vec::new(),
        claims: Vec::new(),
        stored: 0,
        kinds: BTreeMap::new(),
        touched: Touched::default(),
    };
    let chain = prepared.batch.chain.clone();
    for event in events {
        if event.role == Role::Token {
            prepared.transfers.push(event);
            continue;
        }
        apply(&mut prepared.rows, &chain, &event, &mut prepared.touched)?;
        push_raw_event(&mut prepared.rows, chain.chain_id, &event)?;
        count_kind(&mut prepared.kinds, &event);
        prepared.stored += 1;
        if matches!(event.decoded, Ok(Decoded::ChannelClaimed { .. })) {
            prepared.claims.push(event);
        }
    }
    for tx in &cardano {
        cardano::apply(
            &mut prepared.rows,
            chain.chain_id,
            tx,
            &mut prepared.touched,
        )?;
        for action in &tx.actions {
            *prepared
                .kinds
                .entry(("masumi", action.kind.as_str()))
                .or_default() += 1;
        }
        for action in &tx.escrow {
            *prepared
                .kinds
                .entry(("masumi_escrow", action.event))
                .or_default() += 1;
        }
        prepared.stored += (tx.actions.len() + tx.escrow.len()) as u64;
    }
    Ok(prepared)
}

/// Writes a prepared batch's rows and the transfers credited to agents; returns the events
/// stored.
pub(super) async fn write(
    conn: &mut AnyConnection,
    prepared: &mut PreparedBatch,
) -> StoreResult<u64> {
    let chain = &prepared.batch.chain;
    let rows = &mut prepared.rows;
    // Transfers are credited by position against every binding up to them, this batch's too.
    rows.flush_table(conn, payment_bindings::NAME).await?;
    let credited = payments::credit_transfers(conn, rows, chain, &prepared.transfers).await?;
    funding::write_trail(
        conn,
        chain.chain_id,
        &credited.payments,
        &prepared.batch.funding,
        chain.funding_lookback,
    )
    .await?;
    // Claims are credited against every channel up to them, this batch's too.
    rows.flush_table(conn, x402_channels::NAME).await?;
    payments::credit_claims(conn, rows, chain, &prepared.claims).await?;
    for event in &credited.stored {
        push_raw_event(rows, chain.chain_id, event)?;
        count_kind(&mut prepared.kinds, event);
    }
    rows.flush(conn).await?;
    Ok(prepared.stored + credited.stored.len() as u64)
}

/// Buffers the facts of `ev`, which is not a token transfer.
fn apply(
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
        | Decoded::Rated { .. } => contracts::apply(rows, chain, ev, decoded, touched)?,
        Decoded::Registered { .. }
        | Decoded::IdentityTransfer { .. }
        | Decoded::Approval { .. }
        | Decoded::ApprovalForAll { .. }
        | Decoded::UriUpdated { .. }
        | Decoded::MetadataSet { .. } => identity::apply(rows, chain, ev, decoded, touched)?,
        Decoded::NewFeedback { .. }
        | Decoded::FeedbackRevoked { .. }
        | Decoded::ResponseAppended { .. }
        | Decoded::ValidationRequest { .. }
        | Decoded::ValidationResponse { .. } => reputation::apply(rows, chain, ev, decoded)?,
        Decoded::ChannelCreated { .. } => payments::open_channel(rows, chain, ev, decoded)?,
        Decoded::TokenTransfer { .. }
        | Decoded::AuthorizationUsed { .. }
        | Decoded::ChannelClaimed { .. }
        | Decoded::Ignored(_) => {}
    }
    Ok(())
}

fn count_kind(kinds: &mut BTreeMap<(&'static str, &'static str), u64>, ev: &EventRecord) {
    let kind = ev.decoded.as_ref().map_or("undecodable", |d| d.kind());
    *kinds.entry((ev.role.as_str(), kind)).or_default() += 1;
}

/// Adds the raw row of `ev`.
fn push_raw_event(rows: &mut Rows, chain_id: u64, ev: &EventRecord) -> StoreResult<()> {
    let (kind, error) = match &ev.decoded {
        Ok(decoded) => (Some(decoded.kind()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    rows.insert(events::Row {
        chain_id: int("chain_id", chain_id)?,
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
        block_hash: ev.block_hash.to_vec(),
        block_timestamp: int("block_timestamp", ev.block_timestamp)?,
        tx_hash: ev.tx_hash.to_vec(),
        address: ev.address.to_vec(),
        source: ev.role.as_str().to_string(),
        topic0: ev.topic0.map(|t| t.to_vec()),
        // The topics after the first, back to back (see migration 0007).
        topics: ev.topics.iter().flat_map(|t| t.0).collect(),
        data: ev.data.to_vec(),
        kind: kind.map(str::to_string),
        decode_error: error,
    });
    Ok(())
}
