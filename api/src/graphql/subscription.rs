//! The subscription root, over `graphql-transport-ws` at `/graphql/ws`: agents registered or
//! updated (with the `agents` filter), reputation changes, and new payments. Every event comes
//! from committed rows in final blocks (see `changes`), so none is ever undone by a reorg;
//! `sinceBlock` first replays what was committed after that block, then continues live without
//! a gap or a repeat.

use super::agent::Agent;
use super::filter::AgentFilter;
use crate::read::agents;
use crate::read::changes::{self, Change, PaymentRow};
use crate::state::ApiState;
use async_graphql::{Context, ID, Result, SimpleObject, Subscription};
use futures_util::Stream;
use std::collections::BTreeMap;
use tokio::sync::broadcast::error::RecvError;

/// Root of every subscription.
pub struct Subscription;

/// Which changes a subscription wants.
#[derive(Clone)]
enum Wanted {
    Agents(Box<AgentFilter>),
    Reputation(String),
    Payments(Option<String>),
}

#[Subscription]
impl Subscription {
    /// Agents registered, whose on-chain state changed, or whose documents (card,
    /// registration file) changed, that match `filter`. `sinceBlock` replays on-chain changes;
    /// document changes are reported live.
    async fn agents_changed(
        &self,
        ctx: &Context<'_>,
        filter: Option<AgentFilter>,
        since_block: Option<i64>,
    ) -> Result<impl Stream<Item = Agent> + use<>> {
        let wanted = Wanted::Agents(Box::new(filter.unwrap_or_default()));
        events(ctx, wanted, since_block).await
    }

    /// An agent each time its stored reputation is recomputed.
    async fn reputation_changed(
        &self,
        ctx: &Context<'_>,
        agent_id: ID,
        since_block: Option<i64>,
    ) -> Result<impl Stream<Item = Agent> + use<>> {
        events(ctx, Wanted::Reputation(agent_id.0), since_block).await
    }

    /// Payments credited to `agentId` (every agent when absent).
    async fn new_payments(
        &self,
        ctx: &Context<'_>,
        agent_id: Option<ID>,
        since_block: Option<i64>,
    ) -> Result<impl Stream<Item = Payment> + use<>> {
        let wanted = Wanted::Payments(agent_id.map(|id| id.0));
        let stream = raw(ctx, wanted, since_block).await?;
        Ok(async_stream::stream! {
            for await change in stream {
                if let Change::Payment { payment, .. } = change {
                    yield Payment::from(payment);
                }
            }
        })
    }
}

/// Agent events for `wanted`, re-read from the store so they carry current fields.
async fn events(
    ctx: &Context<'_>,
    wanted: Wanted,
    since_block: Option<i64>,
) -> Result<impl Stream<Item = Agent> + use<>> {
    let state = ctx.data_unchecked::<ApiState>().clone();
    let stream = raw(ctx, wanted.clone(), since_block).await?;
    Ok(async_stream::stream! {
        for await change in stream {
            let pool = state.store.reader();
            let row = match (&wanted, &change) {
                (Wanted::Agents(filter), Change::Agent { key, .. } | Change::Documents { key, .. }) => {
                    agents::matching(pool, &filter.selection(None), key).await
                }
                (Wanted::Reputation(_), Change::Reputation { key, .. }) => {
                    agents::by_key(pool, key).await
                }
                _ => Ok(None),
            };
            match row {
                Ok(Some(row)) => yield Agent(row),
                Ok(None) => {}
                Err(e) => tracing::warn!(target: "agentindex::api", error = %e, "subscription read failed"),
            }
        }
    })
}

/// The changes for `wanted`: those committed after `since_block` (when given), then live ones.
async fn raw(
    ctx: &Context<'_>,
    wanted: Wanted,
    since_block: Option<i64>,
) -> Result<impl Stream<Item = Change> + use<>> {
    let state = ctx.data_unchecked::<ApiState>().clone();
    let (mut receiver, published) = state.changes.subscribe();
    let mut replay = Vec::new();
    if let Some(since) = since_block {
        for (chain_id, up_to) in &published {
            replay.extend(changes::between(state.store.reader(), *chain_id, since, *up_to).await?);
        }
    }
    let skip_through: BTreeMap<i64, i64> = if since_block.is_some() {
        published
    } else {
        BTreeMap::new()
    };
    Ok(async_stream::stream! {
        for change in replay {
            if wants(&wanted, &change) {
                yield change;
            }
        }
        loop {
            match receiver.recv().await {
                Ok(change) => {
                    let replayed = change.chain_and_block().is_some_and(|(chain, block)| {
                        skip_through.get(&chain).is_some_and(|through| block <= *through)
                    });
                    if replayed {
                        continue;
                    }
                    if wants(&wanted, &change) {
                        yield change;
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(target: "agentindex::api", missed, "a subscriber fell behind and missed changes");
                }
                Err(RecvError::Closed) => break,
            }
        }
    })
}

fn wants(wanted: &Wanted, change: &Change) -> bool {
    match (wanted, change) {
        (Wanted::Agents(_), Change::Agent { .. } | Change::Documents { .. }) => true,
        (Wanted::Reputation(id), Change::Reputation { key, .. }) => id == key,
        (Wanted::Payments(id), Change::Payment { payment, .. }) => {
            id.as_ref().is_none_or(|id| *id == payment.agent_key)
        }
        _ => false,
    }
}

/// A payment credited to an agent.
#[derive(SimpleObject)]
pub(crate) struct Payment {
    /// The agent credited.
    agent_id: ID,
    /// Who paid, lower-case hex.
    payer: String,
    /// The address paid (bound to the agent then).
    payee: String,
    /// Token contract (the zero address for the chain's coin).
    token: String,
    /// Amount in the token's smallest unit, as a decimal string.
    amount: String,
    /// Settled an EIP-3009 authorisation (an x402 payment).
    x402: bool,
    /// Block.
    block_number: i64,
    /// Log index in the block.
    log_index: i64,
    /// Transaction.
    tx_hash: String,
    /// Block timestamp.
    timestamp: i64,
}

impl From<PaymentRow> for Payment {
    fn from(p: PaymentRow) -> Self {
        Self {
            agent_id: ID(p.agent_key),
            payer: p.payer,
            payee: p.payee,
            token: p.token,
            amount: p.amount,
            x402: p.x402,
            block_number: p.block_number,
            log_index: p.log_index,
            tx_hash: p.tx_hash,
            timestamp: p.timestamp,
        }
    }
}
