//! Lookups of single agents by key, coalesced across requests on PostgreSQL: a few workers each
//! take every lookup waiting when they come free and read them all in one statement.
//!
//! Every statement sent to a server costs a round trip, the server's own work around running
//! it, and sqlx's check of the pooled connection when it comes back (one more round trip, which
//! sqlx does not let a pool leave out). At thousands of lookups a second those cost more than
//! the lookups themselves. Under light load a lookup still goes alone and at once: a worker is
//! free. A statement that fails is tried again key by key, so one lookup the server refuses
//! (an id it cannot read as text) fails alone. Lookups at low priority read on their own, never
//! batched with anyone else's, as every low-priority read. SQLite runs in this process and has
//! no round trips to save, so its lookups read directly.

use crate::read::agents::{self, AgentRow};
use agentindex_indexer::store::{Dialect, low_priority};
use prometheus_client::metrics::counter::Counter;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc, oneshot};

/// Workers reading lookups, so at most this many lookup statements run at once: a quarter of
/// the read pool's connections, which leaves the rest to the other reads, and enough to keep a
/// server on a few cores busy while one statement's answer is on its way back.
const WORKERS: usize = 4;

/// Most lookups one statement reads.
const MOST_IN_ONE_READ: usize = 32;

/// Lookups waiting for a worker before a new one waits to be queued.
const QUEUED: usize = 1024;

/// What one lookup answers: the agent if it exists. A failed read fails each lookup it held.
pub(crate) type Looked = Result<Option<AgentRow>, Arc<sqlx::Error>>;

/// The failure of a lookup no worker is left to read (they end when the server stops).
fn workers_stopped() -> Arc<sqlx::Error> {
    Arc::new(sqlx::Error::Io(std::io::Error::other(
        "the agent lookup workers have stopped",
    )))
}

/// One lookup waiting for a worker.
struct Lookup {
    key: String,
    answer: oneshot::Sender<Looked>,
}

/// Reads single agents by key: through the workers on PostgreSQL, directly on SQLite.
#[derive(Debug, Clone)]
pub(crate) struct AgentLookups {
    /// The workers' queue; `None` on SQLite.
    queue: Option<mpsc::Sender<Lookup>>,
    /// Counts the statements read (`agentindex_api_agent_lookup_reads_total` in `/metrics`).
    reads: Counter,
}

impl AgentLookups {
    /// Lookups over `pool`, counting each statement in `reads`, starting the workers if it is
    /// PostgreSQL's (so inside the Tokio runtime). They stop once every copy of the returned
    /// value is dropped.
    pub(crate) fn start(pool: &AnyPool, reads: Counter) -> Self {
        if Dialect::of_pool(pool) != Dialect::Postgres {
            return Self { queue: None, reads };
        }
        let (queue, waiting) = mpsc::channel(QUEUED);
        let waiting = Arc::new(Mutex::new(waiting));
        for _ in 0..WORKERS {
            tokio::spawn(work(pool.clone(), Arc::clone(&waiting), reads.clone()));
        }
        Self {
            queue: Some(queue),
            reads,
        }
    }

    /// The agent `key` names. `pool` is the caller's read pool (`Store::reader`), read
    /// directly on SQLite and at low priority.
    pub(crate) async fn by_key(&self, pool: &AnyPool, key: &str) -> Looked {
        let queue = match &self.queue {
            Some(queue) if !low_priority::in_scope() => queue,
            _ => {
                self.reads.inc();
                return agents::by_key(pool, key).await.map_err(Arc::new);
            }
        };
        let (answer, answered) = oneshot::channel();
        let lookup = Lookup {
            key: key.to_string(),
            answer,
        };
        if queue.send(lookup).await.is_err() {
            return Err(workers_stopped());
        }
        answered.await.unwrap_or_else(|_| Err(workers_stopped()))
    }
}

/// One worker: takes the first lookup waiting and every other one queued behind it (up to
/// [`MOST_IN_ONE_READ`]), reads them in one statement and answers each.
async fn work(pool: AnyPool, waiting: Arc<Mutex<mpsc::Receiver<Lookup>>>, reads: Counter) {
    loop {
        let mut batch = Vec::new();
        {
            let mut waiting = waiting.lock().await;
            let Some(first) = waiting.recv().await else {
                return;
            };
            batch.push(first);
            while batch.len() < MOST_IN_ONE_READ {
                match waiting.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
        }
        // Requests that ended while they waited are not read for.
        batch.retain(|lookup| !lookup.answer.is_closed());
        if batch.is_empty() {
            continue;
        }
        answer(batch, &pool, &reads).await;
    }
}

/// Reads `batch`'s agents and sends each lookup its own; if the statement fails, reads each
/// key alone, so a key the server refuses fails only its own lookups.
async fn answer(batch: Vec<Lookup>, pool: &AnyPool, reads: &Counter) {
    let mut keys: Vec<String> = batch.iter().map(|lookup| lookup.key.clone()).collect();
    keys.sort_unstable();
    keys.dedup();
    reads.inc();
    let mut found: HashMap<String, Looked> = HashMap::with_capacity(keys.len());
    match agents::by_keys(pool, &keys).await {
        // A key without a row is an agent nobody has: answered `None` below.
        Ok(rows) => {
            found.extend(
                rows.into_iter()
                    .map(|row| (row.agent_key.clone(), Ok(Some(row)))),
            );
        }
        Err(failed) if keys.len() == 1 => {
            let failed = Arc::new(failed);
            found.extend(keys.into_iter().map(|key| (key, Err(Arc::clone(&failed)))));
        }
        Err(_) => {
            for key in keys {
                reads.inc();
                let alone = agents::by_key(pool, &key).await.map_err(Arc::new);
                found.insert(key, alone);
            }
        }
    }
    for lookup in batch {
        let looked = found.get(&lookup.key).cloned();
        let _ = lookup.answer.send(looked.unwrap_or(Ok(None)));
    }
}
