//! `[api.connections]`: how long a client may take to send a request, how many connections it
//! may hold, and which peers are proxies whose `X-Forwarded-For` names the real client. A public
//! server without these keeps a socket, a task and its buffers for every connection a slow or
//! hostile client opens.

use super::{ConfigError, ConfigResult};
use serde::{Deserialize, Deserializer};
use std::net::IpAddr;

/// `[api.connections]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionsConfig {
    /// Seconds a connection has to send a complete request head, counted from when the server
    /// starts waiting for one: on a new connection at once (one that sends nothing is closed
    /// too), on a kept-alive one once the previous answer went out, so it also bounds how long
    /// an idle keep-alive connection is kept.
    #[serde(default = "ConnectionsConfig::default_header_read_timeout_secs")]
    pub header_read_timeout_secs: u64,
    /// Seconds a connection may go without a byte moving either way while it is not waiting for
    /// a request head (a stalled upload, a client that stops reading its answer); then it is
    /// closed. Websockets are not subject to it once upgraded.
    #[serde(default = "ConnectionsConfig::default_idle_timeout_secs")]
    pub idle_timeout_secs: u64,
    /// Open connections one client address may hold; over it, a new one is closed at accept.
    /// Trusted proxies are exempt (their clients are told apart per request).
    #[serde(default = "ConnectionsConfig::default_max_connections_per_client")]
    pub max_connections_per_client: usize,
    /// Open connections over all clients; over it, a new one is closed at accept.
    #[serde(default = "ConnectionsConfig::default_max_connections")]
    pub max_connections: usize,
    /// Proxies (addresses or CIDR networks, e.g. `10.0.0.0/8`) whose `X-Forwarded-For` is
    /// believed: a request from one is attributed to the right-most hop that is not itself a
    /// trusted proxy. Empty (the default): every client is its socket address.
    #[serde(default, deserialize_with = "networks")]
    pub trusted_proxies: Vec<IpNetwork>,
}

impl ConnectionsConfig {
    fn default_header_read_timeout_secs() -> u64 {
        10
    }
    fn default_idle_timeout_secs() -> u64 {
        // Longer than the 10 s a query may run, so an answer being computed is never cut.
        60
    }
    fn default_max_connections_per_client() -> usize {
        // Generous: many users may share one address behind a NAT.
        256
    }
    fn default_max_connections() -> usize {
        4_096
    }

    pub(super) fn validate(&self) -> ConfigResult<()> {
        for (key, value) in [
            (
                "api.connections.header_read_timeout_secs",
                self.header_read_timeout_secs as usize,
            ),
            (
                "api.connections.idle_timeout_secs",
                self.idle_timeout_secs as usize,
            ),
            (
                "api.connections.max_connections_per_client",
                self.max_connections_per_client,
            ),
            ("api.connections.max_connections", self.max_connections),
        ] {
            if value == 0 {
                return Err(ConfigError::Key {
                    key: key.into(),
                    message: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}

impl Default for ConnectionsConfig {
    fn default() -> Self {
        Self {
            header_read_timeout_secs: Self::default_header_read_timeout_secs(),
            idle_timeout_secs: Self::default_idle_timeout_secs(),
            max_connections_per_client: Self::default_max_connections_per_client(),
            max_connections: Self::default_max_connections(),
            trusted_proxies: Vec::new(),
        }
    }
}

/// An address network: `10.0.0.0/8`, `fd00::/8`, or one address (`10.0.0.7`, all bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNetwork {
    network: IpAddr,
    prefix: u8,
}

impl IpNetwork {
    /// Whether the network is IPv6 and narrower than `prefix` bits.
    pub fn is_ipv6_narrower_than(&self, prefix: u8) -> bool {
        self.network.is_ipv6() && self.prefix > prefix
    }

    /// Whether `address` is in the network (an IPv4-mapped IPv6 address counts as its IPv4).
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, address.to_canonical()) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(network) & mask == u32::from(address) & mask
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(network) & mask == u128::from(address) & mask
            }
            _ => false,
        }
    }
}

impl std::str::FromStr for IpNetwork {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network = address
            .parse::<IpAddr>()
            .map_err(|_| format!("{text:?} is not an IP address or a CIDR network"))?
            .to_canonical();
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|prefix| *prefix <= bits)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {bits}"))?,
        };
        Ok(Self { network, prefix })
    }
}

impl std::fmt::Display for IpNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// A list of networks as the config writes them (`["10.0.0.0/8", "fd00::1"]`).
pub(super) fn networks<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<IpNetwork>, D::Error> {
    Vec::<String>::deserialize(deserializer)?
        .iter()
        .map(|text| text.parse().map_err(serde::de::Error::custom))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::IpNetwork;

    #[test]
    fn networks_contain_their_addresses_and_single_addresses_only_themselves() {
        let private: IpNetwork = "10.0.0.0/8".parse().unwrap();
        assert!(private.contains("10.200.1.2".parse().unwrap()));
        assert!(private.contains("::ffff:10.1.1.1".parse().unwrap()));
        assert!(!private.contains("11.0.0.1".parse().unwrap()));
        let one: IpNetwork = "192.0.2.7".parse().unwrap();
        assert!(one.contains("192.0.2.7".parse().unwrap()));
        assert!(!one.contains("192.0.2.8".parse().unwrap()));
        let v6: IpNetwork = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains("2001:db8:ffff::1".parse().unwrap()));
        assert!(!v6.contains("2001:db9::1".parse().unwrap()));
        let everything: IpNetwork = "0.0.0.0/0".parse().unwrap();
        assert!(everything.contains("203.0.113.9".parse().unwrap()));
    }

    #[test]
    fn malformed_networks_are_refused() {
        for bad in [
            "10.0.0.0/33",
            "fd00::/129",
            "proxy.internal",
            "10.0.0.0/x",
            "",
        ] {
            assert!(bad.parse::<IpNetwork>().is_err(), "{bad}");
        }
    }
}
