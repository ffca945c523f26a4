//! `[[chains]]`: one EVM chain to follow and the contracts on it.

use super::{ConfigError, ConfigResult, defaults};
use alloy::primitives::Address;
use serde::Deserialize;

/// One chain and what to index on it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// Name used in logs and status (`base-sepolia`).
    pub name: String,
    /// EIP-155 chain id; checked against every endpoint.
    pub chain_id: u64,
    /// JSON-RPC endpoints, tried in order with failover.
    pub rpc: Vec<String>,
    /// Which blocks count as final.
    #[serde(default)]
    pub finality: Finality,
    /// First block to index: a number, or `"deployment"` for the block the Identity Registry
    /// was deployed in (found by the follower when it first starts).
    #[serde(default)]
    pub start_block: StartBlock,
    /// The ERC-8004 registries, when the chain has them.
    #[serde(default)]
    pub erc8004: Option<Erc8004Addresses>,
    /// Agent factories whose children are followed.
    #[serde(default)]
    pub factories: Vec<WatchedContract>,
    /// Agent registries whose enrolments are followed.
    #[serde(default)]
    pub registries: Vec<WatchedContract>,
    /// ERC-20 tokens whose transfers into agents count as payments.
    #[serde(default)]
    pub payment_tokens: Vec<PaymentToken>,
    /// x402 settlement contracts and facilitators.
    #[serde(default)]
    pub x402: X402Config,
    /// Requests per second allowed on each endpoint.
    #[serde(default = "defaults::requests_per_second")]
    pub requests_per_second: u32,
    /// Timeout of one RPC request, in seconds.
    #[serde(default = "defaults::request_timeout_secs")]
    pub request_timeout_secs: u64,
    /// Widest `eth_getLogs` block range asked for; the follower adapts below it.
    #[serde(default = "defaults::max_block_range")]
    pub max_block_range: u64,
    /// How many unfinalized blocks are kept to detect reorgs.
    #[serde(default = "defaults::reorg_window")]
    pub reorg_window: u64,
    /// What a reorg deeper than the window does.
    #[serde(default)]
    pub on_deep_reorg: DeepReorg,
    /// How often the head is polled when following the tip, in milliseconds.
    #[serde(default = "defaults::poll_interval_ms")]
    pub poll_interval_ms: u64,
    /// Payment addresses per `eth_getLogs` request (in `topics[2]`).
    #[serde(default = "defaults::payment_address_chunk")]
    pub payment_address_chunk: usize,
    /// Blocks before each payment in which the payer's funding is looked for (issue #32's
    /// funding clusters; 0 looks for none). On a provider that caps a request's block range,
    /// each hop of the lookback costs this many blocks' worth of requests per chunk of payers.
    #[serde(default = "defaults::funding_lookback_blocks")]
    pub funding_lookback_blocks: u64,
    /// How logs are asked for: by address chunks, by scanning event signatures, or whichever
    /// the cost model finds cheaper per range.
    #[serde(default)]
    pub fetch_strategy: FetchStrategy,
    /// RPC requests in flight at once on this chain (chunks of a range, headers, scans).
    #[serde(default = "defaults::rpc_concurrency")]
    pub rpc_concurrency: usize,
    /// Backfill ranges whose logs are read at once while the earliest is resolved and written;
    /// each is still applied in chain order. One by default: on a request budget, reading
    /// ahead costs requests without saving time (see docs/operations.md).
    #[serde(default = "defaults::ranges_in_flight")]
    pub ranges_in_flight: usize,
}

/// How a range's agent-contract logs and token transfers are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FetchStrategy {
    /// Per range, whichever costs fewer requests given the sets' sizes and the densities seen.
    #[default]
    Auto,
    /// Always by address: agent contracts in the address list, payment addresses in the topics.
    Addresses,
    /// Always by event signature across the chain, filtered locally.
    Scan,
}

/// `[chains.x402]`: the contracts x402 payments settle through besides EIP-3009, and the
/// facilitators that submit them. Each contract defaults to its canonical address (the same on
/// every EVM chain); the zero address turns one off.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct X402Config {
    /// The Permit2 proxy of the `exact` scheme (emits `Settled()` beside the payer's transfer).
    pub permit2_exact_proxy: Address,
    /// The Permit2 proxy of the `upto` scheme.
    pub permit2_upto_proxy: Address,
    /// The batch-settlement contract (channels, claims, settlements).
    pub batch_settlement: Address,
    /// Facilitators: their own transfers never count as a customer paying.
    pub facilitators: Vec<Address>,
}

impl Default for X402Config {
    fn default() -> Self {
        Self {
            permit2_exact_proxy: alloy::primitives::address!(
                "0x402085c248EeA27D92E8b30b2C58ed07f9E20001"
            ),
            permit2_upto_proxy: alloy::primitives::address!(
                "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002"
            ),
            batch_settlement: alloy::primitives::address!(
                "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003"
            ),
            facilitators: Vec::new(),
        }
    }
}

impl X402Config {
    /// The Permit2 proxies turned on, each with whether it is the `upto` one.
    pub fn permit2_proxies(&self) -> Vec<(Address, bool)> {
        [
            (self.permit2_exact_proxy, false),
            (self.permit2_upto_proxy, true),
        ]
        .into_iter()
        .filter(|(address, _)| !address.is_zero())
        .collect()
    }

    /// The batch-settlement contract, unless turned off.
    pub fn batch_settlement(&self) -> Option<Address> {
        (!self.batch_settlement.is_zero()).then_some(self.batch_settlement)
    }
}

