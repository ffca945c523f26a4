//! A Masumi agent's current state, folded from its registry actions in chain order: the newest
//! mint is its current NFT (holder, metadata), a burn of that NFT deregisters it, and under V2
//! an update is a burn and the next version's mint in one transaction, so the agent goes on.

use super::AgentState;
use crate::documents::masumi::parse_masumi_metadata;
use serde_json::Value;

/// One stored registry action of an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MasumiAction {
    /// Block height.
    pub block: i64,
    /// Position of its transaction in the block.
    pub tx_index: i64,
    /// Unix time of the block.
    pub timestamp: i64,
    /// The registry policy.
    pub policy_id: String,
    /// 1 or 2.
    pub registry_version: i64,
    /// The asset name, hex.
    pub asset_name: String,
    /// `mint` or `burn`.
    pub action: String,
    /// Who the NFT was minted to.
    pub holder: Option<String>,
    /// The CIP-25 object minted with it, JSON.
    pub metadata: Option<String>,
    /// Why a mint has no metadata.
    pub metadata_error: Option<String>,
}

/// What the `masumi_agents` row holds.
#[derive(Debug, Clone, PartialEq)]
pub struct MasumiDetails {
    /// The current NFT's unit.
    pub unit: String,
    /// The registry policy.
    pub policy_id: String,
    /// The current NFT's name, hex.
    pub asset_name: String,
    /// 1 or 2.
    pub registry_version: i64,
    /// `documents::masumi::MasumiMetadata`, JSON.
    pub metadata: String,
    /// The CIP-25 object as minted.
    pub raw_metadata: Option<String>,
    /// The lints of reading it, JSON.
    pub lints: String,
    /// Why the current NFT has no metadata.
    pub metadata_error: Option<String>,
    /// Where its NFT was burned, when it is deregistered.
    pub deregistered_block: Option<i64>,
    /// Mints after the first.
    pub updates: i64,
}

/// The agent `key` as `actions` (its own, in chain order) leave it; none when it was never
/// minted (every action undone, or a burn of an NFT minted before anything was read).
pub fn fold(key: &str, actions: &[MasumiAction]) -> Option<(AgentState, MasumiDetails)> {
    let first = actions.iter().find(|a| a.action == "mint")?;
    let mut current = first;
    let mut mints = 0i64;
    let mut deregistered = None;
    for action in actions {
        match action.action.as_str() {
            "mint" => {
                current = action;
                mints += 1;
                deregistered = None;
            }
            "burn" if action.asset_name == current.asset_name && mints > 0 => {
                deregistered = Some(action.block);
            }
            _ => {}
        }
    }
    let raw: Option<Value> = current
        .metadata
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok());
    let (metadata, report) = match &raw {
        Some(value) => parse_masumi_metadata(value),
        None => Default::default(),
    };
    let last = actions.last().map_or(current.block, |a| a.block);
    let state = AgentState {
        key: key.to_string(),
        source: "masumi".into(),
        address: None,
        registry: Some(current.policy_id.clone()),
        token_id: Some(current.asset_name.clone()),
        owner: current.holder.clone().unwrap_or_default(),
        operators: Vec::new(),
        uri: None,
        agent_wallet: None,
        payment_address: None,
        card: None,
        card_uri: metadata.agent_card_url.clone(),
        card_hash: None,
        name: metadata.name.clone(),
        description: metadata.description.clone(),
        active: deregistered.is_none(),
        heartbeat_interval: None,
        last_heartbeat: None,
        registry_status: None,
        registered_block: first.block,
        registered_at: first.timestamp,
        last_event_block: last,
    };
    let details = MasumiDetails {
        unit: format!("{}{}", current.policy_id, current.asset_name),
        policy_id: current.policy_id.clone(),
        asset_name: current.asset_name.clone(),
        registry_version: current.registry_version,
        metadata: serde_json::to_string(&metadata).expect("metadata serialises"),
        raw_metadata: current.metadata.clone(),
        lints: serde_json::to_string(&report.lints).expect("lints serialise"),
        metadata_error: current.metadata_error.clone(),
        deregistered_block: deregistered,
        updates: (mints - 1).max(0),
    };
    Some((state, details))
}

#[cfg(test)]
mod tests;
