//! The Blockfrost API as a [`CardanoSource`]: the official client crate for the calls, a
//! governor budget in front of it (the provider's rate and burst), and its answers classified
//! (429 over the rate, 402 over the daily quota, 418 banned, 5xx unavailable, 400/403 refused).
//!
//! The crate's own retries are off: what to do after an error is the follower's decision, and
//! Blockfrost asks clients never to retry 402 or 418 in a loop.

use super::source::{
    AddressTx, Amount, CardanoBlock, CardanoSource, MetadataEntry, SourceError, SourceResult,
    TxPlace, TxUtxos, Utxo,
};
use crate::config::CardanoConfig;
use alloy::primitives::B256;
use blockfrost::{
    BlockCursor, BlockFrostSettings, BlockfrostAPI, BlockfrostError, Order, Pagination,
};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::future::Future;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// Blockfrost's largest page.
const PAGE: u64 = 100;

/// 429s one request waits out before its step fails (a quarter of a second, doubling: about
/// eight seconds in all).
const RATE_RETRIES: u32 = 5;

/// A Blockfrost-compatible API with its request budget.
pub struct Blockfrost {
    name: String,
    /// The base URL, for the metrics (which keep its scheme, host and port only).
    url: String,
    api: BlockfrostAPI,
    limiter: DefaultDirectRateLimiter,
}

impl std::fmt::Debug for Blockfrost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blockfrost")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Blockfrost {
    /// The provider `config` names, its budget full.
    pub fn new(config: &CardanoConfig) -> Result<Self, SourceError> {
        let name = format!("blockfrost ({})", config.name());
        let mut settings = BlockFrostSettings::new();
        settings.base_url = Some(config.blockfrost_url());
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.request_timeout_secs))
            .connect_timeout(Duration::from_secs(config.request_timeout_secs.min(10)))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agentindex/", env!("CARGO_PKG_VERSION")));
        let api = BlockfrostAPI::new_with_client(&config.project_id, settings, client).map_err(
            |error| SourceError::Refused {
                provider: name.clone(),
                what: "building the HTTP client".into(),
                status: 0,
                message: error.to_string(),
            },
        )?;
        let rate = NonZeroU32::new(config.requests_per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(config.burst).unwrap_or(rate);
        Ok(Self {
            name,
            url: config.blockfrost_url(),
            api,
            limiter: RateLimiter::direct(Quota::per_second(rate).allow_burst(burst)),
        })
    }

    /// Waits for the budget, then sends the request `send` makes, counting it in the RPC metrics
    /// under `method`. A 429 (over the provider's rate: the budgets drifted apart) is waited out
    /// here, request by request, growing from a quarter of a second, up to [`RATE_RETRIES`]
    /// times; a step's other reads are not thrown away for it.
    async fn call<T, F>(&self, method: &str, send: impl Fn() -> F) -> Result<T, BlockfrostError>
    where
        F: Future<Output = Result<T, BlockfrostError>>,
    {
        let mut retries = 0;
        loop {
            self.limiter.until_ready().await;
            let started = Instant::now();
            let result = send().await;
            let failed = match &result {
                Err(BlockfrostError::Response { reason, .. }) if reason.status_code == 404 => None,
                Err(BlockfrostError::Response { reason, .. }) => {
                    Some(status_class(reason.status_code))
                }
                Err(_) => Some("transient"),
                Ok(_) => None,
            };
            crate::metrics::metrics().rpc(
                &self.url,
                &format!("blockfrost:{method}"),
                started.elapsed(),
                failed,
            );
            if failed == Some("rate_limited") && retries < RATE_RETRIES {
                tokio::time::sleep(Duration::from_millis(250 << retries)).await;
                retries += 1;
                continue;
            }
            return result;
        }
    }

    /// Classifies a failed call.
    fn error(&self, what: &str, error: BlockfrostError) -> SourceError {
        let provider = self.name.clone();
        let what = what.to_string();
        match error {
            BlockfrostError::Response { reason, .. } => match reason.status_code {
                429 => SourceError::RateLimited { provider, what },
                402 => SourceError::OverQuota { provider, what },
                418 => SourceError::Banned { provider, what },
                status @ (400..=499) => SourceError::Refused {
                    provider,
                    what,
                    status,
                    message: crate::redact::text(&reason.message),
                },
                status => SourceError::Unavailable {
                    provider,
                    what,
                    reason: format!("HTTP {status}: {}", crate::redact::text(&reason.message)),
                },
            },
            ref malformed @ (BlockfrostError::Json { .. } | BlockfrostError::Parsing { .. }) => {
                SourceError::Malformed {
                    provider,
                    what,
                    reason: reason_text(malformed),
                }
            }
            other => SourceError::Unavailable {
                provider,
                what,
                reason: reason_text(&other),
            },
        }
    }

    /// A call that answers 404 when the thing is not there.
    fn missing<T>(
        &self,
        what: &str,
        result: Result<T, BlockfrostError>,
    ) -> SourceResult<Option<T>> {
        match result {
            Ok(value) => Ok(Some(value)),
            Err(BlockfrostError::Response { reason, .. }) if reason.status_code == 404 => Ok(None),
            Err(error) => Err(self.error(what, error)),
        }
    }

    fn malformed(&self, what: &str, reason: String) -> SourceError {
        SourceError::Malformed {
            provider: self.name.clone(),
            what: what.to_string(),
            reason,
        }
    }

    fn block_of(
        &self,
        what: &str,
        block: blockfrost::blockfrost_openapi::models::BlockContent,
    ) -> SourceResult<CardanoBlock> {
        let height = block
            .height
            .and_then(|h| u64::try_from(h).ok())
            .ok_or_else(|| self.malformed(what, "a block without a height".into()))?;
        Ok(CardanoBlock {
            height,
            hash: self.hash(what, &block.hash)?,
            previous: block
                .previous_block
                .as_deref()
                .map(|h| self.hash(what, h))
                .transpose()?,
            time: u64::try_from(block.time).unwrap_or(0),
        })
    }

    fn hash(&self, what: &str, text: &str) -> SourceResult<B256> {
        parse_hash(text)
            .ok_or_else(|| self.malformed(what, format!("{text:?} is not a 32-byte hash")))
    }
}

