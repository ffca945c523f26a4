//! `[[cardano]]`: a Cardano network followed through a Blockfrost-compatible API, for Masumi's
//! agent registry. The network decides the defaults (endpoint, registry policies); the project
//! key is the operator's.

use super::{ConfigError, ConfigResult};
use crate::primitives::CardanoNetwork;
use serde::Deserialize;

/// One `[[cardano]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardanoConfig {
    /// Name for status and logs; defaults to the network's preset name (`cardano-preprod`).
    #[serde(default)]
    pub name: Option<String>,
    /// `mainnet`, `preprod` or `preview`.
    pub network: CardanoNetwork,
    /// The Blockfrost API's base URL (hosted, or a self-hosted Blockfrost-compatible server);
    /// defaults to Blockfrost's hosted endpoint for the network.
    #[serde(default)]
    pub blockfrost_url: Option<String>,
    /// The Blockfrost project key, sent as the `project_id` header. Kept out of logs.
    #[serde(default)]
    pub project_id: String,
    /// Requests per second the provider allows, sustained (Blockfrost: 10).
    #[serde(default = "defaults::requests_per_second")]
    pub requests_per_second: u32,
    /// Requests the provider allows at once before the rate applies (Blockfrost: 500).
    #[serde(default = "defaults::burst")]
    pub burst: u32,
    /// Seconds one request may take.
    #[serde(default = "defaults::request_timeout_secs")]
    pub request_timeout_secs: u64,
    /// Seconds to wait after the provider says the project's daily quota is spent (402)
    /// before asking again; Blockfrost's quota resets at midnight UTC.
    #[serde(default = "defaults::quota_wait_secs")]
    pub quota_wait_secs: u64,
    /// Blocks behind the tip remembered to detect a rollback; a rollback deeper than this
    /// stops the network's follower.
    #[serde(default = "defaults::rollback_window")]
    pub rollback_window: u64,
    /// Milliseconds between polls of the tip once synced.
    #[serde(default = "defaults::poll_interval_ms")]
    pub poll_interval_ms: u64,
    /// Registry transactions applied together in one batch at most.
    #[serde(default = "defaults::transactions_per_batch")]
    pub transactions_per_batch: usize,
    /// Where Masumi lives on this network (`[cardano.masumi]`).
    #[serde(default)]
    pub masumi: MasumiConfig,
}

/// `[cardano.masumi]`: the registry policies to follow; each defaults to the network's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MasumiConfig {
    /// Registry V1's minting policy id (56 hex digits); "" turns it off.
    #[serde(default)]
    pub registry_v1: Option<String>,
    /// Registry V2's minting policy id; "" turns it off.
    #[serde(default)]
    pub registry_v2: Option<String>,
    /// The payment contract V1's script address (bech32); "" turns it off.
    #[serde(default)]
    pub escrow_v1: Option<String>,
    /// The payment contract V2's script address; "" turns it off.
    #[serde(default)]
    pub escrow_v2: Option<String>,
}

/// A Masumi payment contract (escrow) to follow: its address and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscrowContract {
    /// The script address, bech32.
    pub address: String,
    /// 1 or 2.
    pub version: u8,
}

/// A registry policy to follow, and which version of the registry minted under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryPolicy {
    /// 56 lower-case hex digits.
    pub policy_id: String,
    /// 1 or 2.
    pub version: u8,
}

