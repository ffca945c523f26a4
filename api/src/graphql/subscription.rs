//! The subscription root, over `graphql-transport-ws` at `/graphql/ws`: agents registered or
//! updated (with the `agents` filter), reputation changes, and new payments. Every event comes
//! from committed rows in final blocks (see `changes`), so none is ever undone by a reorg;
//! `sinceBlock` first replays what was committed after that block, then continues live without
//! a gap or a repeat (`super::live_changes`; a subscriber that falls behind the feed is told
//! where to resume, and its stream ends).
//!
//! What a subscription may cost is bounded: each holds one of its websocket's
//! `max_subscriptions_per_connection` places for as long as it lives; a replay starts at most
//! `max_replay_blocks` behind the newest final block and is read [`REPLAY_PAGE_ROWS`] rows at a
//! time, only the kind of change the subscription reports, so its memory stays flat however
//! long it is, each page charged to the socket's client's share of the server's time (a client
//! over it waits: see `crate::time_share`); and a live change is read once per distinct
//! subscription, not once per subscriber ([`super::shared_reads`]).

use super::agent::Agent;
use super::filter::AgentFilter;
use super::live_changes::{Numbered, Wanted, live, wants};
use super::shared_reads::SharedReads;
use super::subscription_places::LiveSubscriptions;
use crate::changes::FIRST_LOOK_WAIT;
use crate::read::agents::{self, AgentRow};
use crate::read::changes::{Change, Pages, PaymentRow};
use crate::state::ApiState;
use crate::time_share::ChargeTo;
use agentindex_indexer::store::low_priority;
use async_graphql::{Context, Error, ID, Result, SimpleObject, Subscription};
use futures_util::Stream;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Changes a replay reads from the store at a time: what one replaying subscription holds.
pub const REPLAY_PAGE_ROWS: i64 = 200;

