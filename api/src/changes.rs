//! The change feed behind subscriptions: a task watches every chain's indexed and finalized
//! block and, each time the part of the index that is both committed and final advances, reads
//! what the batches changed there ([`crate::read::changes`], in runs of blocks holding at most
//! [`SPAN_ROWS`] changes of each kind, read a page at a time, so a backfill's end is never held
//! at once) and broadcasts it (no further than the block up to which reputation is settled, so
//! rescored agents are never skipped); it also broadcasts agents whose documents changed
//! (numbered by `agent_profiles.document_seq`). Subscribers so never see uncommitted data, nor a change a reorg later undoes (a chain configured with
//! `finality = 0` is final at its head). It works the same whether the indexer runs in this
//! process (`run`) or another (`serve`).
//!
//! Where it starts: on its first look, each chain at the block it is indexed to (what came
//! before is history, which replays read). A chain that first appears later (its indexer
//! created the chain's cursor after that look) had no rows when subscribers were let in, so
//! all it has indexed is published. Subscribers are let in only once a look succeeded.

use crate::read::change_spans;
use crate::read::changes::{self, Change};
use agentindex_indexer::store::Store;
use agentindex_indexer::store::StoreRead;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// How often the indexed blocks are checked.
const POLL: Duration = Duration::from_millis(200);
/// Changes a slow subscriber may fall behind by before it misses some.
const CAPACITY: usize = 4_096;
/// How long a subscription waits for the feed's first look at the chains (the database not
/// answering) before it is refused.
pub(crate) const FIRST_LOOK_WAIT: Duration = Duration::from_secs(10);
/// Changes of each kind the feed reads into memory at once, save one block holding more.
const SPAN_ROWS: i64 = 1_000;
/// Runs of at most this many blocks are read whole, without measuring them first.
const UNMEASURED_BLOCKS: i64 = 16;
/// The block before every block: a chain first seen after subscribers were let in is published
/// from here.
const BEFORE_EVERY_BLOCK: i64 = -1;

/// The feed: subscribe for changes from now on, with the blocks already published per chain.
#[derive(Debug, Clone)]
pub struct ChangeFeed {
    inner: Arc<Inner>,
}

/// A change as broadcast: numbered in the order published, so that subscribers handling the
/// same change can share what they read for it ([`crate::graphql::shared_reads`]).
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// Position in the feed, from 0.
    pub(crate) seq: u64,
    /// The change.
    pub(crate) change: Change,
    /// For a change in a block, the block its chain had been published through before the
    /// run holding it: a run is sent kind by kind, not in block order, so a subscriber that
    /// missed what followed this change can have missed any block after that one.
    pub(crate) run_after: Option<i64>,
}

#[derive(Debug)]
struct Inner {
    sender: broadcast::Sender<Published>,
    /// The number the next change is published under.
    next_seq: AtomicU64,
    /// Per chain, the final block up to which changes were published.
    published: Mutex<BTreeMap<i64, i64>>,
    /// Turns true once a look at the chains succeeded: before, `published` is not known, and a
    /// subscriber replaying from a block would find nothing to replay and miss what follows.
    started: watch::Sender<bool>,
}

/// The feed's first look at the chains has not succeeded (the database did not answer).
#[derive(Debug, thiserror::Error)]
#[error(
    "the change feed has not read the chains' progress yet (the database does not answer); \
     subscribe again"
)]
pub(crate) struct FeedNotStarted;

/// Reports agents whose documents changed since the last call (after the first, which only
/// takes note of where the updates stand). An agent whose on-chain state is not published yet is
/// left to the block-ordered feed, which reports it with its documents as they are by then.
async fn publish_document_updates(
    store: &Store,
    inner: &Inner,
    seen: &mut Option<i64>,
) -> sqlx::Result<()> {
    let pool = store.reader();
    let Some(after) = *seen else {
        *seen = Some(changes::latest_document_update(pool).await?);
        return Ok(());
    };
    let updates = changes::document_updates(pool, after).await?;
    let published = inner.published.lock().expect("not poisoned").clone();
    for update in &updates {
        let final_on_chain = published
            .get(&update.chain_id)
            .is_some_and(|through| update.last_event_block <= *through);
        if final_on_chain {
            inner.publish(
                Change::Documents {
                    chain_id: update.chain_id,
                    key: update.agent_key.clone(),
                },
                None,
            );
        }
    }
    if let Some(last) = updates.last() {
        *seen = Some(last.seq);
    }
    Ok(())
}

