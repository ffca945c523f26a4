//! `[api.caches]`: how much memory (and, for feeds, disk) the API's caches may hold and how long
//! the work behind them may take. The defaults keep every cache in memory together well under
//! the 512 MiB a pod gets in `deploy/kubernetes`, whatever clients ask for.

use super::{ConfigError, ConfigResult};
use serde::Deserialize;

/// `[api.caches]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiCachesConfig {
    /// Bytes of GraphQL and subgraph responses (bodies and keys) kept; the least recently used
    /// go first.
    #[serde(default = "defaults::response_cache_bytes")]
    pub response_cache_bytes: usize,
    /// Skill and tag facet counts kept (one per facet and chain filter); the least recently used
    /// go first.
    #[serde(default = "defaults::facet_cache_entries")]
    pub facet_cache_entries: usize,
    /// Bytes of reputation feeds (`/feeds/reputation.jsonl`) kept, in temporary files (in
    /// `TMPDIR`), not in memory; a feed larger than this is served but not kept.
    #[serde(default = "defaults::feed_cache_bytes")]
    pub feed_cache_bytes: usize,
    /// Seconds one feed computation may take before it is stopped and the client told so.
    #[serde(default = "defaults::feed_timeout_secs")]
    pub feed_timeout_secs: u64,
    /// Seconds `/metrics` reuses what it read from the database (and the text it rendered).
    #[serde(default = "defaults::metrics_cache_secs")]
    pub metrics_cache_secs: u64,
}

impl Default for ApiCachesConfig {
    fn default() -> Self {
        Self {
            response_cache_bytes: defaults::response_cache_bytes(),
            facet_cache_entries: defaults::facet_cache_entries(),
            feed_cache_bytes: defaults::feed_cache_bytes(),
            feed_timeout_secs: defaults::feed_timeout_secs(),
            metrics_cache_secs: defaults::metrics_cache_secs(),
        }
    }
}

impl ApiCachesConfig {
    /// Refuses a zero anywhere: a cache of nothing or a timeout of nothing is a mistake.
    pub(super) fn validate(&self) -> ConfigResult<()> {
        for (field, value) in [
            ("response_cache_bytes", self.response_cache_bytes as u64),
            ("facet_cache_entries", self.facet_cache_entries as u64),
            ("feed_cache_bytes", self.feed_cache_bytes as u64),
            ("feed_timeout_secs", self.feed_timeout_secs),
            ("metrics_cache_secs", self.metrics_cache_secs),
        ] {
            if value == 0 {
                return Err(ConfigError::Key {
                    key: format!("api.caches.{field}"),
                    message: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}

mod defaults {
    pub(super) const fn response_cache_bytes() -> usize {
        64 * 1024 * 1024
    }
    pub(super) const fn facet_cache_entries() -> usize {
        256
    }
    pub(super) const fn feed_cache_bytes() -> usize {
        // Disk, not memory: a feed is about 2.5 KB per agent, 250 MB at 100,000 agents.
        1024 * 1024 * 1024
    }
    pub(super) const fn feed_timeout_secs() -> u64 {
        60
    }
    pub(super) const fn metrics_cache_secs() -> u64 {
        5
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Config, ConfigError};
    use std::path::Path;

    fn load(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_toml_and_env(
            "",
            Path::new("test.toml"),
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        )
    }

    #[test]
    fn cache_limits_default_set_from_the_environment_and_refuse_zero() {
        let config = load(&[]).unwrap();
        assert_eq!(config.api.caches.response_cache_bytes, 64 * 1024 * 1024);
        let config = load(&[("AGENTINDEX_API__CACHES__FEED_TIMEOUT_SECS", "7")]).unwrap();
        assert_eq!(config.api.caches.feed_timeout_secs, 7);
        for field in [
            "RESPONSE_CACHE_BYTES",
            "FACET_CACHE_ENTRIES",
            "FEED_CACHE_BYTES",
            "FEED_TIMEOUT_SECS",
            "METRICS_CACHE_SECS",
        ] {
            let var = format!("AGENTINDEX_API__CACHES__{field}");
            match load(&[(&var, "0")]) {
                Err(ConfigError::Key { key, message }) => {
                    assert_eq!(key, format!("api.caches.{}", field.to_lowercase()));
                    assert!(message.contains("at least 1"), "{message}");
                }
                other => panic!("{var}=0 was not refused: {other:?}"),
            }
        }
    }
}
