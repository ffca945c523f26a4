//! The subscription root, over `graphql-transport-ws` at `/graphql/ws`: agents registered or
//! updated (with the `agents` filter), reputation changes, and new payments. Every event comes
//! from committed rows in final blocks (see `changes`), so none is ever undone by a reorg;
//! `sinceBlock` first replays what was committed after that block, then continues live without
//! a gap or a repeat.
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
use super::shared_reads::SharedReads;
use super::subscription_places::LiveSubscriptions;
use crate::changes::{FIRST_LOOK_WAIT, Published};
use crate::read::agents::Selection;
use crate::read::agents::{self, AgentRow};
use crate::read::changes::{Change, Kind, Pages, PaymentRow};
use crate::state::ApiState;
use crate::time_share::ChargeTo;
use agentindex_indexer::store::low_priority;
use async_graphql::{Context, Error, ID, Result, SimpleObject, Subscription};
use futures_util::Stream;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// Changes a replay reads from the store at a time: what one replaying subscription holds.
pub const REPLAY_PAGE_ROWS: i64 = 200;

/// Root of every subscription.
pub struct Subscription;

/// Which changes a subscription wants.
#[derive(Clone)]
enum Wanted {
    Agents(Box<Selection>),
    Reputation(String),
    Payments(Option<String>),
}

impl Wanted {
    /// The only kind of stored change a replay for this reads.
    fn replayed(&self) -> Kind {
        match self {
            Wanted::Agents(_) => Kind::Agents,
            Wanted::Reputation(_) => Kind::Reputation,
            Wanted::Payments(_) => Kind::Payments,
        }
    }
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

/// A change and its number in the live feed (`None` when replayed from the store).
#[derive(Debug)]
struct Numbered {
    seq: Option<u64>,
    change: Change,
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

/// The live part of a subscription: the changes `receiver` hears that `wanted` wants and its
/// replay did not cover. One that falls over the feed's capacity behind has missed changes: its
/// stream ends with an error saying from which block to subscribe again (`sinceBlock` replays
/// them from the store), rather than going on with a gap.
fn live(
    mut receiver: broadcast::Receiver<Published>,
    wanted: Wanted,
    since_block: Option<i64>,
    replayed_through: BTreeMap<i64, i64>,
) -> impl Stream<Item = Result<Numbered>> {
    async_stream::stream! {
        // The block of the last change heard, per chain.
        let mut heard: BTreeMap<i64, i64> = BTreeMap::new();
        loop {
            match receiver.recv().await {
                Ok(Published { seq, change }) => {
                    let Some((chain, block)) = change.chain_and_block() else {
                        if wants(&wanted, &change) {
                            yield Ok(Numbered { seq: Some(seq), change });
                        }
                        continue;
                    };
                    heard.insert(chain, block);
                    if already_covered(since_block, &replayed_through, chain, block) {
                        continue;
                    }
                    if wants(&wanted, &change) {
                        yield Ok(Numbered { seq: Some(seq), change });
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(target: "agentindex::api", missed, "a subscriber fell behind and missed changes; its subscription ends");
                    yield Err(Error::new(fell_behind(missed, &heard)));
                    break;
                }
                Err(RecvError::Closed) => break,
            }
        }
    }
}

/// What a subscriber that fell `missed` changes behind is told, having heard up to `heard`.
fn fell_behind(missed: u64, heard: &BTreeMap<i64, i64>) -> String {
    // The rest of the last block heard may be among what was missed: it is replayed whole,
    // and what was heard of it comes again.
    let from = match heard.iter().min_by_key(|(_, block)| **block) {
        Some((chain, block)) => format!(
            "sinceBlock {} (the block before the last one heard of chain {chain}; on several \
             chains, the lowest such block)",
            block - 1
        ),
        None => "sinceBlock set to the block it was subscribed from".to_string(),
    };
    format!(
        "this subscription fell {missed} changes behind and missed them; subscribe again with \
         {from} to replay them from the index"
    )
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

/// Whether a live change at `block` of `chain` was replayed already: with `sinceBlock`, a
/// replay read each chain through the block it was published through when the subscription
/// began. A chain absent then is new since (its indexing started later), so all of it is news,
/// whatever `sinceBlock` says: one number for every chain cannot say where a chain with other
/// block heights starts.
fn already_covered(
    since_block: Option<i64>,
    replayed_through: &BTreeMap<i64, i64>,
    chain: i64,
    block: i64,
) -> bool {
    since_block.is_some()
        && replayed_through
            .get(&chain)
            .is_some_and(|through| block <= *through)
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

#[cfg(test)]
mod tests {
    use super::{Published, Wanted, already_covered, check_replay_reach, live};
    use crate::read::changes::Change;
    use futures_util::StreamExt;
    use std::collections::BTreeMap;
    use tokio::sync::broadcast;

    fn agent_at(seq: u64, block: i64) -> Published {
        Published {
            seq,
            change: Change::Agent {
                chain_id: 1,
                block,
                key: format!("1:{block}"),
                registered: true,
            },
        }
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_is_told_where_to_resume_and_ends() {
        let (sender, receiver) = broadcast::channel(4);
        let wanted = Wanted::Agents(Box::default());
        let stream = live(receiver, wanted, None, BTreeMap::new());
        futures_util::pin_mut!(stream);
        sender.send(agent_at(0, 10)).unwrap();
        let heard = stream.next().await.unwrap().unwrap();
        assert_eq!(heard.change.chain_and_block(), Some((1, 10)));
        // Six more while it does not read: two fall out of the feed's window.
        for (seq, block) in (1..=6).zip(11..) {
            sender.send(agent_at(seq, block)).unwrap();
        }
        let error = stream.next().await.unwrap().unwrap_err();
        assert_eq!(
            error.message,
            "this subscription fell 2 changes behind and missed them; subscribe again with \
             sinceBlock 9 (the block before the last one heard of chain 1; on several chains, \
             the lowest such block) to replay them from the index"
        );
        assert!(
            stream.next().await.is_none(),
            "the stream ends, without a gap"
        );
    }

    #[tokio::test]
    async fn live_changes_a_replay_covered_are_not_heard_twice() {
        let (sender, receiver) = broadcast::channel(16);
        let wanted = Wanted::Agents(Box::default());
        let stream = live(receiver, wanted, Some(5), BTreeMap::from([(1, 11)]));
        futures_util::pin_mut!(stream);
        for (seq, block) in (0..3).zip(10..) {
            sender.send(agent_at(seq, block)).unwrap();
        }
        drop(sender);
        let blocks: Vec<i64> = stream
            .map(|c| c.unwrap().change.chain_and_block().unwrap().1)
            .collect()
            .await;
        assert_eq!(blocks, [12], "blocks 10 and 11 were replayed");
    }

    #[test]
    fn a_live_change_is_left_out_only_when_replayed() {
        // Chain 1 was published through block 30 when the subscription began; chain 2 had not
        // appeared, so it is published whole as it does.
        let replayed = BTreeMap::from([(1, 30)]);
        assert!(already_covered(Some(20), &replayed, 1, 30), "replayed");
        assert!(
            !already_covered(Some(20), &replayed, 1, 31),
            "after the replay"
        );
        // `sinceBlock` is one number for every chain: a lower chain's news is never cut by it.
        assert!(!already_covered(Some(29_950_000), &replayed, 2, 11_000_000));
        assert!(
            !already_covered(None, &replayed, 1, 5),
            "a live-only subscription hears all"
        );
    }

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