/// The metric label of a failed status.
fn status_class(status: u16) -> &'static str {
    match status {
        429 => "rate_limited",
        402 => "over_quota",
        418 => "banned",
        400..=499 => "refused",
        _ => "transient",
    }
}

/// The error's reason, with any URL in it redacted.
fn reason_text(error: &BlockfrostError) -> String {
    let text = match error {
        BlockfrostError::Reqwest { reason, .. } => reason.to_string(),
        BlockfrostError::Json { reason, .. } => reason.to_string(),
        other => other.to_string(),
    };
    crate::redact::text(&text)
}

/// A 32-byte hash written as 64 hex digits.
pub(super) fn parse_hash(text: &str) -> Option<B256> {
    (text.len() == 64)
        .then(|| text.parse::<B256>().ok())
        .flatten()
}

/// Hex without the 0x alloy writes.
pub(super) fn bare_hex(hash: &B256) -> String {
    alloy::hex::encode(hash)
}

fn amounts(
    source: &Blockfrost,
    what: &str,
    amounts: Vec<blockfrost::blockfrost_openapi::models::TxContentOutputAmountInner>,
) -> SourceResult<Vec<Amount>> {
    amounts
        .into_iter()
        .map(|a| {
            let quantity = a.quantity.parse::<u128>().map_err(|_| {
                source.malformed(what, format!("quantity {:?} is not a number", a.quantity))
            })?;
            Ok(Amount {
                unit: a.unit,
                quantity,
            })
        })
        .collect()
}

fn index(source: &Blockfrost, what: &str, value: i32) -> SourceResult<u32> {
    u32::try_from(value).map_err(|_| source.malformed(what, format!("index {value} is negative")))
}

impl CardanoSource for Blockfrost {
    fn name(&self) -> &str {
        &self.name
    }

    async fn tip(&self) -> SourceResult<CardanoBlock> {
        let what = "the latest block";
        let block = self
            .call("blocks/latest", || self.api.blocks_latest())
            .await
            .map_err(|e| self.error(what, e))?;
        self.block_of(what, block)
    }

    async fn block(&self, height: u64) -> SourceResult<Option<CardanoBlock>> {
        let what = format!("block {height}");
        let height_text = height.to_string();
        let answer = self
            .call("blocks", || self.api.blocks_by_id(&height_text))
            .await;
        self.missing(&what, answer)?
            .map(|block| self.block_of(&what, block))
            .transpose()
    }

