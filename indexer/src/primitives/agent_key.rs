//! An agent's key: its stable id across tables, the API and the feed.
//!
//! An ERC-8004 agent is `{chain}:{identity registry}:{token id}`; an agent contract (a factory's
//! child or a registry's enrolment) is `{chain}:{contract}`. Addresses are lower-case 0x hex and
//! token ids decimal, so one agent has exactly one key. This is the only place that writes or
//! reads that form.

use alloy::primitives::{Address, U256};
use std::fmt;
use std::str::FromStr;

/// Which agent a key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentKey {
    /// An ERC-8004 identity: a token of an Identity Registry.
    Erc8004 {
        /// EIP-155 chain id.
        chain_id: u64,
        /// The Identity Registry.
        registry: Address,
        /// The token id.
        token_id: U256,
    },
    /// An agent contract.
    Contract {
        /// EIP-155 chain id.
        chain_id: u64,
        /// The contract.
        address: Address,
    },
}

impl AgentKey {
    /// The key of an ERC-8004 agent.
    pub fn erc8004(chain_id: u64, registry: Address, token_id: U256) -> Self {
        Self::Erc8004 {
            chain_id,
            registry,
            token_id,
        }
    }

    /// The key of an agent contract.
    pub fn contract(chain_id: u64, address: Address) -> Self {
        Self::Contract { chain_id, address }
    }

    /// The chain the agent lives on.
    pub fn chain_id(&self) -> u64 {
        match self {
            Self::Erc8004 { chain_id, .. } | Self::Contract { chain_id, .. } => *chain_id,
        }
    }
}

impl fmt::Display for AgentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Erc8004 {
                chain_id,
                registry,
                token_id,
            } => write!(f, "{chain_id}:{registry:#x}:{token_id}"),
            Self::Contract { chain_id, address } => write!(f, "{chain_id}:{address:#x}"),
        }
    }
}

/// Why a string is not an agent key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{key}` is not an agent key ({reason}); expected `chain:contract` or `chain:registry:tokenId`"
)]
pub struct AgentKeyError {
    /// The string that was given.
    pub key: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl FromStr for AgentKey {
    type Err = AgentKeyError;

    fn from_str(key: &str) -> Result<Self, Self::Err> {
        let bad = |reason| AgentKeyError {
            key: key.to_string(),
            reason,
        };
        let mut parts = key.split(':');
        let chain_id = parts
            .next()
            .and_then(|c| c.parse::<u64>().ok())
            .ok_or_else(|| bad("the chain id is not a number"))?;
        let address = |text: Option<&str>| {
            text.filter(|a| a.len() == 42 && a.starts_with("0x"))
                .and_then(|a| a.parse::<Address>().ok())
                .ok_or_else(|| bad("the address is not 0x and 40 hex digits"))
        };
        let first = address(parts.next())?;
        let key = match parts.next() {
            None => Self::contract(chain_id, first),
            Some(token) => {
                let token_id = U256::from_str_radix(token, 10)
                    .ok()
                    .filter(|_| !token.is_empty())
                    .ok_or_else(|| bad("the token id is not a decimal number"))?;
                Self::erc8004(chain_id, first, token_id)
            }
        };
        if parts.next().is_some() {
            return Err(bad("it has too many parts"));
        }
        Ok(key)
    }
}

impl TryFrom<String> for AgentKey {
    type Error = AgentKeyError;

    fn try_from(key: String) -> Result<Self, Self::Error> {
        key.parse()
    }
}

impl From<AgentKey> for String {
    fn from(key: AgentKey) -> Self {
        key.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::address;

    const REGISTRY: Address = address!("8004A169FB4a3325136EB29fA0ceB6D2e539a432");

    #[test]
    fn keys_print_in_their_one_form_and_parse_back() {
        let erc8004 = AgentKey::erc8004(8453, REGISTRY, U256::from(42));
        assert_eq!(
            erc8004.to_string(),
            "8453:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432:42"
        );
        let contract = AgentKey::contract(31337, REGISTRY);
        assert_eq!(
            contract.to_string(),
            "31337:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432"
        );
        for key in [erc8004, contract] {
            assert_eq!(key.to_string().parse::<AgentKey>(), Ok(key));
        }
        assert_eq!(erc8004.chain_id(), 8453);
    }

    #[test]
    fn mixed_case_addresses_parse_to_the_same_key() {
        let key: AgentKey = "1:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432:7"
            .parse()
            .expect("a key");
        assert_eq!(key, AgentKey::erc8004(1, REGISTRY, U256::from(7)));
    }

    #[test]
    fn malformed_keys_say_what_is_wrong() {
        for (key, reason) in [
            ("", "the chain id is not a number"),
            (
                "x:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432",
                "the chain id is not a number",
            ),
            ("1", "the address is not 0x and 40 hex digits"),
            ("1:0x1234", "the address is not 0x and 40 hex digits"),
            (
                "1:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432:",
                "the token id is not a decimal number",
            ),
            (
                "1:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432:0x2a",
                "the token id is not a decimal number",
            ),
            (
                "1:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432:1:2",
                "it has too many parts",
            ),
        ] {
            let error = key.parse::<AgentKey>().expect_err(key);
            assert_eq!(error.reason, reason, "{key}");
            assert!(error.to_string().contains(key), "{error}");
        }
    }
}
