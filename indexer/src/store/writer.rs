//! The single writer: a task that owns the write connection and applies commands in order,
//! each in its own transaction, through the backend's [`WriteBackend`] (SQLite's and
//! PostgreSQL's is `SqlWriter`, in `sql_writer`). The follower sends batches through a bounded
//! queue, so a slow disk slows the follower instead of growing memory.

use super::batch::{Batch, ChainContext, ChainContexts};
use super::documents::DocumentResult;
use super::interface::{ApplySummary, WriteBackend};
use super::liveness::ProbeResult;
pub use super::sql_writer::SqlWriter;
use super::stored_feeds::FeedWrite;
use super::{StoreError, StoreResult};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// What a writer handle asks of the writer task; `P` is the backend's prepared batch.
enum Command<P> {
    Init {
        chain_id: u64,
        name: String,
        start_block: u64,
        reply: oneshot::Sender<StoreResult<()>>,
    },
    Apply {
        batch: Box<P>,
        reply: oneshot::Sender<StoreResult<ApplySummary>>,
    },
    Rewind {
        chain: Arc<ChainContext>,
        ancestor: u64,
        reply: oneshot::Sender<StoreResult<u64>>,
    },
    AdoptRules {
        chain: Arc<ChainContext>,
        reply: oneshot::Sender<StoreResult<u64>>,
    },
    Rescore {
        chain: Arc<ChainContext>,
        keys: Vec<String>,
        reply: oneshot::Sender<StoreResult<()>>,
    },
    SettleReputation {
        chain: Arc<ChainContext>,
        head: u64,
        reply: oneshot::Sender<StoreResult<()>>,
    },
    Heads {
        chain_id: u64,
        head: u64,
        finalized: u64,
        reply: oneshot::Sender<StoreResult<()>>,
    },
    SaveDocuments {
        results: Vec<DocumentResult>,
        chains: Arc<ChainContexts>,
        reply: oneshot::Sender<StoreResult<()>>,
    },
    SyncDocuments {
        reply: oneshot::Sender<StoreResult<u64>>,
    },
    StoreFeed {
        write: FeedWrite,
        reply: oneshot::Sender<StoreResult<()>>,
    },
    SyncProbes {
        now: i64,
        reply: oneshot::Sender<StoreResult<u64>>,
    },
    SaveProbes {
        results: Vec<ProbeResult>,
        now: i64,
        retention_secs: i64,
        reply: oneshot::Sender<StoreResult<Vec<String>>>,
    },
}

/// A batch handed to the writer and not yet confirmed.
#[derive(Debug)]
pub struct QueuedBatch {
    answer: oneshot::Receiver<StoreResult<ApplySummary>>,
}

impl QueuedBatch {
    /// Waits until the batch is committed (or failed).
    pub async fn outcome(self) -> StoreResult<ApplySummary> {
        self.answer.await.map_err(|_| StoreError::WriterGone)?
    }
}

/// A handle to the writer task of backend `B`; clone it freely. The task ends when every handle
/// is dropped.
pub struct Writer<B: WriteBackend = SqlWriter> {
    queue: mpsc::Sender<Command<B::Prepared>>,
}

impl<B: WriteBackend> Clone for Writer<B> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
        }
    }
}

impl<B: WriteBackend> std::fmt::Debug for Writer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl<P> std::fmt::Debug for Command<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Command::Init { .. } => "Init",
            Command::Apply { .. } => "Apply",
            Command::Rewind { .. } => "Rewind",
            Command::AdoptRules { .. } => "AdoptRules",
            Command::Rescore { .. } => "Rescore",
            Command::SettleReputation { .. } => "SettleReputation",
            Command::Heads { .. } => "Heads",
            Command::SaveDocuments { .. } => "SaveDocuments",
            Command::SyncDocuments { .. } => "SyncDocuments",
            Command::StoreFeed { .. } => "StoreFeed",
            Command::SyncProbes { .. } => "SyncProbes",
            Command::SaveProbes { .. } => "SaveProbes",
        })
    }
}

impl<B: WriteBackend> Writer<B> {
    /// Starts the writer task over `backend`; `capacity` bounds the queue of pending commands.
    pub fn spawn(backend: B, capacity: usize) -> Self {
        let (queue, commands) = mpsc::channel(capacity.max(1));
        tokio::spawn(run(backend, commands));
        Self { queue }
    }

