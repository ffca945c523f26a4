//! Checks of the `[documents]` keys that bound fetching: the total deadline per document and the
//! hosts allowed on private addresses (`host` or `host:port`), refused at load with the key
//! named.
//!
//! An entry without a port opens only the scheme's default port (80 for http, 443 for https),
//! never the host's other ports: a listed gateway host often runs other services (an admin
//! API, a database) that a card's URL must not reach. Another port is opened by writing it.

use super::{ConfigError, ConfigResult, DocumentsConfig};

/// A host (and port, when one is given) that documents may be fetched from on a private
/// address; see [`DocumentsConfig::private_hosts_allowed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateHost {
    /// The host as a URL spells it: a lower-case name, an IPv4 address, or `[IPv6]`.
    pub host: String,
    /// The port; `None` allows only the scheme's default port (80 for http, 443 for https).
    pub port: Option<u16>,
}

impl PrivateHost {
    /// Reads `entry` (`gateway.lan`, `127.0.0.1:8080`, `[::1]:5001`), or says what is wrong.
    pub fn parse(entry: &str) -> Result<Self, PrivateHostError> {
        let entry = entry.trim();
        if entry.is_empty() || entry.contains(['/', '?', '#', '@']) {
            return Err(PrivateHostError::NotAHost {
                entry: entry.to_string(),
            });
        }
        let url = url::Url::parse(&format!("http://{entry}/")).map_err(|source| {
            PrivateHostError::Unreadable {
                entry: entry.to_string(),
                source,
            }
        })?;
        let host =
            url.host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| PrivateHostError::NoHost {
                    entry: entry.to_string(),
                })?;
        let port = url.port().or_else(|| {
            // `http://host:80/` drops the default port; keep it when it was written.
            entry.ends_with(":80").then_some(80)
        });
        Ok(Self {
            host: host.to_string(),
            port,
        })
    }

    /// Whether `url` is on this host and port: the port written, or without one the default
    /// port of `url`'s scheme (so `gateway.lan` allows `http://gateway.lan/` and
    /// `https://gateway.lan/`, not `http://gateway.lan:5001/`).
    pub fn matches(&self, url: &url::Url) -> bool {
        let port = self.port.or(match url.scheme() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        url.host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(&self.host))
            && port.is_some_and(|port| url.port_or_known_default() == Some(port))
    }
}

/// Why an entry of `private_hosts_allowed` is not a host or `host:port`.
#[derive(Debug, thiserror::Error)]
pub enum PrivateHostError {
    /// Empty, or holds a path, query, fragment or user.
    #[error("{entry:?} is not a host or host:port")]
    NotAHost {
        /// The entry, trimmed.
        entry: String,
    },
    /// Does not read as the host of a URL.
    #[error("{entry:?} is not a host or host:port: {source}")]
    Unreadable {
        /// The entry, trimmed.
        entry: String,
        /// What the URL parser said.
        source: url::ParseError,
    },
    /// Reads as a URL without a host.
    #[error("{entry:?} names no host")]
    NoHost {
        /// The entry, trimmed.
        entry: String,
    },
}

impl DocumentsConfig {
    /// The allowed private hosts, read (entries that do not read are refused at load).
    pub fn private_hosts(&self) -> Vec<PrivateHost> {
        self.private_hosts_allowed
            .iter()
            .filter_map(|entry| PrivateHost::parse(entry).ok())
            .collect()
    }

