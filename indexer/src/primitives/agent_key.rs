//! An agent's key: its stable id across tables, the API and the feed.
//!
//! An ERC-8004 agent is `{chain}:{identity registry}:{token id}`; an agent contract (a factory's
//! child or a registry's enrolment) is `{chain}:{contract}`; a Masumi agent on Cardano is
//! `{chain}:{policy id}{asset name stem}` in bare hex, as Cardano writes an asset's unit (the
//! stem is the whole asset name under registry V1, and the name without its 3-byte version
//! under V2, whose updates mint the next version). Addresses are lower-case 0x hex, token ids
//! decimal and Cardano's bytes lower-case hex, so one agent has exactly one key. This is the
//! only place that writes or reads that form.

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
    /// A Masumi registry entry: an NFT under a registry policy on Cardano.
    Masumi {
        /// The Cardano network's number (`cardano::network`).
        chain_id: u64,
        /// The registry's minting policy id.
        policy: [u8; POLICY_BYTES],
        /// What stays of the asset name across updates.
        stem: AssetStem,
    },
}

/// A minting policy id's length in bytes.
pub const POLICY_BYTES: usize = 28;

/// The part of an asset name that names an agent: up to 32 bytes (Cardano's limit on a name).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AssetStem {
    bytes: [u8; 32],
    len: u8,
}

impl AssetStem {
    /// The stem of `bytes`, or none past 32 bytes.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        let mut stem = Self {
            bytes: [0; 32],
            len: u8::try_from(bytes.len()).ok().filter(|l| *l <= 32)?,
        };
        stem.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(stem)
    }

    /// Its bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for AssetStem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AssetStem({})", alloy::hex::encode(self.as_bytes()))
    }
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

    /// The key of a Masumi registry entry.
    pub fn masumi(chain_id: u64, policy: [u8; POLICY_BYTES], stem: AssetStem) -> Self {
        Self::Masumi {
            chain_id,
            policy,
            stem,
        }
    }

    /// The chain the agent lives on.
    pub fn chain_id(&self) -> u64 {
        match self {
            Self::Erc8004 { chain_id, .. }
            | Self::Contract { chain_id, .. }
            | Self::Masumi { chain_id, .. } => *chain_id,
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
            Self::Masumi {
                chain_id,
                policy,
                stem,
            } => write!(
                f,
                "{chain_id}:{}{}",
                alloy::hex::encode(policy),
                alloy::hex::encode(stem.as_bytes())
            ),
        }
    }
}

/// Why a string is not an agent key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{key}` is not an agent key ({reason}); expected `chain:contract`, `chain:registry:tokenId` or `chain:policyAssetName`"
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
        if let Some(unit) = parts.clone().next().filter(|p| !p.starts_with("0x")) {
            return masumi(chain_id, unit, parts.count() > 1).map_err(bad);
        }
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

/// A Masumi key's `{policy}{stem}` part; `more` when parts follow it.
fn masumi(chain_id: u64, unit: &str, more: bool) -> Result<AgentKey, &'static str> {
    if more {
        return Err("it has too many parts");
    }
    let lower = unit
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let bytes = alloy::hex::decode(unit)
        .ok()
        .filter(|_| lower)
        .filter(|b| b.len() > POLICY_BYTES)
        .ok_or("the address is not 0x and 40 hex digits, nor a policy id and asset name in lower-case hex")?;
    let (policy, name) = bytes.split_at(POLICY_BYTES);
    let stem = AssetStem::new(name).ok_or("the asset name is longer than 32 bytes")?;
    Ok(AgentKey::masumi(
        chain_id,
        policy.try_into().expect("split at the policy's length"),
        stem,
    ))
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
    fn masumi_keys_are_the_policy_and_stem_in_hex() {
        let policy: [u8; POLICY_BYTES] =
            alloy::hex::decode("7e8bdaf2b2b919a3a4b94002cafb50086c0c845fe535d07a77ab7f77")
                .unwrap()
                .try_into()
                .unwrap();
        let stem = AssetStem::new(&[0xab; 29]).unwrap();
        let key = AgentKey::masumi(1_073_741_825, policy, stem);
        let text = key.to_string();
        assert_eq!(
            text,
            format!(
                "1073741825:7e8bdaf2b2b919a3a4b94002cafb50086c0c845fe535d07a77ab7f77{}",
                "ab".repeat(29)
            )
        );
        assert_eq!(text.parse::<AgentKey>(), Ok(key));
        assert_eq!(key.chain_id(), 1_073_741_825);
        assert!(AssetStem::new(&[0; 33]).is_none());
        let too_long = format!("1:{}{}", "7e".repeat(28), "00".repeat(33));
        assert_eq!(
            too_long.parse::<AgentKey>().unwrap_err().reason,
            "the asset name is longer than 32 bytes"
        );
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
                "1:7e8bdaf2",
                "the address is not 0x and 40 hex digits, nor a policy id and asset name in lower-case hex",
            ),
            (
                "1:7E8BDAF2B2B919A3A4B94002CAFB50086C0C845FE535D07A77AB7F77AA",
                "the address is not 0x and 40 hex digits, nor a policy id and asset name in lower-case hex",
            ),
            (
                "1:7e8bdaf2b2b919a3a4b94002cafb50086c0c845fe535d07a77ab7f77aa:1",
                "it has too many parts",
            ),
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
