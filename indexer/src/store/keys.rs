//! Agent keys: the stable id of an agent across tables and in the API.
//!
//! An ERC-8004 agent is `{chain}:{identity registry}:{token id}`; an agent contract (factory
//! child or enrolled) is `{chain}:{contract}`.

use crate::sources::hex_address;
use alloy::primitives::{Address, U256};

/// Key of an ERC-8004 agent.
pub fn erc8004_agent_key(chain_id: u64, registry: &Address, token_id: &U256) -> String {
    format!("{chain_id}:{}:{token_id}", hex_address(registry))
}

/// Key of an agent contract.
pub fn contract_agent_key(chain_id: u64, agent: &Address) -> String {
    format!("{chain_id}:{}", hex_address(agent))
}