/// Root of every subscription.
pub struct Subscription;

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
    ) -> Result<impl Stream<Item = Result<Agent>> + use<>> {
        let selection = filter.unwrap_or_default().selection(None);
        events(ctx, Wanted::Agents(Box::new(selection)), since_block).await
    }

    /// An agent each time its stored reputation is recomputed.
    async fn reputation_changed(
        &self,
        ctx: &Context<'_>,
        agent_id: ID,
        since_block: Option<i64>,
    ) -> Result<impl Stream<Item = Result<Agent>> + use<>> {
        events(ctx, Wanted::Reputation(agent_id.0), since_block).await
    }

    /// Payments credited to `agentId` (every agent when absent).
    async fn new_payments(
        &self,
        ctx: &Context<'_>,
        agent_id: Option<ID>,
        since_block: Option<i64>,
    ) -> Result<impl Stream<Item = Result<Payment>> + use<>> {
        let wanted = Wanted::Payments(agent_id.map(|id| id.0));
        let stream = raw(ctx, wanted, since_block).await?;
        Ok(async_stream::stream! {
            for await change in stream {
                match change {
                    Ok(Numbered { change: Change::Payment { payment, .. }, .. }) => {
                        yield Ok(Payment::from(payment));
                    }
                    Ok(_) => {}
                    Err(error) => yield Err(error),
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
) -> Result<impl Stream<Item = Result<Agent>> + use<>> {
    let state = ctx.data_unchecked::<ApiState>().clone();
    let shared = ctx.data_opt::<Arc<SharedReads>>().cloned();
    let stream = raw(ctx, wanted.clone(), since_block).await?;
    Ok(async_stream::stream! {
        for await change in stream {
            let Numbered { seq, change } = match change {
                Ok(numbered) => numbered,
                Err(error) => {
                    yield Err(error);
                    continue;
                }
            };
            let Some(key) = agent_read(&wanted, &change) else {
                continue;
            };
            let read = || read_agent(&state, &wanted, key);
            let row = match (seq, &shared) {
                (Some(seq), Some(shared)) => {
                    shared.agent(seq, read_name(&wanted, key), read).await
                }
                _ => read().await,
            };
            match row {
                Ok(Some(row)) => yield Ok(Agent(row)),
                Ok(None) => {}
                Err(e) => tracing::warn!(target: "agentindex::api", error = %e, "subscription read failed"),
            }
        }
    })
}

/// The agent a change makes `wanted` read, if any.
fn agent_read<'c>(wanted: &Wanted, change: &'c Change) -> Option<&'c str> {
    match (wanted, change) {
        (Wanted::Agents(_), Change::Agent { key, .. } | Change::Documents { key, .. })
        | (Wanted::Reputation(_), Change::Reputation { key, .. }) => Some(key.as_str()),
        _ => None,
    }
}

async fn read_agent(
    state: &ApiState,
    wanted: &Wanted,
    key: &str,
) -> sqlx::Result<Option<AgentRow>> {
    let pool = state.store.reader();
    match wanted {
        Wanted::Agents(selection) => agents::matching(pool, selection, key).await,
        Wanted::Reputation(_) => agents::by_key(pool, key).await,
        Wanted::Payments(_) => Ok(None),
    }
}

/// The read `wanted` makes of agent `key`, normalised: two subscriptions with the same name read
/// the same row.
fn read_name(wanted: &Wanted, key: &str) -> String {
    match wanted {
        Wanted::Agents(selection) => {
            let mut selection = selection.as_ref().clone();
            selection.chain_ids.sort_unstable();
            selection.chain_ids.dedup();
            selection.sources.sort_unstable();
            selection.sources.dedup();
            selection.tags.sort_unstable();
            selection.tags.dedup();
            format!("agent {key} matching {selection:?}")
        }
        Wanted::Reputation(_) | Wanted::Payments(_) => format!("agent {key}"),
    }
}

/// The changes for `wanted`: those committed after `since_block` (when given), read from the
/// store a page at a time, then live ones. Holds one of the connection's subscription places
/// for as long as the stream lives.
async fn raw(
    ctx: &Context<'_>,
    wanted: Wanted,
    since_block: Option<i64>,
) -> Result<impl Stream<Item = Result<Numbered>> + use<>> {
    let place = ctx
        .data_opt::<LiveSubscriptions>()
        .map(LiveSubscriptions::take)
        .transpose()?;
    let state = ctx.data_unchecked::<ApiState>().clone();
    let charge = ctx.data_opt::<ChargeTo>().cloned();
    let (receiver, published) = state
        .changes
        .subscribe(FIRST_LOOK_WAIT)
        .await
        .map_err(|e| Error::new(e.to_string()))?;
    if let Some(since) = since_block {
        check_replay_reach(since, &published, state.api.websocket.max_replay_blocks)?;
    }
    let replayed_through = published.clone();
    Ok(async_stream::stream! {
        let _place = place;
        if let Some(since) = since_block {
            for (chain_id, up_to) in published {
                let mut pages = Pages::new(chain_id, since, up_to).only(wanted.replayed());
                loop {
                    // A replay reads at its client's share of the server's time: each page
                    // is charged, and one over its share waits until it is back under.
                    if let Some(charge) = &charge {
                        while let Some(over) = charge.time.refusal(charge.client) {
                            tokio::time::sleep(over.wait).await;
                        }
                    }
                    let started = std::time::Instant::now();
                    // A replay is bulk reading nobody else waits on: it reads the low-priority
                    // pool, so a client replaying far back never holds the connections that
                    // lookups and searches are handed (under the attack benchmark, several
                    // subscriptions replaying at once held most of the ordinary pool for
                    // seconds, and lookups waited for a connection).
                    let store = &state.store;
                    let page = low_priority::scope(async {
                        // Inside the scope, the store hands out its low-priority pool.
                        pages.next(store.reader(), REPLAY_PAGE_ROWS).await
                    })
                    .await;
                    if let Some(charge) = &charge {
                        charge.time.charge(charge.client, started.elapsed());
                    }
                    match page {
                        Ok(Some(page)) => {
                            for change in page {
                                if wants(&wanted, &change) {
                                    yield Ok(Numbered { seq: None, change });
                                }
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            tracing::warn!(target: "agentindex::api", error = %e, chain_id, since, "subscription replay failed");
                            // Continuing would leave a gap; the subscription ends instead.
                            yield Err(Error::new(format!(
                                "reading the changes of chain {chain_id} after block {since} failed; subscribe again"
                            )));
                            return;
                        }
                    }
                }
            }
        }
        for await change in live(receiver, wanted, since_block, replayed_through) {
            yield change;
        }
    })
}

/// Refuses a replay from further back than `max_blocks` behind any chain's newest final block:
/// a replay reads every change since, and a far one would tie up the store for as long.
fn check_replay_reach(since: i64, published: &BTreeMap<i64, i64>, max_blocks: u64) -> Result<()> {
    let max_blocks = i64::try_from(max_blocks).unwrap_or(i64::MAX);
    for (chain_id, up_to) in published {
        let behind = up_to.saturating_sub(since);
        if behind > max_blocks {
            return Err(Error::new(format!(
                "sinceBlock {since} is {behind} blocks behind chain {chain_id}'s newest final block \
                 {up_to}; a replay may start at most {max_blocks} blocks back (sinceBlock >= {})",
                up_to - max_blocks
            )));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::check_replay_reach;
    use std::collections::BTreeMap;

    #[test]
    fn a_replay_further_back_than_the_bound_is_refused_with_how_far_is_allowed() {
        let published = BTreeMap::from([(1, 150_000), (2, 20)]);
        assert!(check_replay_reach(50_000, &published, 100_000).is_ok());
        let refused = check_replay_reach(49_999, &published, 100_000).unwrap_err();
        assert_eq!(
            refused.message,
            "sinceBlock 49999 is 100001 blocks behind chain 1's newest final block 150000; \
             a replay may start at most 100000 blocks back (sinceBlock >= 50000)"
        );
    }
}
