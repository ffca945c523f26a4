//! The store's surface as a backend implements it: [`StoreRead`] for everything the follower,
//! the documents worker, the API and the tests read, and [`WriteBackend`] for what the single
//! writer task asks of the database, each call one transaction. [`Store`](super::Store) and
//! [`SqlWriter`](super::SqlWriter) implement both over SQLite and PostgreSQL alike; a
//! [`Writer`](super::Writer)`<OtherBackend>` queues another backend's commands the same way.

use super::batch::{Batch, ChainContext, ChainContexts};
use super::cursor::{ChainProgress, ChainStatus, WatchedSets};
use super::documents::{DocumentCounts, DocumentResult, DueDocument};
use super::reputation::AgentReputation;
use super::{ClassifiedPayments, StoreResult};
use crate::primitives::BlockRef;
use crate::reputation::{FeedbackEntry, Payment, ReputationRules, TrustRank};
use alloy::primitives::{Address, U256};
use std::future::Future;

/// What applying a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApplySummary {
    /// Raw events stored.
    pub events: u64,
    /// Agents recomputed.
    pub agents_refreshed: u64,
}

/// What can be read from an index.
pub trait StoreRead: Send + Sync {
    /// Where `chain_id`'s index stands, if it was ever started.
    fn progress(
        &self,
        chain_id: u64,
    ) -> impl Future<Output = StoreResult<Option<ChainProgress>>> + Send;

