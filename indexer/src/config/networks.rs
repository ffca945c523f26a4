//! Network presets: `network = "base"` in a `[[chains]]` entry (or `--network base` on the
//! command line) fills in what is known of that chain: its id, the canonical ERC-8004
//! registries, the block they were deployed in, and USDC. Keys written in the entry win; a
//! `chain_id` that contradicts the preset is an error.

use super::{ConfigError, ConfigResult};

/// What a preset fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// The preset's name.
    pub name: &'static str,
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// ERC-8004 Identity Registry.
    pub identity: &'static str,
    /// ERC-8004 Reputation Registry.
    pub reputation: &'static str,
    /// ERC-8004 Validation Registry, where one is announced.
    pub validation: Option<&'static str>,
    /// The Identity Registry's deployment block.
    pub start_block: u64,
    /// USDC (6 decimals, EIP-3009).
    pub usdc: &'static str,
}

const MAINNET_IDENTITY: &str = "0x8004A169FB4a3325136EB29fA0ceB6D2e539a432";
const MAINNET_REPUTATION: &str = "0x8004BAa17C55a88189AE136b182e5fdA19dE9b63";
const TESTNET_IDENTITY: &str = "0x8004A818BFB912233c491871b3d84c89A494BD9e";
const TESTNET_REPUTATION: &str = "0x8004B663056A597Dffe9eCcC1965A193B7388713";
const TESTNET_VALIDATION: &str = "0x8004Cb1BF31DAf7788923b405b754f57acEB4272";

/// Every preset.
pub const NETWORKS: [Network; 4] = [
    Network {
        name: "ethereum",
        chain_id: 1,
        identity: MAINNET_IDENTITY,
        reputation: MAINNET_REPUTATION,
        validation: None,
        start_block: 24_339_924,
        usdc: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    },
    Network {
        name: "base",
        chain_id: 8453,
        identity: MAINNET_IDENTITY,
        reputation: MAINNET_REPUTATION,
        validation: None,
        start_block: 41_663_799,
        usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    },
    Network {
        name: "sepolia",
        chain_id: 11_155_111,
        identity: TESTNET_IDENTITY,
        reputation: TESTNET_REPUTATION,
        validation: Some(TESTNET_VALIDATION),
        start_block: 9_980_000,
        usdc: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
    },
    Network {
        name: "base-sepolia",
        chain_id: 84_532,
        identity: TESTNET_IDENTITY,
        reputation: TESTNET_REPUTATION,
        validation: Some(TESTNET_VALIDATION),
        start_block: 37_174_254,
        usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    },
];

/// The preset called `name`.
pub fn network(name: &str) -> Option<&'static Network> {
    NETWORKS.iter().find(|n| n.name == name)
}

/// Replaces `network = "…"` in every `[[chains]]` entry of `tree` by the preset's keys, keeping
/// the keys the entry sets itself.
pub(super) fn apply_presets(tree: &mut toml::Table) -> ConfigResult<()> {
    let Some(toml::Value::Array(chains)) = tree.get_mut("chains") else {
        return Ok(());
    };
    for (i, chain) in chains.iter_mut().enumerate() {
        let toml::Value::Table(chain) = chain else {
            continue;
        };
        let Some(value) = chain.remove("network") else {
            continue;
        };
        let key = |field: &str| format!("chains[{i}].{field}");
        let name = value.as_str().ok_or_else(|| ConfigError::Key {
            key: key("network"),
            message: format!("expected a network name, found {value}"),
        })?;
        let preset = network(name).ok_or_else(|| ConfigError::Key {
            key: key("network"),
            message: format!(
                "unknown network {name:?}; known: {}",
                NETWORKS.map(|n| n.name).join(", ")
            ),
        })?;
        match chain.get("chain_id") {
            Some(toml::Value::Integer(id)) if *id as u64 != preset.chain_id => {
                return Err(ConfigError::Key {
                    key: key("chain_id"),
                    message: format!(
                        "{id} contradicts network {name:?}, whose chain id is {}",
                        preset.chain_id
                    ),
                });
            }
            _ => {}
        }
        let text = |s: &str| toml::Value::String(s.into());
        chain.entry("name").or_insert_with(|| text(preset.name));
        chain
            .entry("chain_id")
            .or_insert(toml::Value::Integer(preset.chain_id as i64));
        chain
            .entry("start_block")
            .or_insert(toml::Value::Integer(preset.start_block as i64));
        if let toml::Value::Table(registries) = chain
            .entry("erc8004")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        {
            registries
                .entry("identity")
                .or_insert_with(|| text(preset.identity));
            registries
                .entry("reputation")
                .or_insert_with(|| text(preset.reputation));
            if let Some(validation) = preset.validation {
                registries
                    .entry("validation")
                    .or_insert_with(|| text(validation));
            }
        }
        chain.entry("payment_tokens").or_insert_with(|| {
            let mut usdc = toml::Table::new();
            usdc.insert("address".into(), text(preset.usdc));
            usdc.insert("symbol".into(), text("USDC"));
            usdc.insert("decimals".into(), toml::Value::Integer(6));
            toml::Value::Array(vec![toml::Value::Table(usdc)])
        });
    }
    Ok(())
}

/// A `[[chains]]` entry (TOML) following the preset `network` through `rpc`, and a
/// `[database]` for it when `with_database`: what `--network NAME --rpc URL` stands for.
pub fn chain_entry(network: &str, rpc: &[String], with_database: bool) -> String {
    let mut entry = toml::Table::new();
    entry.insert("network".into(), toml::Value::String(network.into()));
    entry.insert(
        "rpc".into(),
        toml::Value::Array(rpc.iter().cloned().map(toml::Value::String).collect()),
    );
    let mut root = toml::Table::new();
    if with_database {
        let mut database = toml::Table::new();
        database.insert(
            "url".into(),
            toml::Value::String(format!("sqlite://data/{network}.db")),
        );
        root.insert("database".into(), toml::Value::Table(database));
    }
    root.insert(
        "chains".into(),
        toml::Value::Array(vec![toml::Value::Table(entry)]),
    );
    toml::to_string(&root).expect("a TOML table serialises")
}