impl ChangeFeed {
    /// Starts watching `store`; the task ends when the last handle is dropped.
    pub fn start(store: Store) -> Self {
        let (sender, _) = broadcast::channel(CAPACITY);
        let inner = Arc::new(Inner {
            sender,
            next_seq: AtomicU64::new(0),
            published: Mutex::new(BTreeMap::new()),
            started: watch::channel(false).0,
        });
        tokio::spawn(watch(store, Arc::downgrade(&inner)));
        Self { inner }
    }

    /// A receiver of changes published from now on, and the block each chain was published up
    /// to when it was made (changes at or below it are not in the receiver's future, and the
    /// caller replays them from the store when it wants them; a chain absent from it is
    /// published whole as it appears). Waits up to `wait` for the feed's first look at the
    /// chains.
    pub(crate) async fn subscribe(
        &self,
        wait: Duration,
    ) -> Result<(broadcast::Receiver<Published>, BTreeMap<i64, i64>), FeedNotStarted> {
        let mut started = self.inner.started.subscribe();
        // The feed's task sets it after its first successful round; it outlives every handle's
        // use.
        match tokio::time::timeout(wait, started.wait_for(|started| *started)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => return Err(FeedNotStarted),
        }
        let receiver = self.inner.sender.subscribe();
        let published = self.inner.published.lock().expect("not poisoned").clone();
        Ok((receiver, published))
    }
}

impl Inner {
    fn publish(&self, change: Change, run_after: Option<i64>) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        // No subscriber is not an error.
        let _ = self.sender.send(Published {
            seq,
            change,
            run_after,
        });
    }
}

/// Where the feed starts publishing a chain it has not seen before, now indexed to `indexed`:
/// on its first look (before subscribers were let in, `started` false) there; after, before
/// every block, since the chain had no rows when they were let in.
fn first_published(started: bool, indexed: i64) -> i64 {
    if started { BEFORE_EVERY_BLOCK } else { indexed }
}

/// A run of blocks marked published whose pages are not all broadcast yet (a read failed
/// midway): the chain's next round finishes it before anything else.
struct Unfinished {
    /// The block the chain was published through before the run.
    from: i64,
    /// Where its reading stands.
    pages: changes::Pages,
}

/// Publishes `chain_id`'s changes in blocks `(last, indexed]`, a run of at most [`SPAN_ROWS`]
/// changes of each kind at a time (`read::change_spans`; a single block may hold more, such as
/// a backfill's end, where every agent is rescored in one block), read and broadcast a page of
/// [`SPAN_ROWS`] at a time. The chain's published block moves to the run's end once its first
/// page is read, before any of it is broadcast, so a subscriber joining meanwhile replays what it
/// would not hear. A failed read leaves the rest for the next round: before the run is marked
/// published, all of it; after, the rest of the run in `unfinished`, finished first.
async fn publish_run(
    pool: &sqlx::AnyPool,
    inner: &Inner,
    chain_id: i64,
    last: i64,
    indexed: i64,
    unfinished: &mut Option<Unfinished>,
) -> sqlx::Result<()> {
    if let Some(run) = unfinished {
        broadcast_rest(pool, inner, run).await?;
        *unfinished = None;
    }
    let mut from = last;
    while from < indexed {
        // A few blocks at the tip hold few changes: no need to measure them first.
        let to = if indexed - from <= UNMEASURED_BLOCKS {
            indexed
        } else {
            change_spans::span_end(pool, chain_id, from, indexed, SPAN_ROWS).await?
        };
        let mut pages = changes::Pages::new(chain_id, from, to);
        let first = pages.next(pool, SPAN_ROWS).await?;
        inner
            .published
            .lock()
            .expect("not poisoned")
            .insert(chain_id, to);
        for change in first.into_iter().flatten() {
            inner.publish(change, Some(from));
        }
        let run = unfinished.insert(Unfinished { from, pages });
        broadcast_rest(pool, inner, run).await?;
        *unfinished = None;
        from = to;
    }
    Ok(())
}