/// `[chains.erc8004]`: any of the three registries.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Erc8004Addresses {
    /// Identity Registry.
    pub identity: Option<Address>,
    /// Reputation Registry.
    pub reputation: Option<Address>,
    /// Validation Registry.
    pub validation: Option<Address>,
}

/// `[[chains.factories]]` or `[[chains.registries]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchedContract {
    /// The contract.
    pub address: Address,
    /// First block to look at; the chain's `start_block` when absent.
    pub start_block: Option<u64>,
}

/// `[[chains.payment_tokens]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentToken {
    /// The ERC-20 (with EIP-3009 for x402 settlements).
    pub address: Address,
    /// Display symbol.
    pub symbol: String,
    /// Decimals of its amounts.
    pub decimals: u8,
    /// Payments below this many whole tokens (e.g. "0.001") are dust and do not count for
    /// reputation; none are by default.
    #[serde(default)]
    pub dust: Option<String>,
}

impl PaymentToken {
    /// The dust threshold in the token's smallest unit.
    pub fn dust_units(&self) -> Result<alloy::primitives::U256, DustError> {
        let Some(dust) = &self.dust else {
            return Ok(alloy::primitives::U256::ZERO);
        };
        let decimals = self.decimals;
        let fraction = dust.split_once('.').map_or(0, |(_, f)| f.len());
        if fraction > usize::from(decimals) {
            return Err(DustError::TooPrecise {
                dust: dust.clone(),
                decimals,
            });
        }
        alloy::primitives::utils::parse_units(dust, decimals)
            .map(Into::into)
            .map_err(|source| DustError::NotAnAmount {
                dust: dust.clone(),
                decimals,
                source,
            })
    }
}

/// Why a payment token's `dust` is not an amount of the token.
#[derive(Debug, thiserror::Error)]
pub enum DustError {
    /// More decimal places than the token has.
    #[error("{dust:?} has more than the token's {decimals} decimals")]
    TooPrecise {
        /// The `dust` value as written.
        dust: String,
        /// The token's decimals.
        decimals: u8,
    },
    /// Not a decimal number.
    #[error("{dust:?} is not an amount with at most {decimals} decimals: {source}")]
    NotAnAmount {
        /// The `dust` value as written.
        dust: String,
        /// The token's decimals.
        decimals: u8,
        /// What the parser said.
        source: alloy::primitives::utils::UnitsError,
    },
}

/// Which blocks are final: the node's `finalized` tag, or a fixed depth below the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Finality {
    /// Ask the node for the `finalized` block (falls back to 64 blocks when the node lacks it).
    #[default]
    Tag,
    /// Blocks at least this deep below the head are final.
    Depth(u64),
}

/// Where a chain's index starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartBlock {
    /// At this block.
    At(u64),
    /// At the first block with code at the Identity Registry's address.
    Deployment,
}

impl Default for StartBlock {
    fn default() -> Self {
        StartBlock::At(0)
    }
}

impl StartBlock {
    /// The block, when it is set rather than to be found.
    pub fn known(self) -> Option<u64> {
        match self {
            StartBlock::At(block) => Some(block),
            StartBlock::Deployment => None,
        }
    }
}

impl<'de> Deserialize<'de> for StartBlock {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Block(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Block(block) => Ok(StartBlock::At(block)),
            Raw::Text(text) if text == "deployment" => Ok(StartBlock::Deployment),
            Raw::Text(text) => text.parse().map(StartBlock::At).map_err(|_| {
                serde::de::Error::custom(format!(
                    "expected a block number or \"deployment\", found {text:?}"
                ))
            }),
        }
    }
}

/// What a reorg deeper than the kept window does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeepReorg {
    /// Stop the chain's follower with an error.
    #[default]
    Stop,
    /// Undo everything above the last finalized block and index again from there.
    Rewind,
}

impl<'de> Deserialize<'de> for Finality {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Depth(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Depth(depth) => Ok(Finality::Depth(depth)),
            Raw::Text(text) if text == "finalized" => Ok(Finality::Tag),
            Raw::Text(text) => text.parse().map(Finality::Depth).map_err(|_| {
                serde::de::Error::custom(format!(
                    "expected \"finalized\" or a depth in blocks, found {text:?}"
                ))
            }),
        }
    }
}

impl ChainConfig {
    pub(super) fn validate(&self, key: &str) -> ConfigResult<()> {
        let bad = |field: &str, message: String| ConfigError::Key {
            key: format!("{key}.{field}"),
            message,
        };
        if self.rpc.is_empty() {
            return Err(bad("rpc", "at least one endpoint is required".into()));
        }
        for (i, url) in self.rpc.iter().enumerate() {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad(
                    &format!("rpc[{i}]"),
                    format!("{} is not an http(s) URL", crate::redact::url(url)),
                ));
            }
        }
        if self.requests_per_second == 0 {
            return Err(bad("requests_per_second", "must be at least 1".into()));
        }
        if self.max_block_range == 0 {
            return Err(bad("max_block_range", "must be at least 1".into()));
        }
        if self.reorg_window == 0 {
            return Err(bad("reorg_window", "must be at least 1".into()));
        }
        if self.ranges_in_flight == 0 {
            return Err(bad("ranges_in_flight", "must be at least 1".into()));
        }
        if self.rpc_concurrency == 0 {
            return Err(bad("rpc_concurrency", "must be at least 1".into()));
        }
        if self.payment_address_chunk == 0 {
            return Err(bad("payment_address_chunk", "must be at least 1".into()));
        }
        for (i, token) in self.payment_tokens.iter().enumerate() {
            token
                .dust_units()
                .map_err(|error| bad(&format!("payment_tokens[{i}].dust"), error.to_string()))?;
        }
        Ok(())
    }
}
