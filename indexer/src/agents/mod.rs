//! Agents' current state as pure folds of their facts: what an `agents` row holds for an
//! ERC-8004 token ([`erc8004`]) or an agent contract ([`contracts`]). The store reads the facts,
//! calls these and writes the rows (`store/agents/`); a reorg recomputes the same way from what
//! remains, so the result is what a fresh index of the chain would hold.

pub mod contracts;
pub mod erc8004;
pub mod masumi;
pub mod masumi_payment;

#[cfg(test)]
mod tests;

use alloy::primitives::Address;

/// (block, log index) of a fact, for "latest wins".
pub type Position = (i64, i64);

/// One agent's current state, as the `agents` table holds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentState {
    /// Its key (`primitives::AgentKey`, printed).
    pub key: String,
    /// `erc8004`, or how a contract was found (`factory`, `registry`).
    pub source: String,
    /// The agent contract.
    pub address: Option<String>,
    /// The identity registry, or the factory or registry that found the contract.
    pub registry: Option<String>,
    /// The ERC-8004 token id.
    pub token_id: Option<String>,
    /// Current owner (lower-case hex).
    pub owner: String,
    /// Addresses approved to act for it, sorted.
    pub operators: Vec<String>,
    /// Registration file or metadata URI.
    pub uri: Option<String>,
    /// ERC-8004 agentWallet.
    pub agent_wallet: Option<String>,
    /// Where it is paid.
    pub payment_address: Option<String>,
    /// An agent contract's card JSON.
    pub card: Option<String>,
    /// Card URI from that JSON.
    pub card_uri: Option<String>,
    /// Anchored card hash from that JSON (none when zero).
    pub card_hash: Option<String>,
    /// Name from that JSON.
    pub name: Option<String>,
    /// Description from that JSON.
    pub description: Option<String>,
    /// Whether it says it is active.
    pub active: bool,
    /// Heartbeat interval in seconds.
    pub heartbeat_interval: Option<i64>,
    /// Last heartbeat (unix seconds).
    pub last_heartbeat: Option<i64>,
    /// JSON object of its status in each registry.
    pub registry_status: Option<String>,
    /// Block it was registered or found in.
    pub registered_block: i64,
    /// Time of that block.
    pub registered_at: i64,
    /// Newest block of any of its own facts.
    pub last_event_block: i64,
}

/// The payment address an ERC-8004 metadata entry binds its agent to: under the key
/// `agentWallet`, `Some` of the wallet its value holds (`None` when it holds none, which
/// withdraws the binding); any other key binds nothing.
pub fn metadata_payment_address(key: &str, value: &[u8]) -> Option<Option<Address>> {
    (key == "agentWallet").then(|| wallet_from_metadata(value))
}

/// The agentWallet in a metadata value: 20 raw bytes or a 32-byte ABI-encoded address.
pub fn wallet_from_metadata(value: &[u8]) -> Option<Address> {
    match value.len() {
        20 => Some(Address::from_slice(value)),
        32 if value[..12].iter().all(|b| *b == 0) => Some(Address::from_slice(&value[12..])),
        _ => None,
    }
}
