//! `[liveness]`: whether the indexer probes the endpoints agents declare, and how politely.
//! Probes follow `[documents]`' address rules (`allow_private_addresses`, `allow_http`,
//! `private_hosts_allowed`, `nat64_prefixes`); these keys bound how often and how much.

use super::{ConfigError, ConfigResult};
use serde::Deserialize;

/// `[liveness]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LivenessConfig {
    /// Probe the endpoints agents declare (off unless turned on: probing sends requests to
    /// hosts the operator does not know).
    pub enabled: bool,
    /// Where the operators of probed hosts learn what the prober is and how to ask it to stop;
    /// sent in the User-Agent.
    pub contact_url: String,
    /// Seconds between two probes of a healthy endpoint (give or take a tenth).
    pub healthy_secs: u64,
    /// Seconds before a failing endpoint is probed again, doubled per failure in a row.
    pub retry_secs: u64,
    /// The longest wait, in seconds, between two probes of a failing endpoint.
    pub max_backoff_secs: u64,
    /// Milliseconds at least between two requests to one host.
    pub min_interval_per_host_ms: u64,
    /// Requests per minute over every host together.
    pub requests_per_minute: u32,
    /// Hosts probed at once (one request at a time to each).
    pub concurrency: usize,
    /// Seconds one probe may take, all its requests together.
    pub timeout_secs: u64,
    /// Days raw probe outcomes are kept before they are rolled up per day.
    pub retention_days: u64,
    /// Seconds between two passes that bring the endpoints to probe in line with what agents
    /// declare.
    pub targets_sync_secs: u64,
    /// Probe endpoints on loopback and private addresses (never link-local or metadata ones).
    /// Not taken from `[documents]`: probes send POST and DELETE to URLs strangers chose, so a
    /// private gateway opened to document fetches is not opened to them.
    pub allow_private_addresses: bool,
    /// Credentials sent to one host when an A2A card there claims an authenticated extended
    /// card (`[[liveness.credentials]]`), so the extended card is fetched and its skills kept.
    pub credentials: Vec<HostCredential>,
}

/// A header sent to one origin's A2A extended-card calls (`[[liveness.credentials]]`).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCredential {
    /// The origin it is sent to, scheme, host and port (`https://agent.example`,
    /// `http://127.0.0.1:8080`): only to an extended-card call on this origin, made for a card
    /// served from it.
    pub origin: String,
    /// The header's name (`Authorization`, `X-API-Key`).
    pub header: String,
    /// Its value (`Bearer …`); never logged or shown.
    pub value: String,
}

impl std::fmt::Debug for HostCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCredential")
            .field("origin", &self.origin)
            .field("header", &self.header)
            .field("value", &"(hidden)")
            .finish()
    }
}

impl Default for LivenessConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            contact_url: env!("CARGO_PKG_REPOSITORY").to_string(),
            healthy_secs: 900,
            retry_secs: 300,
            max_backoff_secs: 86_400,
            min_interval_per_host_ms: 2_000,
            requests_per_minute: 600,
            concurrency: 32,
            timeout_secs: 10,
            retention_days: 8,
            targets_sync_secs: 60,
            allow_private_addresses: false,
            credentials: Vec::new(),
        }
    }
}

impl LivenessConfig {
    /// Refuses zero for the limits, a backoff shorter than the first retry, and a contact that
    /// is not an http(s) URL.
    pub(super) fn validate(&self) -> ConfigResult<()> {
        for (key, value) in [
            ("liveness.healthy_secs", self.healthy_secs),
            ("liveness.retry_secs", self.retry_secs),
            ("liveness.max_backoff_secs", self.max_backoff_secs),
            (
                "liveness.requests_per_minute",
                u64::from(self.requests_per_minute),
            ),
            ("liveness.concurrency", self.concurrency as u64),
            ("liveness.timeout_secs", self.timeout_secs),
            ("liveness.retention_days", self.retention_days),
            ("liveness.targets_sync_secs", self.targets_sync_secs),
        ] {
            if value == 0 {
                return Err(key_error(key, "must be at least 1"));
            }
        }
        if self.max_backoff_secs < self.retry_secs {
            return Err(key_error(
                "liveness.max_backoff_secs",
                "must be at least liveness.retry_secs",
            ));
        }
        for (i, credential) in self.credentials.iter().enumerate() {
            let key = |field: &str| format!("liveness.credentials[{i}].{field}");
            let origin = url::Url::parse(&credential.origin).ok();
            let plain = origin.as_ref().is_some_and(|o| {
                matches!(o.scheme(), "http" | "https")
                    && o.host_str().is_some()
                    && o.path() == "/"
                    && o.query().is_none()
                    && o.username().is_empty()
            });
            if !plain {
                return Err(key_error(
                    &key("origin"),
                    "must be an origin: scheme, host and port only (https://agent.example)",
                ));
            }
            if reqwest::header::HeaderName::from_bytes(credential.header.as_bytes()).is_err() {
                return Err(key_error(&key("header"), "is not an HTTP header name"));
            }
            if reqwest::header::HeaderValue::from_str(&credential.value).is_err()
                || credential.value.is_empty()
            {
                return Err(key_error(&key("value"), "is not a usable header value"));
            }
        }
        match url::Url::parse(&self.contact_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(()),
            _ => Err(key_error(
                "liveness.contact_url",
                &format!("{:?} is not an http(s) URL", self.contact_url),
            )),
        }
    }
}

fn key_error(key: &str, message: &str) -> ConfigError {
    ConfigError::Key {
        key: key.into(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigResult};
    use std::path::Path;

    fn load(text: &str) -> ConfigResult<Config> {
        Config::from_toml_and_env(text, Path::new("test.toml"), Vec::new())
    }

    #[test]
    fn liveness_is_off_by_default_and_its_credentials_are_checked_and_never_shown() {
        let config = load("").unwrap();
        assert!(!config.liveness.enabled);
        let with = |credential: &str| load(&format!("[[liveness.credentials]]\n{credential}"));
        let config = with(
            "origin = \"https://agent.example\"\nheader = \"Authorization\"\nvalue = \"Bearer hunter2\"",
        )
        .unwrap();
        assert_eq!(
            config.liveness.credentials[0].origin,
            "https://agent.example"
        );
        assert!(
            !format!("{config:?}").contains("hunter2"),
            "the value is never shown"
        );
        for (credential, key) in [
            (
                "origin = \"https://a.example/path\"\nheader = \"Authorization\"\nvalue = \"x\"",
                "liveness.credentials[0].origin",
            ),
            (
                "origin = \"https://a.example\"\nheader = \"Bad Header\"\nvalue = \"x\"",
                "liveness.credentials[0].header",
            ),
            (
                "origin = \"https://a.example\"\nheader = \"Authorization\"\nvalue = \"\"",
                "liveness.credentials[0].value",
            ),
        ] {
            let error = with(credential).unwrap_err().to_string();
            assert!(error.contains(key), "{error}");
        }
        let error = load("[liveness]\nretry_secs = 0\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("liveness.retry_secs"), "{error}");
    }
}
