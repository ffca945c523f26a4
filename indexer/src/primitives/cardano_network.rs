//! The Cardano networks agentindex knows: how each is numbered beside the EVM chains, its CAIP-2
//! id, its public Blockfrost endpoint, and where Masumi's registry lives on it.
//!
//! Cardano has no EIP-155 chain id, yet every agent, cursor and score is keyed by a number. A
//! Cardano network is numbered 2^30 plus its network magic (mainnet 764824073, preprod 1,
//! preview 2): a rule rather than a table, inside GraphQL's 32-bit `Int`, and far from the small
//! ids EVM chains use. Its CAIP-2 id is CIP-34's `cip34:{network id}-{network magic}`.

use alloy::primitives::{Address, keccak256};
use serde::Deserialize;

/// What Cardano network numbers start from (see the module's header).
pub const CARDANO_CHAIN_ID_BASE: u64 = 1 << 30;

/// A Cardano network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CardanoNetwork {
    /// The main network.
    #[serde(alias = "cardano-mainnet")]
    Mainnet,
    /// The pre-production test network.
    #[serde(alias = "cardano-preprod")]
    Preprod,
    /// The preview test network.
    #[serde(alias = "cardano-preview")]
    Preview,
}

/// The Masumi registry minting policies of one network, V1 and V2.
#[derive(Debug, Clone, Copy)]
pub struct MasumiPolicies {
    /// Registry V1 (the one Masumi's registry service reads).
    pub v1: Option<&'static str>,
    /// Registry V2 (permissionless; updates burn one version and mint the next).
    pub v2: Option<&'static str>,
}

/// The Masumi payment contract's script addresses on one network, V1 and V2.
#[derive(Debug, Clone, Copy)]
pub struct MasumiEscrows {
    /// Payment contract V1.
    pub v1: Option<&'static str>,
    /// Payment contract V2.
    pub v2: Option<&'static str>,
}

/// Registry V2 shares one policy across networks.
const MASUMI_V2: &str = "67ab0c92c4ac1610895a1c965ee50aba41a8f1513b15240723b3bd0b";

impl CardanoNetwork {
    /// Every network, in the order `agentindex networks` lists them.
    pub const ALL: [CardanoNetwork; 3] = [Self::Mainnet, Self::Preprod, Self::Preview];

    /// The network magic.
    pub fn magic(self) -> u64 {
        match self {
            Self::Mainnet => 764_824_073,
            Self::Preprod => 1,
            Self::Preview => 2,
        }
    }

    /// The network id in addresses: 1 on mainnet, 0 on the test networks.
    pub fn network_id(self) -> u8 {
        match self {
            Self::Mainnet => 1,
            Self::Preprod | Self::Preview => 0,
        }
    }

    /// agentindex's number for the network (see the module's header).
    pub fn chain_id(self) -> u64 {
        CARDANO_CHAIN_ID_BASE + self.magic()
    }

    /// The network a chain id names, when it names one.
    pub fn of_chain_id(chain_id: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|n| n.chain_id() == chain_id)
    }

    /// Its CAIP-2 id (CIP-34).
    pub fn caip2(self) -> String {
        format!("cip34:{}-{}", self.network_id(), self.magic())
    }

    /// The preset's name (`cardano-mainnet`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Mainnet => "cardano-mainnet",
            Self::Preprod => "cardano-preprod",
            Self::Preview => "cardano-preview",
        }
    }

    /// How the config spells it.
    pub fn config_value(self) -> &'static str {
        match self {
            Self::Mainnet => "mainnet",
            Self::Preprod => "preprod",
            Self::Preview => "preview",
        }
    }

    /// Blockfrost's hosted endpoint for it.
    pub fn blockfrost_url(self) -> &'static str {
        match self {
            Self::Mainnet => "https://cardano-mainnet.blockfrost.io/api/v0",
            Self::Preprod => "https://cardano-preprod.blockfrost.io/api/v0",
            Self::Preview => "https://cardano-preview.blockfrost.io/api/v0",
        }
    }

    /// Where Masumi's registry mints on it.
    pub fn masumi_policies(self) -> MasumiPolicies {
        match self {
            Self::Mainnet => MasumiPolicies {
                v1: Some("ad6424e3ce9e47bbd8364984bd731b41de591f1d11f6d7d43d0da9b9"),
                v2: Some(MASUMI_V2),
            },
            Self::Preprod => MasumiPolicies {
                v1: Some("7e8bdaf2b2b919a3a4b94002cafb50086c0c845fe535d07a77ab7f77"),
                v2: Some(MASUMI_V2),
            },
            Self::Preview => MasumiPolicies { v1: None, v2: None },
        }
    }

    /// Where Masumi's payment contract holds escrows on it.
    pub fn masumi_escrows(self) -> MasumiEscrows {
        match self {
            Self::Mainnet => MasumiEscrows {
                v1: Some("addr1wx7j4kmg2cs7yf92uat3ed4a3u97kr7axxr4avaz0lhwdsq87ujx7"),
                v2: Some("addr1wxs4e6wc95hkwezlccjw9mdvq0r0rsgx6zk34avptga3ftgge2j6d"),
            },
            Self::Preprod => MasumiEscrows {
                v1: Some("addr_test1wz7j4kmg2cs7yf92uat3ed4a3u97kr7axxr4avaz0lhwdsqukgwfm"),
                v2: Some("addr_test1wzs4e6wc95hkwezlccjw9mdvq0r0rsgx6zk34avptga3ftgn37w4g"),
            },
            Self::Preview => MasumiEscrows { v1: None, v2: None },
        }
    }
}

