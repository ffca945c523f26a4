//! What the follower hands the writer: a contiguous run of blocks and every relevant log in it.

use crate::cardano::escrow::EscrowAction;
use crate::cardano::registry::RegistryAction;
use crate::cardano::source::TxPlace;
use crate::primitives::BlockRef;
use crate::reputation::ReputationRules;
use crate::reputation::funding_trail::Inflow;
use crate::sources::payments::Settlement;
use crate::sources::{CardFields, DecodeError, Decoded, Role};
use alloy::primitives::{Address, B256, Bytes};
use std::sync::Arc;

/// The chain a batch belongs to.
#[derive(Debug, Clone)]
pub struct ChainContext {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// Name for status.
    pub name: String,
    /// The ERC-8004 Identity Registry that reputation and validation token ids refer to.
    pub identity: Option<Address>,
    /// How the chain's agents are scored.
    pub rules: Arc<ReputationRules>,
    /// Blocks before a payment in which its payer's funding is kept (`funding_trail`).
    pub funding_lookback: u64,
    /// The chain's next trust rank, computed ahead of when it goes into force.
    pub ranks_ahead: Arc<crate::store::RanksAhead>,
}

/// Every indexed chain's context, by chain id: what a command that may touch agents of any
/// chain (saving documents) needs to rescore them.
pub type ChainContexts = std::collections::BTreeMap<u64, Arc<ChainContext>>;

/// One log with its position and decoding.
#[derive(Debug, Clone)]
pub struct EventRecord {
    /// Block number.
    pub block_number: u64,
    /// Index of the log in its block.
    pub log_index: u64,
    /// Hash of its block.
    pub block_hash: B256,
    /// Timestamp of its block.
    pub block_timestamp: u64,
    /// Transaction hash.
    pub tx_hash: B256,
    /// Emitting contract.
    pub address: Address,
    /// What the emitting contract is.
    pub role: Role,
    /// topic0, when the log has one.
    pub topic0: Option<B256>,
    /// topics after topic0.
    pub topics: Vec<B256>,
    /// Unindexed data.
    pub data: Bytes,
    /// The decoded event, or why decoding failed.
    pub decoded: Result<Decoded, DecodeError>,
    /// For a token Transfer that x402 settled: how.
    pub settlement: Option<Settlement>,
    /// For a registry enrolment: the agent contract's state at the enrolment block.
    pub snapshot: Option<AgentSnapshot>,
}

/// What an agent contract already said about itself when a registry enrolled it, read at the
/// enrolment block; its events from before then are not followed. A field is `None` when its
/// call failed, and `errors` says which calls failed and why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentSnapshot {
    /// `owner()`.
    pub owner: Option<Address>,
    /// `card()`, as the card fields a `CardUpdated` event carries.
    pub card: Option<CardFields>,
    /// `active()`.
    pub active: Option<bool>,
    /// `heartbeatInterval()`.
    pub heartbeat_interval: Option<u64>,
    /// `lastHeartbeat()`.
    pub last_heartbeat: Option<u64>,
    /// `"call: reason"` for each call that failed.
    pub errors: Vec<String>,
}

/// A transaction of a followed Cardano policy or contract: the policy runs the provider listed
/// for it, and what it did to the registry and to the escrows.
#[derive(Debug, Clone)]
pub struct CardanoTx {
    /// Where it is.
    pub place: TxPlace,
    /// The policies it ran, one entry per redeemer listed.
    pub runs: Vec<String>,
    /// The registry entries it minted or burned.
    pub actions: Vec<RegistryAction>,
    /// What it did to the payment contract's escrows.
    pub escrow: Vec<EscrowAction>,
}

/// Blocks `from_block..=to_block` of one chain, applied atomically.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The chain.
    pub chain: Arc<ChainContext>,
    /// First block covered; must be the cursor plus one.
    pub from_block: u64,
    /// Last block covered; becomes the cursor.
    pub to_block: u64,
    /// Hash of `to_block`, when known.
    pub to_hash: Option<B256>,
    /// Every relevant log, in chain order.
    pub events: Vec<EventRecord>,
    /// On a Cardano network: the registry transactions of the run, in chain order (EVM
    /// batches have none).
    pub cardano: Vec<CardanoTx>,
    /// Token transfers into payers and their funders before they paid, from the blocks before
    /// the run too: the store keeps those the trail of a payment it credits reaches.
    pub funding: Vec<Inflow>,
    /// Blocks of this run to remember for reorg detection.
    pub window: Vec<BlockRef>,
    /// Remembered blocks below this number are forgotten.
    pub window_from: u64,
    /// The chain's finalized block when the batch was fetched.
    pub finalized: u64,
    /// The chain's head when the batch was fetched.
    pub head: u64,
    /// Whether the agents marked for rescoring are rescored with this batch: true when it
    /// reaches the head or the block indexing stops at.
    pub settles: bool,
}
