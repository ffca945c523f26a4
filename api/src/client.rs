//! Who a request comes from, decided in one place for every per-client limit (the rate limit,
//! the connection cap, the websocket cap): the socket's peer address, or, when that peer is a
//! configured trusted proxy, the right-most `X-Forwarded-For` hop that is not itself a trusted
//! proxy (hops further left were written by the client and prove nothing). Addresses are then
//! bucketed: an IPv4 client by its address, an IPv6 client by its /64, since one subscriber
//! usually holds a whole /64 and could otherwise take a fresh bucket per address. A site is
//! given up to a /48, so the IPv6 clients of one /48 are also counted together as one network
//! ([`NetworkKey`]), which may hold [`CLIENTS_PER_NETWORK`] clients' worth of every per-client
//! limit: a /56 or /48 carved into /64s buys a few clients' share, not thousands.

use agentindex_indexer::config::IpNetwork;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Bits of an IPv6 address that name one client: a /64 is what a single subscriber is given.
const IPV6_CLIENT_PREFIX: u32 = 64;
/// Bits of an IPv6 address that name one network: the most a single site is usually given.
const IPV6_NETWORK_PREFIX: u32 = 48;
/// How many clients' worth of connections, websockets and requests the clients of one
/// network may hold together.
pub const CLIENTS_PER_NETWORK: u32 = 4;
/// The header a proxy names the client in.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// One client as every per-client limit counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientKey(IpAddr);

impl ClientKey {
    /// The bucket of `address`: IPv4 (also written IPv4-mapped) as itself, IPv6 by its /64.
    pub fn of(address: IpAddr) -> Self {
        match address.to_canonical() {
            IpAddr::V4(v4) => Self(IpAddr::V4(v4)),
            IpAddr::V6(v6) => {
                let mask = u128::MAX << (128 - IPV6_CLIENT_PREFIX);
                Self(IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask)))
            }
        }
    }
}

/// The network a client belongs to: an IPv6 client's /48; an IPv4 client is its own network
/// (an IPv4 /24 is shared by unrelated users too often to be counted as one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NetworkKey(IpAddr);

impl ClientKey {
    /// The address the client is counted under: an IPv6 client's /64 with its host bits zero.
    pub fn address(self) -> IpAddr {
        self.0
    }

    /// Whether the client is an IPv6 one (whose network holds several clients).
    pub fn is_ipv6(self) -> bool {
        self.0.is_ipv6()
    }

    /// The network this client is counted with.
    pub fn network(self) -> NetworkKey {
        match self.0 {
            IpAddr::V4(_) => NetworkKey(self.0),
            IpAddr::V6(v6) => {
                let mask = u128::MAX << (128 - IPV6_NETWORK_PREFIX);
                NetworkKey(IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask)))
            }
        }
    }
}

impl fmt::Display for NetworkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/{IPV6_NETWORK_PREFIX}"),
        }
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/{IPV6_CLIENT_PREFIX}"),
        }
    }
}

/// A request's client: set by the accept loop ([`crate::connections`]); a router served some
/// other way (with `ConnectInfo`) counts the peer's address.
impl<S: Send + Sync> FromRequestParts<S> for ClientKey {
    type Rejection = (StatusCode, &'static str);

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        if let Some(client) = parts.extensions.get::<ClientKey>() {
            return Ok(*client);
        }
        match parts.extensions.get::<ConnectInfo<SocketAddr>>() {
            Some(ConnectInfo(peer)) => Ok(ClientKey::of(peer.ip())),
            None => Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                "the server does not know the client's address",
            )),
        }
    }
}

/// The configured trusted proxies, shared by every connection.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<Vec<IpNetwork>>);

impl TrustedProxies {
    /// Proxies in `networks` (`[api.connections] trusted_proxies`).
    pub fn new(networks: Vec<IpNetwork>) -> Self {
        Self(Arc::new(networks))
    }

    /// Whether `address` is a trusted proxy.
    pub fn trusts(&self, address: IpAddr) -> bool {
        self.0.iter().any(|network| network.contains(address))
    }

    /// The client a request from `peer` with `headers` comes from.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> ClientKey {
        ClientKey::of(self.originating_address(peer, headers))
    }

    /// The address a request from `peer` originates at: `peer` unless it is a trusted proxy;
    /// then the right-most forwarded hop that is not one (the left-most when all are). Hops are
    /// read from the right and only as far as needed: what lies left of the origin was written
    /// by the client and is never looked at. A missing header, or a hop that is not an address
    /// before the origin is reached, leaves the request counted against the proxy itself.
    fn originating_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let values: Vec<&HeaderValue> = headers.get_all(FORWARDED_FOR).iter().collect();
        let mut origin = peer;
        for value in values.into_iter().rev() {
            let Ok(text) = value.to_str() else {
                return origin;
            };
            for hop in text.rsplit(',') {
                let Some(hop) = parse_hop(hop.trim()) else {
                    return origin;
                };
                origin = hop;
                if !self.trusts(hop) {
                    return origin;
                }
            }
        }
        origin
    }
}