/// The stablecoins Masumi is paid in on each network (policy id and asset name, hex), all of 6
/// decimals: USDM (tUSDM on preprod) and USDCx.
pub fn masumi_stablecoins(network: CardanoNetwork) -> &'static [&'static str] {
    match network {
        CardanoNetwork::Mainnet => &[
            "c48cbb3d5e57ed56e276bc45f99ab39abe94e6cd7ac39fb402da47ad0014df105553444d",
            "1f3aec8bfe7ea4fe14c5f121e2a92e301afe414147860d557cac7e345553444378",
        ],
        CardanoNetwork::Preprod => {
            &["16a55b2a349361ff88c03788f93e1e966e5d689605d044fef722ddde0014df10745553444d"]
        }
        CardanoNetwork::Preview => &[],
    }
}

/// The 20-byte party a Cardano payment credential (key or script hash) stands as in the
/// reputation method, which counts payers and ranks trust over 20-byte addresses: the last 20
/// bytes of keccak-256 of `cardano:` and the credential, as an Ethereum address is of a public
/// key. One credential is always one party, and no EVM account can be one by accident.
pub fn cardano_party(credential: &[u8]) -> Address {
    let hash = keccak256([b"cardano:".as_slice(), credential].concat());
    Address::from_slice(&hash[12..])
}

/// The payment credential (28-byte key or script hash) of a Shelley address written in bech32
/// (`addr1…`, `addr_test1…`): base, pointer and enterprise addresses carry it right after their
/// header byte. `None` for anything else (a reward or Byron address, bad checksum, wrong length).
pub fn cardano_payment_credential(address: &str) -> Option<Vec<u8>> {
    let (hrp, bytes) = bech32::decode(address).ok()?;
    if !hrp.as_str().starts_with("addr") {
        return None;
    }
    let kind = bytes.first()? >> 4;
    // Header kinds 0-3 are base addresses, 4-5 pointer, 6-7 enterprise.
    (kind <= 7 && bytes.len() >= 29).then(|| bytes[1..29].to_vec())
}

/// The 20-byte token a Cardano asset stands as in the reputation method: ada (`lovelace`) is the
/// zero address, as a chain's own coin is; any other unit the party of its bytes.
pub fn cardano_token(unit: &str) -> Address {
    if unit == "lovelace" {
        return Address::ZERO;
    }
    let bytes = alloy::hex::decode(unit).unwrap_or_else(|_| unit.as_bytes().to_vec());
    cardano_party(&bytes)
}

/// The CAIP-2 id of any chain agentindex numbers: `eip155:{id}` for EVM chains.
pub fn caip2_of_chain(chain_id: u64) -> String {
    match CardanoNetwork::of_chain_id(chain_id) {
        Some(network) => network.caip2(),
        None => format!("eip155:{chain_id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_ids_fit_graphql_ints_and_round_trip() {
        for network in CardanoNetwork::ALL {
            let id = network.chain_id();
            assert!(i32::try_from(id).is_ok(), "{network:?} {id}");
            assert_eq!(CardanoNetwork::of_chain_id(id), Some(network));
        }
        assert_eq!(CardanoNetwork::Mainnet.chain_id(), 1_838_565_897);
        assert_eq!(CardanoNetwork::Preprod.chain_id(), 1_073_741_825);
        assert_eq!(CardanoNetwork::of_chain_id(1), None);
    }

    #[test]
    fn payment_credentials_are_read_from_shelley_addresses_only() {
        // CIP-19's test vectors: a base and an enterprise address of one payment key.
        let key = "9493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e";
        let credential =
            |address: &str| cardano_payment_credential(address).map(alloy::hex::encode);
        let base = "addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x";
        assert_eq!(credential(base).as_deref(), Some(key));
        let enterprise = "addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8";
        assert_eq!(credential(enterprise).as_deref(), Some(key));
        // A reward address has no payment part; a changed character fails the checksum.
        assert_eq!(
            credential("stake1uyehkck0lajq8gr28t9uxnuvgcqrc6070x3k9r8048z8y5gh6ffgw"),
            None
        );
        assert_eq!(credential(&base.replace("qx2f", "qx2g")), None);
        assert_eq!(credential("not an address"), None);
    }

    #[test]
    fn caip2_ids_follow_cip34() {
        assert_eq!(CardanoNetwork::Mainnet.caip2(), "cip34:1-764824073");
        assert_eq!(CardanoNetwork::Preprod.caip2(), "cip34:0-1");
        assert_eq!(caip2_of_chain(8453), "eip155:8453");
        assert_eq!(
            caip2_of_chain(CardanoNetwork::Preprod.chain_id()),
            "cip34:0-1"
        );
    }
}