    /// Documents linked to an agent that were never fetched or are due at `now`, at most
    /// `limit`.
    fn due_documents(
        &self,
        now: i64,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<DueDocument>>> + Send;

    /// Endpoints due for a probe at `now` (never probed, or their time came), soonest first,
    /// at most `limit`.
    fn due_probes(
        &self,
        now: i64,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<super::DueProbe>>> + Send;

    /// Documents by state.
    fn document_counts(&self) -> impl Future<Output = StoreResult<DocumentCounts>> + Send;

    /// Whether every linked document was fetched or failed at least once.
    fn documents_attempted(&self) -> impl Future<Output = StoreResult<bool>> + Send;

    /// The payments credited to `agent_key` up to and including `up_to_block`, in chain order.
    fn payments(
        &self,
        agent_key: &str,
        up_to_block: u64,
    ) -> impl Future<Output = StoreResult<Vec<Payment>>> + Send;

    /// Every feedback of token `token_id` of Identity Registry `registry`, in chain order.
    fn feedback(
        &self,
        chain_id: u64,
        registry: &Address,
        token_id: &U256,
    ) -> impl Future<Output = StoreResult<Vec<FeedbackEntry>>> + Send;

    /// The window `page` of the payments credited to each of `keys` (agents of `chain_id`),
    /// newest first, with why each does not count under `rules`.
    fn classified_payments(
        &self,
        chain_id: u64,
        keys: &[String],
        page: super::PageWindow,
        rules: &ReputationRules,
    ) -> impl Future<Output = StoreResult<ClassifiedPayments>> + Send;

    /// The stored reputation of `agent_key`, if it has any.
    fn reputation(
        &self,
        agent_key: &str,
    ) -> impl Future<Output = StoreResult<Option<AgentReputation>>> + Send;

    /// Every agent of `chain_id` with its stored reputation (as of the newest block among its
    /// own facts), in key order, handed to `page` a few hundred at a time from one consistent
    /// snapshot.
    fn stored_reputations(
        &self,
        chain_id: u64,
        page: impl FnMut(Vec<super::StoredReputation>) + Send,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Every agent of `chain_id` registered by `block` with its reputation as of `block`, in
    /// key order, handed to `page` a few hundred at a time from one consistent snapshot.
    fn reputation_as_of(
        &self,
        chain_id: u64,
        block: u64,
        rules: &ReputationRules,
        page: impl FnMut(Vec<AgentReputation>) + Send,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// The trust rank of `chain_id` as of the epoch of `block` (the one every agent is under
    /// once its rollout is over), computed from the counted payments, with the time it is
    /// computed at.
    fn trust_rank(
        &self,
        chain_id: u64,
        block: u64,
        rules: &ReputationRules,
    ) -> impl Future<Output = StoreResult<(TrustRank, u64)>> + Send;

    /// The remembered unfinalized blocks of `chain_id`, oldest first.
    fn window(&self, chain_id: u64) -> impl Future<Output = StoreResult<Vec<BlockRef>>> + Send;

    /// On a Cardano network: how many runs of each followed policy were read, by policy id.
    fn script_runs(
        &self,
        chain_id: u64,
    ) -> impl Future<Output = StoreResult<std::collections::BTreeMap<String, u64>>> + Send;

    /// Agent contracts and payment addresses discovered so far on `chain_id`.
    fn watched(&self, chain_id: u64) -> impl Future<Output = StoreResult<WatchedSets>> + Send;

    /// Status of every chain ever indexed, by chain id.
    fn statuses(&self) -> impl Future<Output = StoreResult<Vec<ChainStatus>>> + Send;

    /// The canonical dump of everything derived from the chains, for comparing two indexes.
    fn canonical_dump(&self) -> impl Future<Output = StoreResult<String>> + Send;
}

/// What the single writer task asks of the database. Each call is one transaction; the writer
/// calls them one at a time, in the order its commands arrived.
pub trait WriteBackend: Send + Sync + 'static {
    /// A batch with its rows made ready for this backend, off the writer's task.
    type Prepared: Send + 'static;

    /// Makes `batch`'s rows ready, on the caller's task, so the writer only executes them.
    fn prepare(batch: Batch) -> StoreResult<Self::Prepared>;

    /// Creates the chain's cursor (at `start_block - 1`) unless it exists.
    fn init_chain(
        &self,
        chain_id: u64,
        name: &str,
        start_block: u64,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Applies a prepared batch atomically: events, facts, agents, window and cursor. A batch
    /// that does not start right after the chain's cursor is refused.
    fn apply(
        &self,
        prepared: Self::Prepared,
    ) -> impl Future<Output = StoreResult<ApplySummary>> + Send;

    /// Undoes every block of `chain` above `ancestor`; returns the rows removed.
    fn rewind(
        &self,
        chain: &ChainContext,
        ancestor: u64,
    ) -> impl Future<Output = StoreResult<u64>> + Send;

    /// Rescores every agent of `chain` unless its rows follow `chain`'s rules already.
    fn adopt_rules(&self, chain: &ChainContext) -> impl Future<Output = StoreResult<u64>> + Send;

    /// Recomputes the stored reputation of `keys` (agents of `chain`).
    fn rescore(
        &self,
        chain: &ChainContext,
        keys: Vec<String>,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Rescores `chain`'s agents marked dirty, brings its trust ranks to those in force at
    /// `head` and records reputation settled there.
    fn settle_reputation(
        &self,
        chain: &ChainContext,
        head: u64,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Records the chain's head and finalized block for status.
    fn record_heads(
        &self,
        chain_id: u64,
        head: u64,
        finalized: u64,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Stores fetched documents and recomputes the agents they describe: their profiles, and
    /// the reputation (under `chains`) of those whose feedback files were among them.
    fn save_documents(
        &self,
        results: &[DocumentResult],
        chains: &ChainContexts,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Brings document links and agent profiles in line with the agents table; returns the
    /// agents recomputed.
    fn sync_documents(&self) -> impl Future<Output = StoreResult<u64>> + Send;

    /// Brings the endpoints to probe in line with what agents declare (new ones due at `now`);
    /// returns the endpoints declared.
    fn sync_probes(&self, now: i64) -> impl Future<Output = StoreResult<u64>> + Send;

    /// Stores probe outcomes and recomputes the liveness of the agents that declare those
    /// endpoints (returned); raw outcomes older than `retention_secs` before `now` are rolled
    /// up per day.
    fn save_probes(
        &self,
        results: &[super::ProbeResult],
        now: i64,
        retention_secs: i64,
    ) -> impl Future<Output = StoreResult<Vec<String>>> + Send;

    /// Applies one write of a stored reputation feed.
    fn store_feed(
        &self,
        write: &super::stored_feeds::FeedWrite,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Called after every command, committed or not (SQLite checkpoints its WAL off the path).
    fn after_command(&self) {}
}