    pub(super) fn validate_fetching(&self) -> ConfigResult<()> {
        if self.fetch_deadline_secs == 0 {
            return Err(ConfigError::Key {
                key: "documents.fetch_deadline_secs".into(),
                message: "must be at least 1".into(),
            });
        }
        for (i, entry) in self.private_hosts_allowed.iter().enumerate() {
            PrivateHost::parse(entry).map_err(|error| ConfigError::Key {
                key: format!("documents.private_hosts_allowed[{i}]"),
                message: error.to_string(),
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> url::Url {
        url::Url::parse(text).unwrap()
    }

    #[test]
    fn an_entry_without_a_port_allows_only_the_schemes_default_port() {
        for entry in ["Gateway.LAN", "10.0.0.5", "[fd00::5]"] {
            let listed = PrivateHost::parse(entry).unwrap();
            assert_eq!(listed.port, None, "{entry}");
            let host = listed.host.clone();
            for allowed in [
                format!("http://{host}/ipfs/x"),
                format!("https://{host}/ipfs/x"),
                format!("http://{host}:80/ipfs/x"),
                format!("https://{host}:443/ipfs/x"),
            ] {
                assert!(listed.matches(&url(&allowed)), "{entry} allows {allowed}");
            }
            for refused in [
                format!("http://{host}:8080/ipfs/x"),
                format!("http://{host}:5001/api/v0/id"),
                format!("http://{host}:443/ipfs/x"),
                format!("https://{host}:80/ipfs/x"),
                format!("https://{host}:8443/ipfs/x"),
                format!("ftp://{host}/ipfs/x"),
                "http://other.lan/ipfs/x".to_string(),
            ] {
                assert!(!listed.matches(&url(&refused)), "{entry} refuses {refused}");
            }
        }
    }

    #[test]
    fn an_entry_with_a_port_allows_that_port_only() {
        let one_port = PrivateHost::parse("127.0.0.1:8080").unwrap();
        assert!(one_port.matches(&url("http://127.0.0.1:8080/ipfs/x")));
        assert!(!one_port.matches(&url("http://127.0.0.1:8081/ipfs/x")));
        assert!(!one_port.matches(&url("http://127.0.0.2:8080/ipfs/x")));
        let v6 = PrivateHost::parse("[::1]:5001").unwrap();
        assert!(v6.matches(&url("http://[::1]:5001/ipfs/x")));
        let default_port = PrivateHost::parse("gateway.lan:80").unwrap();
        assert_eq!(default_port.port, Some(80));
        assert!(default_port.matches(&url("http://gateway.lan/")));
        assert!(!default_port.matches(&url("http://gateway.lan:8080/")));
        let https_port = PrivateHost::parse("gateway.lan:8443").unwrap();
        assert!(https_port.matches(&url("https://gateway.lan:8443/ipfs/x")));
        assert!(!https_port.matches(&url("https://gateway.lan/ipfs/x")));
    }

    fn load(text: &str, vars: &[(&str, &str)]) -> ConfigResult<super::super::Config> {
        super::super::Config::from_toml_and_env(
            text,
            std::path::Path::new("t.toml"),
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        )
    }

    #[test]
    fn the_keys_load_from_the_file_and_the_environment_and_bad_values_name_the_key() {
        let config = load("", &[]).unwrap();
        assert_eq!(config.documents.fetch_deadline_secs, 20);
        assert!(config.documents.private_hosts_allowed.is_empty());
        let config = load(
            "[documents]\nprivate_hosts_allowed = [\"127.0.0.1:8080\"]\n",
            &[("AGENTINDEX_DOCUMENTS__FETCH_DEADLINE_SECS", "7")],
        )
        .unwrap();
        assert_eq!(config.documents.fetch_deadline_secs, 7);
        assert_eq!(
            config.documents.private_hosts(),
            vec![PrivateHost {
                host: "127.0.0.1".into(),
                port: Some(8080)
            }]
        );
        let zero = load("[documents]\nfetch_deadline_secs = 0\n", &[]).unwrap_err();
        assert!(
            zero.to_string()
                .contains("config key `documents.fetch_deadline_secs`"),
            "{zero}"
        );
        let bad = load(
            "[documents]\nprivate_hosts_allowed = [\"ok.lan\", \"http://gw.lan/ipfs/\"]\n",
            &[],
        )
        .unwrap_err();
        assert!(
            bad.to_string()
                .contains("config key `documents.private_hosts_allowed[1]`"),
            "{bad}"
        );
    }

    #[test]
    fn entries_that_are_not_hosts_are_refused() {
        for bad in [
            "",
            "http://gateway.lan/",
            "gateway.lan/ipfs",
            "user@gateway.lan",
            "host:99999",
        ] {
            assert!(PrivateHost::parse(bad).is_err(), "{bad:?}");
        }
    }
}
