//! Network presets: `network = "base"` in a `[[chains]]` entry (or `--network base` on the
//! command line) fills in what is known of that chain: its id, the canonical ERC-8004
//! registries, the block they were deployed in (or `start_block = "deployment"`, found by the
//! follower), and USDC. Keys written in the entry win; a `chain_id` that contradicts the preset
//! is an error. `agentindex networks` lists them.

use super::{ConfigError, ConfigResult};

/// What a preset fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// The preset's name.
    pub name: &'static str,
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// A test network (the testnet registries' addresses).
    pub testnet: bool,
    /// The Identity Registry's deployment block, where it was published; otherwise the
    /// follower finds it itself (the first block with code at the registry's address).
    pub start_block: Option<u64>,
    /// Circle's native USDC (6 decimals, EIP-3009), where Circle issues it.
    pub usdc: Option<&'static str>,
}

impl Network {
    /// ERC-8004 Identity Registry.
    pub fn identity(&self) -> &'static str {
        if self.testnet {
            TESTNET_IDENTITY
        } else {
            MAINNET_IDENTITY
        }
    }

    /// ERC-8004 Reputation Registry.
    pub fn reputation(&self) -> &'static str {
        if self.testnet {
            TESTNET_REPUTATION
        } else {
            MAINNET_REPUTATION
        }
    }

    /// ERC-8004 Validation Registry: announced on the testnets only.
    pub fn validation(&self) -> Option<&'static str> {
        self.testnet.then_some(TESTNET_VALIDATION)
    }
}

// The official registries sit at the same addresses on every chain of a kind (CREATE2).
const MAINNET_IDENTITY: &str = "0x8004A169FB4a3325136EB29fA0ceB6D2e539a432";
const MAINNET_REPUTATION: &str = "0x8004BAa17C55a88189AE136b182e5fdA19dE9b63";
const TESTNET_IDENTITY: &str = "0x8004A818BFB912233c491871b3d84c89A494BD9e";
const TESTNET_REPUTATION: &str = "0x8004B663056A597Dffe9eCcC1965A193B7388713";
const TESTNET_VALIDATION: &str = "0x8004Cb1BF31DAf7788923b405b754f57acEB4272";

const fn mainnet(name: &'static str, chain_id: u64, usdc: Option<&'static str>) -> Network {
    Network {
        name,
        chain_id,
        testnet: false,
        start_block: None,
        usdc,
    }
}

const fn testnet(name: &'static str, chain_id: u64, usdc: Option<&'static str>) -> Network {
    Network {
        name,
        chain_id,
        testnet: true,
        start_block: None,
        usdc,
    }
}

const fn starting(network: Network, block: u64) -> Network {
    Network {
        start_block: Some(block),
        ..network
    }
}

/// Every chain the official ERC-8004 deployment lists (erc-8004-contracts, November 2026), with
/// Circle's native USDC where it is issued. A listed chain may still lack the deployment; the
/// follower says so when it finds no code at the Identity Registry's address.
pub const NETWORKS: [Network; 50] = [
    starting(
        mainnet(
            "ethereum",
            1,
            Some("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
        ),
        24_339_924,
    ),
    starting(
        mainnet(
            "base",
            8453,
            Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
        ),
        41_663_799,
    ),
    mainnet(
        "arbitrum",
        42_161,
        Some("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
    ),
    mainnet(
        "optimism",
        10,
        Some("0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85"),
    ),
    mainnet(
        "polygon",
        137,
        Some("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
    ),
    mainnet(
        "avalanche",
        43_114,
        Some("0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E"),
    ),
    mainnet("bsc", 56, None),
    mainnet("monad", 143, None),
    mainnet("scroll", 534_352, None),
    mainnet("gnosis", 100, None),
    mainnet(
        "celo",
        42_220,
        Some("0xcebA9300f2b948710d2653dD7B07f33A8B32118C"),
    ),
    mainnet("taiko", 167_000, None),
    mainnet(
        "linea",
        59_144,
        Some("0x176211869cA2b568f2A7D4EE941E073a821EE1ff"),
    ),
    mainnet("megaeth", 4326, None),
    mainnet("xlayer", 196, None),
    mainnet("abstract", 2741, None),
    mainnet("mantle", 5000, None),
    mainnet("soneium", 1868, None),
    mainnet("goat", 2345, None),
    mainnet("metis", 1088, None),
    mainnet("hedera", 295, None),
    mainnet("skale-base", 1_187_947_933, None),
    mainnet("shape", 360, None),
    mainnet("injective", 1776, None),
    mainnet("0g", 16_661, None),
    starting(
        testnet(
            "sepolia",
            11_155_111,
            Some("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"),
        ),
        9_980_000,
    ),
    starting(
        testnet(
            "base-sepolia",
            84_532,
            Some("0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
        ),
        37_174_254,
    ),
    testnet(
        "arbitrum-sepolia",
        421_614,
        Some("0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d"),
    ),
    testnet(
        "optimism-sepolia",
        11_155_420,
        Some("0x5fd84259d66Cd46123540766Be93DFE6D43130D7"),
    ),
    testnet(
        "polygon-amoy",
        80_002,
        Some("0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582"),
    ),
    testnet(
        "avalanche-fuji",
        43_113,
        Some("0x5425890298aed601595a70AB815c96711a31Bc65"),
    ),
    testnet("bsc-testnet", 97, None),
    testnet("monad-testnet", 10_143, None),
    testnet("scroll-sepolia", 534_351, None),
    testnet("gnosis-chiado", 10_200, None),
    testnet("celo-sepolia", 11_142_220, None),
    testnet("taiko-hoodi", 167_013, None),
    testnet("megaeth-testnet", 6343, None),
    testnet(
        "linea-sepolia",
        59_141,
        Some("0xFEce4462D57bD51A6A552365A011b95f0E16d9B7"),
    ),
    testnet("xlayer-testnet", 1952, None),
    testnet("abstract-sepolia", 11_124, None),
    testnet("mantle-sepolia", 5003, None),
    testnet("soneium-minato", 1946, None),
    testnet("goat-testnet3", 48_816, None),
    testnet("metis-sepolia", 59_902, None),
    testnet("hedera-testnet", 296, None),
    testnet("skale-base-sepolia", 324_705_682, None),
    // Arc's USDC is its native currency, with this ERC-20 interface in 6 decimals.
    testnet(
        "arc-testnet",
        5_042_002,
        Some("0x3600000000000000000000000000000000000000"),
    ),
    testnet("shape-sepolia", 11_011, None),
    testnet("0g-galileo", 16_602, None),
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
            .or_insert(match preset.start_block {
                Some(block) => toml::Value::Integer(block as i64),
                None => text("deployment"),
            });
        if let toml::Value::Table(registries) = chain
            .entry("erc8004")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        {
            registries
                .entry("identity")
                .or_insert_with(|| text(preset.identity()));
            registries
                .entry("reputation")
                .or_insert_with(|| text(preset.reputation()));
            if let Some(validation) = preset.validation() {
                registries
                    .entry("validation")
                    .or_insert_with(|| text(validation));
            }
        }
        if let Some(address) = preset.usdc {
            chain.entry("payment_tokens").or_insert_with(|| {
                let mut usdc = toml::Table::new();
                usdc.insert("address".into(), text(address));
                usdc.insert("symbol".into(), text("USDC"));
                usdc.insert("decimals".into(), toml::Value::Integer(6));
                toml::Value::Array(vec![toml::Value::Table(usdc)])
            });
        }
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