/// A hop as proxies write it: an address, a bracketed IPv6 address, either with a port.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(address) = hop.parse() {
        return Some(address);
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest
            .split_once(']')
            .and_then(|(address, _)| address.parse().ok());
    }
    hop.rsplit_once(':')
        .and_then(|(address, _port)| address.parse::<std::net::Ipv4Addr>().ok())
        .map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(FORWARDED_FOR, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn proxies(networks: &[&str]) -> TrustedProxies {
        TrustedProxies::new(networks.iter().map(|n| n.parse().unwrap()).collect())
    }

    #[test]
    fn ipv6_clients_are_bucketed_by_their_64_and_ipv4_clients_by_their_address() {
        let one = ClientKey::of(address("2001:db8:1:2:aaaa::1"));
        assert_eq!(
            one,
            ClientKey::of(address("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        );
        assert_ne!(one, ClientKey::of(address("2001:db8:1:3::1")));
        assert_eq!(one.to_string(), "2001:db8:1:2::/64");
        assert_ne!(
            ClientKey::of(address("192.0.2.1")),
            ClientKey::of(address("192.0.2.2"))
        );
        assert_eq!(
            ClientKey::of(address("::ffff:192.0.2.1")),
            ClientKey::of(address("192.0.2.1")),
            "an IPv4-mapped peer is its IPv4 address"
        );
    }

    #[test]
    fn ipv6_clients_of_one_48_share_a_network_and_ipv4_clients_are_their_own() {
        let one = ClientKey::of(address("2001:db8:1:2::1"));
        let other_56 = ClientKey::of(address("2001:db8:1:ff00::1"));
        assert_ne!(one, other_56);
        assert_eq!(one.network(), other_56.network());
        assert_eq!(one.network().to_string(), "2001:db8:1::/48");
        assert_ne!(
            one.network(),
            ClientKey::of(address("2001:db8:2::1")).network()
        );
        let v4 = ClientKey::of(address("192.0.2.1"));
        assert_eq!(v4.network().to_string(), "192.0.2.1");
        assert_ne!(v4.network(), ClientKey::of(address("192.0.2.2")).network());
    }

    #[test]
    fn forwarded_for_is_ignored_from_a_peer_that_is_not_a_trusted_proxy() {
        let headers = forwarded(&["198.51.100.7"]);
        let peer = address("203.0.113.5");
        assert_eq!(
            proxies(&[]).client(peer, &headers),
            ClientKey::of(peer),
            "no proxies configured"
        );
        assert_eq!(
            proxies(&["10.0.0.0/8"]).client(peer, &headers),
            ClientKey::of(peer),
            "the peer is not one of them"
        );
    }

    #[test]
    fn a_trusted_proxy_names_the_right_most_hop_that_is_not_a_proxy() {
        let trusted = proxies(&["10.0.0.0/8"]);
        let proxy = address("10.0.0.2");
        // The client wrote a spoofed first hop; nginx appended the real peer; an inner proxy
        // appended itself.
        let headers = forwarded(&["1.1.1.1, 198.51.100.7", "10.0.0.9"]);
        assert_eq!(
            trusted.client(proxy, &headers),
            ClientKey::of(address("198.51.100.7"))
        );
        assert_eq!(
            trusted.client(proxy, &forwarded(&["[2001:db8::5]:4711"])),
            ClientKey::of(address("2001:db8::5"))
        );
        assert_eq!(
            trusted.client(proxy, &forwarded(&["198.51.100.8:52000"])),
            ClientKey::of(address("198.51.100.8"))
        );
        assert_eq!(
            trusted.client(proxy, &HeaderMap::new()),
            ClientKey::of(proxy),
            "no header: the proxy itself"
        );
        assert_eq!(
            trusted.client(proxy, &forwarded(&["not-an-address, 198.51.100.7"])),
            ClientKey::of(address("198.51.100.7")),
            "garbage left of the origin is never read"
        );
        assert_eq!(
            trusted.client(proxy, &forwarded(&["198.51.100.7, not-an-address"])),
            ClientKey::of(proxy),
            "a malformed hop where the origin should be: the proxy itself"
        );
        assert_eq!(
            trusted.client(proxy, &forwarded(&["10.0.0.7, 10.0.0.8"])),
            ClientKey::of(address("10.0.0.7")),
            "only proxies: the left-most"
        );
    }
}
