//! The typed configuration: the TOML file the README's "Configuration" section describes
//! (`deploy/agentindex.example.toml` is a full one), overridden key by key from the
//! environment, with every default in one place and errors that name the offending key.
//!
//! Loading is three steps: parse the file into a TOML tree, apply `AGENTINDEX_*` overrides to
//! the tree ([`env`]), then deserialise the tree into [`Config`] while tracking the path, so a bad
//! value is reported as, say, `chains[0].finality`.

mod api_caches;
mod api_connections;
mod api_reads;
mod api_websocket;
mod cardano;
mod chain;
mod documents;
mod env;
mod liveness;
mod nat64;
pub mod networks;
mod query_limits;
mod reputation;

pub use api_caches::ApiCachesConfig;
pub use api_connections::{ConnectionsConfig, IpNetwork};
pub use api_reads::ReadsConfig;
pub use api_websocket::WebsocketConfig;
pub use cardano::{CardanoConfig, EscrowContract, MasumiConfig, RegistryPolicy};
pub use chain::{
    ChainConfig, DeepReorg, DustError, Erc8004Addresses, FetchStrategy, Finality, PaymentToken,
    StartBlock, WatchedContract, X402Config,
};
pub use documents::{PrivateHost, PrivateHostError};
pub use liveness::{HostCredential, LivenessConfig};
pub use nat64::{NAT64_PREFIX_LENGTHS, Nat64Prefix};
pub use query_limits::QueryLimitsConfig;
pub use reputation::{FeedbackEvidenceConfig, ReputationConfig, TrustConfig, WeightsConfig};

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not TOML.
    #[error("config {path} is not valid TOML: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// An environment override names something that cannot be set.
    #[error("environment variable {var}: {reason}")]
    Env {
        /// The variable.
        var: String,
        /// What was wrong.
        reason: String,
    },
    /// A key has a value of the wrong shape, is unknown, or is missing.
    #[error("config key `{key}`: {message}")]
    Key {
        /// Dotted path of the key, with array indexes (`chains[0].rpc`).
        key: String,
        /// What was wrong.
        message: String,
    },
}

/// Result of loading configuration.
pub type ConfigResult<T> = Result<T, ConfigError>;

/// Everything agentindex can be configured with.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where the SQLite database lives.
    #[serde(default)]
    pub database: DatabaseConfig,
    /// The HTTP API.
    #[serde(default)]
    pub api: ApiConfig,
    /// Fetching documents (Agent Cards, registration files).
    #[serde(default)]
    pub documents: DocumentsConfig,
    /// Reputation parameters.
    #[serde(default)]
    pub reputation: ReputationConfig,
    /// Probing the endpoints agents declare.
    #[serde(default)]
    pub liveness: LivenessConfig,
    /// The chains to follow.
    #[serde(default)]
    pub chains: Vec<ChainConfig>,
    /// The Cardano networks to follow (Masumi's registry), through Blockfrost.
    #[serde(default)]
    pub cardano: Vec<CardanoConfig>,
}

/// `[database]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    /// `sqlite://relative/path.db` or `sqlite:///absolute/path.db`.
    #[serde(default = "defaults::database_url")]
    pub url: String,
}

/// `[api]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
    /// Address the HTTP server binds.
    #[serde(default = "defaults::listen")]
    pub listen: SocketAddr,
    /// Requests each client address may make per minute, sustained (health checks excepted).
    #[serde(default = "defaults::requests_per_minute_per_client")]
    pub requests_per_minute_per_client: u32,
    /// Requests a client may make at once before the per-minute rate applies.
    #[serde(default = "defaults::client_burst")]
    pub client_burst: u32,
    /// Milliseconds of the server's time (each request's, from its handler's start until its
    /// answer is ready) a client is forgiven per second: what it may hold of the cores.
    #[serde(default = "defaults::server_ms_per_second_per_client")]
    pub server_ms_per_second_per_client: u32,
    /// Milliseconds of the server's time a client may owe before its requests are refused.
    #[serde(default = "defaults::server_ms_burst_per_client")]
    pub server_ms_burst_per_client: u32,
    /// Milliseconds of the server's time a client may owe before its requests are served at low
    /// priority: on a thread and database connections that get only the time other requests
    /// leave. Well under the burst, so a client asking costly questions is moved aside long
    /// before it is refused.
    #[serde(default = "defaults::low_priority_after_ms_per_client")]
    pub low_priority_after_ms_per_client: u32,
    /// Complexity (the `/graphql` query's fields, lists counted by their page size) above
    /// which an operation reads the store at low priority, whoever sends it: a client that
    /// paces its costly questions to owe less than `low_priority_after_ms_per_client` still
    /// has their reads moved aside. A filtered page of 100 agents counts about 500.
    #[serde(default = "defaults::low_priority_above_complexity")]
    pub low_priority_above_complexity: u32,
    /// How many cores low-priority work (those clients' requests, reputation feeds, replays,
    /// background counts) may use together, on average: past it, its threads rest. Priority
    /// decides who runs first, not what runs beside, and an answer computed beside such work
    /// on the next core is still slower.
    #[serde(default = "defaults::low_priority_cores")]
    pub low_priority_cores: f64,
    /// Clients (addresses or CIDR networks) the rate limit never applies to: the operator's
    /// own services that call on behalf of many users (a server-side renderer, an SDK backend).
    /// Every other limit still holds for them. Empty by default.
    #[serde(default, deserialize_with = "api_connections::networks")]
    pub unlimited_clients: Vec<IpNetwork>,
    /// Origins browsers may call the API from; `["*"]` (the default) allows any.
    #[serde(default = "defaults::cors_origins")]
    pub cors_origins: Vec<String>,
    /// `[api.caches]`: the caches' memory and the feed's time.
    #[serde(default)]
    pub caches: ApiCachesConfig,
    /// `[api.connections]`: timeouts, connection caps and trusted proxies.
    #[serde(default)]
    pub connections: ConnectionsConfig,
    /// `[api.websocket]`: caps on subscriptions over websockets.
    #[serde(default)]
    pub websocket: WebsocketConfig,
    /// How big a GraphQL document may be (`[api.query_limits]`).
    #[serde(default)]
    pub query_limits: QueryLimitsConfig,
    /// `[api.reads]`: the database work one request may cause.
    #[serde(default)]
    pub reads: ReadsConfig,
}