/// Reads and broadcasts the rest of `run`, a page at a time.
async fn broadcast_rest(
    pool: &sqlx::AnyPool,
    inner: &Inner,
    run: &mut Unfinished,
) -> sqlx::Result<()> {
    while let Some(page) = run.pages.next(pool, SPAN_ROWS).await? {
        for change in page {
            inner.publish(change, Some(run.from));
        }
    }
    Ok(())
}

async fn watch(store: Store, inner: Weak<Inner>) {
    let mut interval = tokio::time::interval(POLL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut documents_seen = None;
    let mut unfinished: BTreeMap<i64, Unfinished> = BTreeMap::new();
    loop {
        interval.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if let Err(e) = publish_document_updates(&store, &inner, &mut documents_seen).await {
            tracing::warn!(target: "agentindex::api", error = %e, "change feed: reading document updates");
        }
        let statuses = match store.statuses().await {
            Ok(statuses) => statuses,
            Err(e) => {
                // Subscribers wait for a round that read the chains (or are refused): let in
                // now, they would take every chain for one that appears later.
                tracing::warn!(target: "agentindex::api", error = %e, "change feed: reading chain status");
                continue;
            }
        };
        let started = *inner.started.borrow();
        for status in statuses {
            let chain_id = status.chain_id as i64;
            // Committed, final, and with reputation settled: during a backfill agents are only
            // rescored at its end, and their reputation is published with them then.
            let indexed = status.indexed_block.map_or(0, |b| {
                let settled = status.reputation_settled_block.unwrap_or(0);
                b.min(status.finalized_block).min(settled) as i64
            });
            let last = {
                let mut published = inner.published.lock().expect("not poisoned");
                let entry = published
                    .entry(chain_id)
                    .or_insert_with(|| first_published(started, indexed));
                if indexed < *entry {
                    // A reorg rewound the chain: the new branch is published as it is indexed.
                    *entry = indexed;
                }
                *entry
            };
            let mut run = unfinished.remove(&chain_id);
            let published = publish_run(store.reader(), &inner, chain_id, last, indexed, &mut run);
            if let Err(e) = published.await {
                tracing::warn!(target: "agentindex::api", error = %e, chain_id, "change feed: reading changes");
            }
            if let Some(run) = run {
                unfinished.insert(chain_id, run);
            }
        }
        // Subscribers are let in once the chains and the document updates were both read: with
        // the updates' starting point unknown, those made meanwhile would never be reported.
        if documents_seen.is_some() {
            inner.started.send_replace(true);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The change feed over a real SQLite store, its chains' cursors and payments written as the
    //! indexer leaves them: where the feed starts each chain, and that subscribers are let in only
    //! once it has read the chains.

    use super::*;
    use agentindex_indexer::schema::{agent_profiles, chain_cursor};
    use sqlx::AnyPool;

    const CHAIN: i64 = 31337;
    /// Long enough for a few of the feed's rounds on a loaded machine; a wait that ends early
    /// fails the test, it never hides a race.
    const PATIENCE: Duration = Duration::from_secs(20);

    async fn store() -> (tempfile::TempDir, Store, AnyPool) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("feed.db").display());
        let store = Store::open(&url).await.unwrap();
        let pool = AnyPool::connect(&url).await.unwrap();
        (dir, store, pool)
    }

    /// The chain's cursor, indexed, final and settled through `block` (created if absent).
    async fn indexed_through(pool: &AnyPool, block: i64) {
        sqlx::query(&format!(
            "INSERT INTO {} (chain_id, name, indexed_block, finalized_block, head_block, settled_block)
             VALUES ($1, 'devnet', $2, $2, $2, $2)
             ON CONFLICT (chain_id) DO UPDATE SET indexed_block = $2, finalized_block = $2,
               head_block = $2, settled_block = $2",
            chain_cursor::NAME
        ))
        .bind(CHAIN)
        .bind(block)
        .execute(pool)
        .await
        .unwrap();
    }

    /// A payment to agent `key` at `block`.
    async fn paid(pool: &AnyPool, key: &str, block: i64) {
        change_spans::insert_test_payments(pool, &[(CHAIN, block, 0, key.to_string())]).await;
    }

    /// The next payment the receiver hears: (agent, block).
    async fn next_payment(receiver: &mut broadcast::Receiver<Published>) -> (String, i64) {
        loop {
            let published = tokio::time::timeout(PATIENCE, receiver.recv())
                .await
                .expect("a payment is published")
                .expect("the feed is open");
            if let Change::Payment { payment, .. } = published.change {
                return (payment.agent_key, payment.block_number);
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chain_that_appears_after_subscribers_were_let_in_is_published_whole() {
        let (_dir, store, pool) = store().await;
        let feed = ChangeFeed::start(store.clone());
        // Let in once the feed read the chains, and there were none.
        let (mut receiver, published) = feed.subscribe(PATIENCE).await.unwrap();
        assert!(published.is_empty(), "{published:?}");
        // Then the chain's indexer starts and, within one of the feed's rounds, indexes two
        // payments: the feed's first sight of the chain is block 7, after both.
        paid(&pool, "a", 5).await;
        paid(&pool, "b", 6).await;
        indexed_through(&pool, 7).await;
        assert_eq!(next_payment(&mut receiver).await, ("a".to_string(), 5));
        assert_eq!(next_payment(&mut receiver).await, ("b".to_string(), 6));
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_long_run_is_published_whole_and_in_order_a_bounded_part_at_a_time() {
        let (_dir, store, pool) = store().await;
        indexed_through(&pool, 0).await;
        let feed = ChangeFeed::start(store.clone());
        let (mut receiver, _) = feed.subscribe(PATIENCE).await.unwrap();
        // Two and a half runs' worth of payments, five a block, land in one step.
        let total = SPAN_ROWS * 5 / 2;
        let paid: Vec<_> = (0..total)
            .map(|i| (CHAIN, i / 5 + 1, i % 5, format!("agent{i}")))
            .collect();
        change_spans::insert_test_payments(&pool, &paid).await;
        indexed_through(&pool, total / 5).await;
        for i in 0..total {
            assert_eq!(
                next_payment(&mut receiver).await,
                (format!("agent{i}"), i / 5 + 1)
            );
        }
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_block_holding_more_than_a_run_is_published_whole_and_in_order() {
        let (_dir, store, pool) = store().await;
        indexed_through(&pool, 0).await;
        let feed = ChangeFeed::start(store.clone());
        let (mut receiver, _) = feed.subscribe(PATIENCE).await.unwrap();
        // A backfill's end in small: one block pays more agents than a page holds, twice over.
        let total = SPAN_ROWS * 5 / 2;
        let payments: Vec<_> = (0..total)
            .map(|i| (CHAIN, 3, i, format!("agent{i:05}")))
            .collect();
        change_spans::insert_test_payments(&pool, &payments).await;
        paid(&pool, "after", 4).await;
        indexed_through(&pool, 4).await;
        for i in 0..total {
            assert_eq!(
                next_payment(&mut receiver).await,
                (format!("agent{i:05}"), 3)
            );
        }
        assert_eq!(next_payment(&mut receiver).await, ("after".to_string(), 4));
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chain_there_at_the_first_look_is_published_from_where_it_stood() {
        let (_dir, store, pool) = store().await;
        paid(&pool, "history", 5).await;
        indexed_through(&pool, 7).await;
        let feed = ChangeFeed::start(store.clone());
        let (mut receiver, published) = feed.subscribe(PATIENCE).await.unwrap();
        assert_eq!(
            published,
            BTreeMap::from([(CHAIN, 7)]),
            "history is replayed, not published"
        );
        paid(&pool, "news", 8).await;
        indexed_through(&pool, 8).await;
        assert_eq!(next_payment(&mut receiver).await, ("news".to_string(), 8));
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn subscribers_are_refused_while_the_chains_or_document_updates_cannot_be_read() {
        // A database whose cursors, or whose profiles (where document updates are numbered),
        // cannot be read: the feed's rounds fail, or leave the updates' starting point unknown.
        for table in [chain_cursor::NAME, agent_profiles::NAME] {
            let (_dir, store, pool) = store().await;
            sqlx::query(&format!("DROP TABLE {table}"))
                .execute(&pool)
                .await
                .unwrap();
            let feed = ChangeFeed::start(store.clone());
            let refused = feed.subscribe(Duration::from_millis(600)).await;
            assert!(
                matches!(refused, Err(FeedNotStarted)),
                "let in without {table} read"
            );
            store.close().await;
        }
        assert!(
            FeedNotStarted.to_string().contains("subscribe again"),
            "the refusal says what to do"
        );
    }
}
