//! The change feed behind subscriptions: a task watches every chain's indexed and finalized
//! block and, each time the part of the index that is both committed and final advances, reads
//! what the batches changed there ([`crate::read::changes`]) and broadcasts it (no further than
//! the block up to which reputation is settled, so rescored agents are never skipped); it also
//! broadcasts agents whose documents changed (numbered by `agent_profiles.document_seq`). Subscribers so
//! never see uncommitted data, nor a change a reorg later undoes (a chain configured with
//! `finality = 0` is final at its head). It works the same whether the indexer runs in this
//! process (`run`) or another (`serve`).

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
}

#[derive(Debug)]
struct Inner {
    sender: broadcast::Sender<Published>,
    /// The number the next change is published under.
    next_seq: AtomicU64,
    /// Per chain, the final block up to which changes were published.
    published: Mutex<BTreeMap<i64, i64>>,
    /// Turns true once the chains were looked at once: before, `published` is not known, and a
    /// subscriber replaying from a block would find nothing to replay and miss what follows.
    started: watch::Sender<bool>,
}

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
            inner.publish(Change::Documents {
                chain_id: update.chain_id,
                key: update.agent_key.clone(),
            });
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
    /// caller replays them from the store when it wants them). Waits for the feed's first look
    /// at the chains.
    pub(crate) async fn subscribe(&self) -> (broadcast::Receiver<Published>, BTreeMap<i64, i64>) {
        let mut started = self.inner.started.subscribe();
        // The feed's task sets it after its first round; it outlives every handle's use.
        let _ = started.wait_for(|started| *started).await;
        let receiver = self.inner.sender.subscribe();
        let published = self.inner.published.lock().expect("not poisoned").clone();
        (receiver, published)
    }
}

impl Inner {
    fn publish(&self, change: Change) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        // No subscriber is not an error.
        let _ = self.sender.send(Published { seq, change });
    }
}

async fn watch(store: Store, inner: Weak<Inner>) {
    let mut interval = tokio::time::interval(POLL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut documents_seen = None;
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
                tracing::warn!(target: "agentindex::api", error = %e, "change feed: reading chain status");
                inner.started.send_replace(true);
                continue;
            }
        };
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
                let entry = published.entry(chain_id).or_insert(indexed);
                if indexed < *entry {
                    // A reorg rewound the chain: the new branch is published as it is indexed.
                    *entry = indexed;
                }
                *entry
            };
            if indexed <= last {
                continue;
            }
            match changes::between(store.reader(), chain_id, last, indexed).await {
                Ok(found) => {
                    inner
                        .published
                        .lock()
                        .expect("not poisoned")
                        .insert(chain_id, indexed);
                    for change in found {
                        inner.publish(change);
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "agentindex::api", error = %e, chain_id, "change feed: reading changes")
                }
            }
        }
        inner.started.send_replace(true);
    }
}
