//! What the Cardano follower needs from a provider, in its own types: the interface Blockfrost
//! implements (`blockfrost.rs`) and a second backend would.
//!
//! Another backend fits behind the same five reads. Ogmios with Kupo would answer `tip` and
//! `block` from Ogmios's chain sync (kept in memory as it streams), `script_transactions` from
//! Kupo's `matches` of the policy (Kupo indexes outputs by policy id, so mints are the outputs
//! it first reports and burns the spends it marks), `transaction` and `utxos` from Kupo's
//! matches of the transaction id, and `metadata` from Kupo's `/metadata/{slot}`. UTxO RPC
//! (`utxorpc`) would answer them from its `sync` and `query` services, with metadata decoded
//! from the transactions' auxiliary data. Either would need a paging key other than a page
//! number for `script_transactions` (Kupo's created-at slot, UTxO RPC's block ref); the
//! follower only needs "the policy's transactions after the N it has".

use alloy::primitives::B256;
use std::future::Future;

/// A block of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardanoBlock {
    /// Its height.
    pub height: u64,
    /// Its hash.
    pub hash: B256,
    /// Its parent's hash (none for the first block).
    pub previous: Option<B256>,
    /// Unix time.
    pub time: u64,
}

/// A transaction that touched an address, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressTx {
    /// The transaction id.
    pub hash: B256,
    /// Its block's height.
    pub height: u64,
    /// Its position in the block.
    pub index: u32,
}

/// Where a transaction is on the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxPlace {
    /// The transaction id.
    pub hash: B256,
    /// The block it is in.
    pub block_hash: B256,
    /// That block's height.
    pub height: u64,
    /// Its position in the block.
    pub index: u32,
    /// That block's Unix time.
    pub time: u64,
    /// False when its scripts failed and only its collateral was taken.
    pub valid: bool,
}

/// An amount of one asset: `lovelace`, or a policy id followed by the asset name, in hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    /// `lovelace` or the asset's unit.
    pub unit: String,
    /// How much.
    pub quantity: u128,
}

/// An output a transaction created, or one it spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Utxo {
    /// The address holding it, bech32.
    pub address: String,
    /// The transaction that created it.
    pub tx_hash: B256,
    /// Its index in that transaction's outputs.
    pub output_index: u32,
    /// What it holds.
    pub amounts: Vec<Amount>,
    /// Its inline datum, CBOR in hex.
    pub inline_datum: Option<String>,
    /// Whether it is collateral (spent or returned only when scripts fail).
    pub collateral: bool,
    /// Whether it is only referenced, not spent (inputs only).
    pub reference: bool,
}

/// A transaction's inputs and outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxUtxos {
    /// What it spent or referenced.
    pub inputs: Vec<Utxo>,
    /// What it created.
    pub outputs: Vec<Utxo>,
}

/// One label of a transaction's metadata, as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataEntry {
    /// The label (`721` for CIP-25 token metadata, `674` for messages).
    pub label: String,
    /// Its value.
    pub json: serde_json::Value,
}

/// Why a provider call failed, classified for what the follower does next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// 429: over the provider's rate; the budget refills within seconds.
    #[error("{provider} answered 429 (over its rate limit) for {what}")]
    RateLimited {
        /// Which provider.
        provider: String,
        /// Which call.
        what: String,
    },
    /// 402: the project's daily quota is spent; it resets at midnight UTC.
    #[error("{provider} answered 402 (the project's daily request quota is spent) for {what}")]
    OverQuota {
        /// Which provider.
        provider: String,
        /// Which call.
        what: String,
    },
    /// 418: the provider banned the project for going on past 429s.
    #[error("{provider} answered 418 (the project is banned for a while) for {what}")]
    Banned {
        /// Which provider.
        provider: String,
        /// Which call.
        what: String,
    },
    /// 5xx, a timeout or a broken connection: worth trying again.
    #[error("{provider} failed for {what}: {reason}")]
    Unavailable {
        /// Which provider.
        provider: String,
        /// Which call.
        what: String,
        /// The status or transport error.
        reason: String,
    },
    /// 400 or 403: the request or the project key is wrong; trying again will not help.
    #[error("{provider} refused {what} with {status}: {message}")]
    Refused {
        /// Which provider.
        provider: String,
        /// Which call.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// An answer that is not what the API promises.
    #[error("{provider} gave a malformed answer for {what}: {reason}")]
    Malformed {
        /// Which provider.
        provider: String,
        /// Which call.
        what: String,
        /// What was wrong.
        reason: String,
    },
}

impl SourceError {
    /// Whether waiting and asking again can succeed.
    pub fn is_transient(&self) -> bool {
        !matches!(self, Self::Refused { .. })
    }

    /// How long to wait before asking again after this error, at least.
    pub fn backoff(&self) -> std::time::Duration {
        use std::time::Duration;
        match self {
            Self::RateLimited { .. } => Duration::from_secs(1),
            // The quota resets at midnight UTC; asking every minute costs nothing (the
            // follower waits `quota_wait_secs`).
            Self::OverQuota { .. } => Duration::from_secs(60),
            Self::Banned { .. } => Duration::from_secs(300),
            Self::Unavailable { .. } | Self::Malformed { .. } => Duration::from_secs(2),
            Self::Refused { .. } => Duration::ZERO,
        }
    }

    /// The metric label of the class.
    pub fn class(&self) -> &'static str {
        match self {
            Self::RateLimited { .. } => "rate_limited",
            Self::OverQuota { .. } => "over_quota",
            Self::Banned { .. } => "banned",
            Self::Unavailable { .. } => "unavailable",
            Self::Refused { .. } => "refused",
            Self::Malformed { .. } => "malformed",
        }
    }
}

/// A provider's result.
pub type SourceResult<T> = Result<T, SourceError>;

/// The reads the Cardano follower makes. Every call is one request (or a few) against the
/// provider's budget.
pub trait CardanoSource: Send + Sync + 'static {
    /// The provider's name, for errors and metrics.
    fn name(&self) -> &str;

    /// The newest block.
    fn tip(&self) -> impl Future<Output = SourceResult<CardanoBlock>> + Send;

    /// The block at `height`, or none when the chain is not that long (any more).
    fn block(&self, height: u64)
    -> impl Future<Output = SourceResult<Option<CardanoBlock>>> + Send;

    /// Transactions that ran `script` (a minting policy), in chain order: `count` of them from
    /// the `skip`-th on (0-based); the same transaction may appear once per redeemer.
    fn script_transactions(
        &self,
        script: &str,
        skip: u64,
        count: u32,
    ) -> impl Future<Output = SourceResult<Vec<B256>>> + Send;

    /// The transactions that touched `address` in blocks `from..=to`, in chain order: page
    /// `page` (from 1) of up to 100.
    fn address_transactions(
        &self,
        address: &str,
        from: u64,
        to: u64,
        page: u32,
    ) -> impl Future<Output = SourceResult<Vec<AddressTx>>> + Send;

    /// Where a transaction is, or none when the chain does not hold it (any more).
    fn transaction(&self, hash: B256)
    -> impl Future<Output = SourceResult<Option<TxPlace>>> + Send;

    /// A transaction's inputs and outputs.
    fn utxos(&self, hash: B256) -> impl Future<Output = SourceResult<TxUtxos>> + Send;

    /// A transaction's metadata, by label.
    fn metadata(&self, hash: B256)
    -> impl Future<Output = SourceResult<Vec<MetadataEntry>>> + Send;
}
