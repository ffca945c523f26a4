//! Reading a Masumi registry transaction: which entries it minted or burned under a registry
//! policy, who holds each new NFT, and the CIP-25 metadata minted with it. Pure: the follower
//! fetches the transaction's parts, this turns them into actions.
//!
//! What a transaction did to an asset is its net change: outputs minus spent inputs (collateral
//! and reference inputs aside). More out than in is a mint, less is a burn. A V2 update burns
//! one version and mints the next in one transaction: the burn comes first, so the entry's last
//! action is the mint.

use super::source::{MetadataEntry, TxPlace, TxUtxos};
use crate::config::RegistryPolicy;
use crate::primitives::{AgentKey, AssetStem, POLICY_BYTES};
use serde_json::Value;
use std::collections::BTreeMap;

/// The bytes V2 appends to an asset name for its version.
const V2_VERSION_BYTES: usize = 3;

/// What a transaction did to one registry entry.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistryAction {
    /// The agent the entry is.
    pub agent: AgentKey,
    /// The registry policy.
    pub policy_id: String,
    /// 1 or 2.
    pub registry_version: u8,
    /// The asset name, hex.
    pub asset_name: String,
    /// Minted or burned.
    pub kind: ActionKind,
    /// Order among the transaction's actions.
    pub position: u32,
}

/// Why a mint has no metadata.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NoMetadata(pub String);

/// A mint or a burn.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionKind {
    /// The NFT was minted to `holder`, with `metadata` (the asset's CIP-25 object), or `None`
    /// and the reason when the transaction carries none for it.
    Mint {
        /// The address the NFT went to.
        holder: Option<String>,
        /// The asset's metadata.
        metadata: Result<Value, NoMetadata>,
    },
    /// The NFT was burned: the entry is deregistered, or (V2) replaced by its next version.
    Burn,
}

impl ActionKind {
    /// `mint` or `burn`, as stored.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Mint { .. } => "mint",
            Self::Burn => "burn",
        }
    }
}

/// The actions of one transaction under `policies`, on chain `chain_id`. An invalid
/// transaction (its scripts failed) minted nothing.
pub fn actions(
    chain_id: u64,
    place: &TxPlace,
    utxos: &TxUtxos,
    metadata: &[MetadataEntry],
    policies: &[RegistryPolicy],
) -> Vec<RegistryAction> {
    if !place.valid {
        return Vec::new();
    }
    let mut net: BTreeMap<&str, i128> = BTreeMap::new();
    for output in utxos.outputs.iter().filter(|o| !o.collateral) {
        for amount in &output.amounts {
            *net.entry(&amount.unit).or_default() += amount.quantity as i128;
        }
    }
    for input in utxos
        .inputs
        .iter()
        .filter(|i| !i.collateral && !i.reference)
    {
        for amount in &input.amounts {
            *net.entry(&amount.unit).or_default() -= amount.quantity as i128;
        }
    }
    let mut burns = Vec::new();
    let mut mints = Vec::new();
    for (unit, change) in net {
        let Some(policy) = policies.iter().find(|p| unit.starts_with(&p.policy_id)) else {
            continue;
        };
        let asset_name = &unit[policy.policy_id.len()..];
        let Some(agent) = agent_of(chain_id, policy, asset_name) else {
            continue;
        };
        let action = |kind| RegistryAction {
            agent,
            policy_id: policy.policy_id.clone(),
            registry_version: policy.version,
            asset_name: asset_name.to_string(),
            kind,
            position: 0,
        };
        match change.signum() {
            1 => {
                let holder = utxos
                    .outputs
                    .iter()
                    .find(|o| !o.collateral && o.amounts.iter().any(|a| a.unit == unit))
                    .map(|o| o.address.clone());
                mints.push(action(ActionKind::Mint {
                    holder,
                    metadata: asset_metadata(metadata, &policy.policy_id, asset_name),
                }));
            }
            -1 => burns.push(action(ActionKind::Burn)),
            _ => {}
        }
    }
    let mut all: Vec<RegistryAction> = burns.into_iter().chain(mints).collect();
    for (position, action) in all.iter_mut().enumerate() {
        action.position = position as u32;
    }
    all
}

/// The agent an asset of `policy` names: its whole name under V1, the name without its version
/// under V2 (a V2 name shorter than its version is taken whole).
pub fn agent_of(chain_id: u64, policy: &RegistryPolicy, asset_name: &str) -> Option<AgentKey> {
    let policy_bytes: [u8; POLICY_BYTES] = alloy::hex::decode(&policy.policy_id)
        .ok()?
        .try_into()
        .ok()?;
    let name = alloy::hex::decode(asset_name).ok()?;
    let stem = match policy.version {
        2 if name.len() > V2_VERSION_BYTES => &name[..name.len() - V2_VERSION_BYTES],
        _ => &name[..],
    };
    Some(AgentKey::masumi(
        chain_id,
        policy_bytes,
        AssetStem::new(stem)?,
    ))
}

/// The CIP-25 object (label 721) of one asset: `{policy: {name: {…}}}`, the name in hex (CIP-25
/// version 2) or as text (version 1).
fn asset_metadata(
    entries: &[MetadataEntry],
    policy: &str,
    asset_name: &str,
) -> Result<Value, NoMetadata> {
    let Some(entry) = entries.iter().find(|e| e.label == "721") else {
        return Err(NoMetadata(
            "the transaction has no CIP-25 (label 721) metadata".into(),
        ));
    };
    let assets = entry
        .json
        .as_object()
        .and_then(|by_policy| {
            by_policy
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(policy))
                .map(|(_, assets)| assets)
        })
        .and_then(Value::as_object)
        .ok_or_else(|| {
            NoMetadata(format!(
                "its CIP-25 metadata has no object for policy {policy}"
            ))
        })?;
    let as_text = alloy::hex::decode(asset_name)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
    assets
        .iter()
        .find(|(key, _)| {
            key.eq_ignore_ascii_case(asset_name) || as_text.as_deref() == Some(key.as_str())
        })
        .map(|(_, value)| value.clone())
        .ok_or_else(|| {
            NoMetadata(format!(
                "its CIP-25 metadata names no asset {asset_name} of that policy"
            ))
        })
}

#[cfg(test)]
mod tests;