impl CardanoConfig {
    /// Its name: the configured one, else the network's.
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.network.name().to_string())
    }

    /// The chain id its agents and cursor are keyed by.
    pub fn chain_id(&self) -> u64 {
        self.network.chain_id()
    }

    /// The API base URL, without a trailing slash.
    pub fn blockfrost_url(&self) -> String {
        self.blockfrost_url
            .as_deref()
            .unwrap_or(self.network.blockfrost_url())
            .trim_end_matches('/')
            .to_string()
    }

    /// The registry policies followed, V1 first.
    pub fn registry_policies(&self) -> Vec<RegistryPolicy> {
        let presets = self.network.masumi_policies();
        [
            (1, &self.masumi.registry_v1, presets.v1),
            (2, &self.masumi.registry_v2, presets.v2),
        ]
        .into_iter()
        .filter_map(|(version, configured, preset)| {
            let policy = match configured {
                Some(policy) => policy.trim().to_ascii_lowercase(),
                None => preset?.to_string(),
            };
            (!policy.is_empty()).then_some(RegistryPolicy {
                policy_id: policy,
                version,
            })
        })
        .collect()
    }

    /// The payment contracts followed, V1 first.
    pub fn escrow_contracts(&self) -> Vec<EscrowContract> {
        let presets = self.network.masumi_escrows();
        [
            (1, &self.masumi.escrow_v1, presets.v1),
            (2, &self.masumi.escrow_v2, presets.v2),
        ]
        .into_iter()
        .filter_map(|(version, configured, preset)| {
            let address = match configured {
                Some(address) => address.trim().to_string(),
                None => preset?.to_string(),
            };
            (!address.is_empty()).then_some(EscrowContract { address, version })
        })
        .collect()
    }

    /// Checks the values serde cannot; `key` is this entry's path (`cardano[0]`).
    pub(super) fn validate(&self, key: &str) -> ConfigResult<()> {
        let bad = |field: &str, message: String| ConfigError::Key {
            key: format!("{key}.{field}"),
            message,
        };
        let url = self.blockfrost_url();
        if !url::Url::parse(&url).is_ok_and(|u| matches!(u.scheme(), "https" | "http")) {
            return Err(bad(
                "blockfrost_url",
                format!("{url:?} is not an http(s) URL"),
            ));
        }
        for (field, value) in [
            ("requests_per_second", u64::from(self.requests_per_second)),
            ("burst", u64::from(self.burst)),
            ("request_timeout_secs", self.request_timeout_secs),
            ("quota_wait_secs", self.quota_wait_secs),
            ("rollback_window", self.rollback_window),
            ("transactions_per_batch", self.transactions_per_batch as u64),
        ] {
            if value == 0 {
                return Err(bad(field, "must be at least 1".into()));
            }
        }
        for (field, policy) in [
            ("masumi.registry_v1", &self.masumi.registry_v1),
            ("masumi.registry_v2", &self.masumi.registry_v2),
        ] {
            if let Some(policy) = policy.as_deref().map(str::trim)
                && !policy.is_empty()
                && !(policy.len() == 56 && policy.bytes().all(|b| b.is_ascii_hexdigit()))
            {
                return Err(bad(
                    field,
                    format!("{policy:?} is not a policy id (56 hex digits)"),
                ));
            }
        }
        let prefix = match self.network {
            CardanoNetwork::Mainnet => "addr1",
            _ => "addr_test1",
        };
        for (field, address) in [
            ("masumi.escrow_v1", &self.masumi.escrow_v1),
            ("masumi.escrow_v2", &self.masumi.escrow_v2),
        ] {
            if let Some(address) = address.as_deref().map(str::trim)
                && !address.is_empty()
                && !(address.starts_with(prefix)
                    && address[prefix.len()..]
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
            {
                return Err(bad(
                    field,
                    format!("{address:?} is not a bech32 address of this network ({prefix}…)"),
                ));
            }
        }
        Ok(())
    }
}

mod defaults {
    pub(super) const fn requests_per_second() -> u32 {
        10
    }
    pub(super) const fn burst() -> u32 {
        500
    }
    pub(super) const fn request_timeout_secs() -> u64 {
        30
    }
    pub(super) const fn quota_wait_secs() -> u64 {
        60
    }
    pub(super) const fn rollback_window() -> u64 {
        60
    }
    pub(super) const fn poll_interval_ms() -> u64 {
        10_000
    }
    pub(super) const fn transactions_per_batch() -> usize {
        200
    }
}