    async fn script_transactions(
        &self,
        script: &str,
        skip: u64,
        count: u32,
    ) -> SourceResult<Vec<B256>> {
        let what = format!("the redeemers of script {script}");
        let mut found = Vec::new();
        let mut page = skip / PAGE + 1;
        let mut offset = (skip % PAGE) as usize;
        while found.len() < count as usize {
            let pagination = Pagination::new(Order::Asc, page as usize, PAGE as usize);
            let answer = self
                .call("scripts/redeemers", || {
                    self.api.scripts_redeemers(script, pagination)
                })
                .await;
            // A script nothing ran yet is not known to the provider.
            let Some(items) = self.missing(&what, answer)? else {
                break;
            };
            let full = items.len() as u64 == PAGE;
            for item in items.into_iter().skip(offset) {
                found.push(self.hash(&what, &item.tx_hash)?);
            }
            if !full {
                break;
            }
            page += 1;
            offset = 0;
        }
        found.truncate(count as usize);
        Ok(found)
    }

    async fn address_transactions(
        &self,
        address: &str,
        from: u64,
        to: u64,
        page: u32,
    ) -> SourceResult<Vec<AddressTx>> {
        let what = format!("the transactions of {address}");
        let pagination = Pagination::new(Order::Asc, page as usize, PAGE as usize)
            .with_range(BlockCursor::block(from), BlockCursor::block(to));
        let answer = self
            .call("addresses/transactions", || {
                self.api.addresses_transactions(address, pagination)
            })
            .await;
        // An address nothing touched yet is not known to the provider.
        let Some(items) = self.missing(&what, answer)? else {
            return Ok(Vec::new());
        };
        items
            .into_iter()
            .map(|item| {
                Ok(AddressTx {
                    hash: self.hash(&what, &item.tx_hash)?,
                    height: u64::try_from(item.block_height)
                        .map_err(|_| self.malformed(&what, "a negative block height".into()))?,
                    index: index(self, &what, item.tx_index)?,
                })
            })
            .collect()
    }

    async fn transaction(&self, hash: B256) -> SourceResult<Option<TxPlace>> {
        let what = format!("transaction {}", bare_hex(&hash));
        let hex = bare_hex(&hash);
        let answer = self
            .call("txs", || self.api.transaction_by_hash(&hex))
            .await;
        let Some(tx) = self.missing(&what, answer)? else {
            return Ok(None);
        };
        Ok(Some(TxPlace {
            hash,
            block_hash: self.hash(&what, &tx.block)?,
            height: u64::try_from(tx.block_height)
                .map_err(|_| self.malformed(&what, "a negative block height".into()))?,
            index: index(self, &what, tx.index)?,
            time: u64::try_from(tx.block_time).unwrap_or(0),
            valid: tx.valid_contract,
        }))
    }

    async fn utxos(&self, hash: B256) -> SourceResult<TxUtxos> {
        let what = format!("the inputs and outputs of {}", bare_hex(&hash));
        let hex = bare_hex(&hash);
        let tx = self
            .call("txs/utxos", || self.api.transactions_utxos(&hex))
            .await
            .map_err(|e| self.error(&what, e))?;
        let mut utxos = TxUtxos::default();
        for input in tx.inputs {
            utxos.inputs.push(Utxo {
                address: input.address,
                tx_hash: self.hash(&what, &input.tx_hash)?,
                output_index: index(self, &what, input.output_index)?,
                amounts: amounts(self, &what, input.amount)?,
                inline_datum: input.inline_datum,
                collateral: input.collateral,
                reference: input.reference.unwrap_or(false),
            });
        }
        for output in tx.outputs {
            utxos.outputs.push(Utxo {
                address: output.address,
                tx_hash: hash,
                output_index: index(self, &what, output.output_index)?,
                amounts: amounts(self, &what, output.amount)?,
                inline_datum: output.inline_datum,
                collateral: output.collateral,
                reference: false,
            });
        }
        Ok(utxos)
    }

    async fn metadata(&self, hash: B256) -> SourceResult<Vec<MetadataEntry>> {
        let what = format!("the metadata of {}", bare_hex(&hash));
        let hex = bare_hex(&hash);
        let entries = self
            .call("txs/metadata", || self.api.transactions_metadata(&hex))
            .await
            .map_err(|e| self.error(&what, e))?;
        Ok(entries
            .into_iter()
            .map(|entry| MetadataEntry {
                label: entry.label,
                json: serde_json::to_value(*entry.json_metadata).unwrap_or_default(),
            })
            .collect())
    }
}