/// `[documents]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentsConfig {
    /// IPFS gateways tried in order, each ending in `/ipfs/`.
    #[serde(default = "defaults::ipfs_gateways")]
    pub ipfs_gateways: Vec<String>,
    /// Opens loopback and private ranges to document fetches (never link-local or metadata).
    #[serde(default)]
    pub allow_private_addresses: bool,
    /// Fetches documents over plain `http://` too (flagged `document.transport.insecure`, never
    /// counted as verified); `false` refuses them and fetches `https://` only.
    #[serde(default = "defaults::allow_http")]
    pub allow_http: bool,
    /// Public keys (JWKs, with `kid`) that Agent Card signatures are trusted with.
    #[serde(default)]
    pub trusted_keys: Vec<jsonwebtoken::jwk::Jwk>,
    /// Requests per second to one document host.
    #[serde(default = "defaults::requests_per_host_per_second")]
    pub requests_per_host_per_second: u32,
    /// Document fetches in flight at once, over all hosts.
    #[serde(default = "defaults::fetch_concurrency")]
    pub concurrency: usize,
    /// Seconds after which a fetched document is fetched again (conditionally).
    #[serde(default = "defaults::refresh_secs")]
    pub refresh_secs: u64,
    /// Seconds before a failed fetch is tried again, doubled per failure in a row up to
    /// `refresh_secs`.
    #[serde(default = "defaults::retry_secs")]
    pub retry_secs: u64,
    /// Hosts (`host` or `host:port`, e.g. a local IPFS gateway `127.0.0.1:8080`) fetched from
    /// even when they are, or resolve to, loopback or private addresses, without opening those
    /// ranges to anything else. An entry without a port opens only the scheme's default port
    /// (80 for http, 443 for https); any other port must be written. Link-local and metadata
    /// addresses stay refused.
    #[serde(default)]
    pub private_hosts_allowed: Vec<String>,
    /// Seconds one document may take in all: every URL tried for it, retries, redirects, the
    /// body and a card's `jku` key sets included. A server that drips its answer is cut off
    /// here.
    #[serde(default = "defaults::fetch_deadline_secs")]
    pub fetch_deadline_secs: u64,
    /// The NAT64 prefixes of the operator's own network, in CIDR form (`2001:db8:64::/96`; any
    /// RFC 6052 length: /32, /40, /48, /56, /64, /96). An address under one is judged as the
    /// IPv4 address it carries, so a NAT64 path to a private or metadata address is refused like
    /// that address. The well-known `64:ff9b::/96` and `64:ff9b:1::/48` are always decoded.
    #[serde(default)]
    pub nat64_prefixes: Vec<Nat64Prefix>,
}

impl Config {
    /// The numbers of every chain followed: the EVM chains', then the Cardano networks'.
    pub fn chain_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.chains
            .iter()
            .map(|chain| chain.chain_id)
            .chain(self.cardano.iter().map(CardanoConfig::chain_id))
    }
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            url: defaults::database_url(),
        }
    }
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            listen: defaults::listen(),
            requests_per_minute_per_client: defaults::requests_per_minute_per_client(),
            client_burst: defaults::client_burst(),
            server_ms_per_second_per_client: defaults::server_ms_per_second_per_client(),
            server_ms_burst_per_client: defaults::server_ms_burst_per_client(),
            low_priority_after_ms_per_client: defaults::low_priority_after_ms_per_client(),
            low_priority_above_complexity: defaults::low_priority_above_complexity(),
            low_priority_cores: defaults::low_priority_cores(),
            unlimited_clients: Vec::new(),
            cors_origins: defaults::cors_origins(),
            caches: ApiCachesConfig::default(),
            connections: ConnectionsConfig::default(),
            websocket: WebsocketConfig::default(),
            query_limits: QueryLimitsConfig::default(),
            reads: ReadsConfig::default(),
        }
    }
}