    async fn call<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<StoreResult<T>>) -> Command<B::Prepared>,
    ) -> StoreResult<T> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(make(reply))
            .await
            .map_err(|_| StoreError::WriterGone)?;
        answer.await.map_err(|_| StoreError::WriterGone)?
    }

    /// Creates the chain's cursor (at `start_block - 1`) unless it exists.
    pub async fn init_chain(&self, chain_id: u64, name: &str, start_block: u64) -> StoreResult<()> {
        let name = name.to_string();
        self.call(|reply| Command::Init {
            chain_id,
            name,
            start_block,
            reply,
        })
        .await
    }

    /// Applies a batch atomically: events, facts, agents, window and cursor.
    pub async fn apply(&self, batch: Batch) -> StoreResult<ApplySummary> {
        self.submit(batch).await?.outcome().await
    }

    /// Queues a batch and returns without waiting for it to be written, so the caller can
    /// prepare the next one meanwhile. Batches are written in the order they are queued. The
    /// batch's rows are bound here, on the caller's task, so the writer only executes them.
    pub async fn submit(&self, batch: Batch) -> StoreResult<QueuedBatch> {
        let prepared = B::prepare(batch)?;
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Command::Apply {
                batch: Box::new(prepared),
                reply,
            })
            .await
            .map_err(|_| StoreError::WriterGone)?;
        Ok(QueuedBatch { answer })
    }

    /// Undoes every block of `chain` above `ancestor`; returns the rows removed.
    pub async fn rewind(&self, chain: Arc<ChainContext>, ancestor: u64) -> StoreResult<u64> {
        self.call(|reply| Command::Rewind {
            chain,
            ancestor,
            reply,
        })
        .await
    }

    /// Makes `chain`'s reputation rules the ones its stored reputation follows: when they differ
    /// from the rules the rows were computed under, every agent of the chain is rescored.
    /// Returns the agents rescored.
    pub async fn adopt_rules(&self, chain: Arc<ChainContext>) -> StoreResult<u64> {
        self.call(|reply| Command::AdoptRules { chain, reply })
            .await
    }

    /// Recomputes the stored reputation of `keys` (agent keys of `chain`) in one transaction.
    pub async fn rescore(&self, chain: Arc<ChainContext>, keys: Vec<String>) -> StoreResult<()> {
        self.call(|reply| Command::Rescore { chain, keys, reply })
            .await
    }

    /// What a batch ending at `head` does to reputation after writing its facts: rescores the
    /// agents marked dirty, brings the chain's trust ranks to those in force at `head`,
    /// rescoring the paid agents of each group that went over to another rank, and records
    /// reputation settled at `head` (the trust benchmark times this step).
    pub async fn settle_reputation(&self, chain: Arc<ChainContext>, head: u64) -> StoreResult<()> {
        self.call(|reply| Command::SettleReputation { chain, head, reply })
            .await
    }

    /// Stores fetched documents and recomputes the agents they describe (the reputation of
    /// those whose feedback files were among them, under their chain's rules in `chains`).
    pub async fn save_documents(
        &self,
        results: Vec<DocumentResult>,
        chains: Arc<ChainContexts>,
    ) -> StoreResult<()> {
        self.call(|reply| Command::SaveDocuments {
            results,
            chains,
            reply,
        })
        .await
    }

    /// Brings document links and agent profiles in line with the agents table; returns the
    /// agents recomputed.
    pub async fn sync_documents(&self) -> StoreResult<u64> {
        self.call(|reply| Command::SyncDocuments { reply }).await
    }

    /// Applies one write of a stored reputation feed (see [`FeedWrite`]).
    pub async fn store_feed(&self, write: FeedWrite) -> StoreResult<()> {
        self.call(|reply| Command::StoreFeed { write, reply }).await
    }

    /// Brings the endpoints to probe in line with what agents declare; returns the endpoints
    /// declared.
    pub async fn sync_probes(&self, now: i64) -> StoreResult<u64> {
        self.call(|reply| Command::SyncProbes { now, reply }).await
    }

    /// Stores probe outcomes and recomputes the liveness of the agents they concern (returned).
    pub async fn save_probes(
        &self,
        results: Vec<ProbeResult>,
        now: i64,
        retention_secs: i64,
    ) -> StoreResult<Vec<String>> {
        self.call(|reply| Command::SaveProbes {
            results,
            now,
            retention_secs,
            reply,
        })
        .await
    }

    /// Records the chain's head and finalized block for status.
    pub async fn record_heads(&self, chain_id: u64, head: u64, finalized: u64) -> StoreResult<()> {
        self.call(|reply| Command::Heads {
            chain_id,
            head,
            finalized,
            reply,
        })
        .await
    }
}

async fn run<B: WriteBackend>(backend: B, mut commands: mpsc::Receiver<Command<B::Prepared>>) {
    while let Some(command) = commands.recv().await {
        execute(&backend, command).await;
        backend.after_command();
    }
}

/// Applies one command and answers it.
async fn execute<B: WriteBackend>(backend: &B, command: Command<B::Prepared>) {
    match command {
        Command::Init {
            chain_id,
            name,
            start_block,
            reply,
        } => {
            let _ = reply.send(backend.init_chain(chain_id, &name, start_block).await);
        }
        Command::Apply { batch, reply } => {
            let _ = reply.send(backend.apply(*batch).await);
        }
        Command::Rewind {
            chain,
            ancestor,
            reply,
        } => {
            let _ = reply.send(backend.rewind(&chain, ancestor).await);
        }
        Command::AdoptRules { chain, reply } => {
            let _ = reply.send(backend.adopt_rules(&chain).await);
        }
        Command::SettleReputation { chain, head, reply } => {
            let _ = reply.send(backend.settle_reputation(&chain, head).await);
        }
        Command::Rescore { chain, keys, reply } => {
            let _ = reply.send(backend.rescore(&chain, keys).await);
        }
        Command::Heads {
            chain_id,
            head,
            finalized,
            reply,
        } => {
            let _ = reply.send(backend.record_heads(chain_id, head, finalized).await);
        }
        Command::SaveDocuments {
            results,
            chains,
            reply,
        } => {
            let _ = reply.send(backend.save_documents(&results, &chains).await);
        }
        Command::SyncDocuments { reply } => {
            let _ = reply.send(backend.sync_documents().await);
        }
        Command::StoreFeed { write, reply } => {
            let _ = reply.send(backend.store_feed(&write).await);
        }
        Command::SyncProbes { now, reply } => {
            let _ = reply.send(backend.sync_probes(now).await);
        }
        Command::SaveProbes {
            results,
            now,
            retention_secs,
            reply,
        } => {
            let _ = reply.send(backend.save_probes(&results, now, retention_secs).await);
        }
    }
}