impl Default for DocumentsConfig {
    fn default() -> Self {
        Self {
            ipfs_gateways: defaults::ipfs_gateways(),
            allow_private_addresses: false,
            allow_http: defaults::allow_http(),
            trusted_keys: Vec::new(),
            requests_per_host_per_second: defaults::requests_per_host_per_second(),
            concurrency: defaults::fetch_concurrency(),
            refresh_secs: defaults::refresh_secs(),
            retry_secs: defaults::retry_secs(),
            private_hosts_allowed: Vec::new(),
            fetch_deadline_secs: defaults::fetch_deadline_secs(),
            nat64_prefixes: Vec::new(),
        }
    }
}

/// Every default value, in one place.
pub(crate) mod defaults;

impl Config {
    /// Reads `path`, applies the process environment's `AGENTINDEX_*` overrides and validates.
    pub fn load(path: &Path) -> ConfigResult<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml_and_env(&text, path, std::env::vars())
    }

    /// Parses `text` (named `origin` in errors) with the given environment applied.
    pub fn from_toml_and_env(
        text: &str,
        origin: &Path,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> ConfigResult<Self> {
        let mut tree: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            path: origin.to_owned(),
            message: e.to_string(),
        })?;
        env::apply_overrides(&mut tree, vars)?;
        networks::apply_presets(&mut tree)?;
        let config: Config =
            serde_path_to_error::deserialize(toml::Value::Table(tree)).map_err(|e| {
                ConfigError::Key {
                    key: e.path().to_string(),
                    message: e.inner().to_string(),
                }
            })?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> ConfigResult<()> {
        self.reputation.validate()?;
        self.liveness.validate()?;
        self.api.caches.validate()?;
        self.api.connections.validate()?;
        self.api.websocket.validate()?;
        self.api.query_limits.validate()?;
        self.api.reads.validate()?;
        // Clients are told apart by their /64 (see the API's `client`): an entry narrower than
        // that would match no client, or every client of its /64.
        if let Some((n, network)) = (self.api.unlimited_clients.iter().enumerate())
            .find(|(_, network)| network.is_ipv6_narrower_than(64))
        {
            return Err(ConfigError::Key {
                key: format!("api.unlimited_clients[{n}]"),
                message: format!(
                    "{network}: IPv6 clients are told apart by their /64, so an entry must be a \
                     /64 or wider"
                ),
            });
        }
        for (key, value) in [
            (
                "api.requests_per_minute_per_client",
                self.api.requests_per_minute_per_client,
            ),
            ("api.client_burst", self.api.client_burst),
            (
                "api.server_ms_per_second_per_client",
                self.api.server_ms_per_second_per_client,
            ),
            (
                "api.server_ms_burst_per_client",
                self.api.server_ms_burst_per_client,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::Key {
                    key: key.into(),
                    message: "must be at least 1".into(),
                });
            }
        }
        let cores = self.api.low_priority_cores;
        if !(cores.is_finite() && (0.01..=4096.0).contains(&cores)) {
            return Err(ConfigError::Key {
                key: "api.low_priority_cores".into(),
                message: format!("{cores}: must be a number of cores from 0.01 to 4096"),
            });
        }
        for (i, origin) in self.api.cors_origins.iter().enumerate() {
            let valid = origin == "*"
                || url::Url::parse(origin).is_ok_and(|u| {
                    matches!(u.scheme(), "https" | "http")
                        && u.path() == "/"
                        && !origin.ends_with('/')
                });
            if !valid {
                return Err(ConfigError::Key {
                    key: format!("api.cors_origins[{i}]"),
                    message: format!(
                        "{origin:?} is not \"*\" or an origin like https://example.org"
                    ),
                });
            }
        }
        for (i, gateway) in self.documents.ipfs_gateways.iter().enumerate() {
            let parsed = url::Url::parse(gateway);
            if !parsed.as_ref().is_ok_and(|u| {
                matches!(u.scheme(), "https" | "http") && u.path().ends_with("/ipfs/")
            }) {
                return Err(ConfigError::Key {
                    key: format!("documents.ipfs_gateways[{i}]"),
                    message: format!("{gateway:?} is not an http(s) URL ending in /ipfs/"),
                });
            }
        }
        self.documents.validate_fetching()?;
        let mut seen = std::collections::HashSet::new();
        for (i, chain) in self.chains.iter().enumerate() {
            chain.validate(&format!("chains[{i}]"))?;
            if !seen.insert(chain.chain_id) {
                return Err(ConfigError::Key {
                    key: format!("chains[{i}].chain_id"),
                    message: format!("chain id {} is configured twice", chain.chain_id),
                });
            }
        }
        for (i, network) in self.cardano.iter().enumerate() {
            network.validate(&format!("cardano[{i}]"))?;
            if !seen.insert(network.chain_id()) {
                return Err(ConfigError::Key {
                    key: format!("cardano[{i}].network"),
                    message: format!(
                        "{} is configured twice, or an EVM chain uses its number {}",
                        network.network.name(),
                        network.chain_id()
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
