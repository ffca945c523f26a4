//! Which network addresses documents may be fetched from. Public addresses always; loopback and
//! private ranges only when the config allows them (tests, private deployments, a listed
//! gateway host); link-local and cloud metadata addresses never, whatever the config says.
//!
//! An IPv4 address can be written inside an IPv6 one in several ways (IPv4-mapped,
//! IPv4-compatible, SIIT, NAT64, 6to4, Teredo, ISATAP); each is decoded and the IPv4 address
//! judged, so `[64:ff9b::a9fe:a9fe]` is the metadata service it reaches on a NAT64 host, not a
//! public address. The operator's own NAT64 prefixes (`documents.nat64_prefixes`) are decoded
//! the same way, which is why the rules are a value ([`AddressRules`]) and not free functions.
//! Where one IPv6 address could carry an IPv4 one in more than one place (Teredo's server and
//! client, the local-use NAT64 prefix whose length is the operator's choice, an interface
//! identifier that looks like ISATAP's), every reading is judged and the strictest wins.

use crate::config::Nat64Prefix;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

/// How far an address may be trusted, from most open to most closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Reachable from anywhere: always fetched from.
    Public,
    /// Loopback or a private network: fetched from only when allowed.
    Private,
    /// Not an address a fetch can mean (unspecified, broadcast, multicast, documentation).
    Unroutable,
    /// Link-local or a cloud metadata service: never fetched from.
    Metadata,
}

impl Class {
    /// The words a refusal gives for this class.
    pub fn reason(self) -> &'static str {
        match self {
            Class::Public => "public address",
            Class::Private => "loopback or private address",
            Class::Unroutable => "unroutable address",
            Class::Metadata => "link-local or cloud metadata address",
        }
    }
}

/// Cloud metadata services on public or shared IPv4 addresses, which no private-range rule
/// catches: Alibaba (100.100.100.200, inside the shared 100.64/10 range), Oracle
/// (192.0.0.192), Azure's wire server (168.63.129.16, a public address). AWS and GCP answer on
/// 169.254.169.254, which the link-local rule refuses.
const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
    Ipv4Addr::new(168, 63, 129, 16),
];

/// Host names of metadata services, refused by name before any lookup (a resolver that maps
/// them somewhere unexpected must not matter).
const METADATA_NAMES: [&str; 4] = [
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// The address rules of one deployment: the ranges built in, and the NAT64 prefixes of the
/// operator's own network. Cheap to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressRules {
    nat64_prefixes: Arc<[Nat64Prefix]>,
}

impl AddressRules {
    /// The built-in rules, with addresses under `nat64_prefixes` judged as the IPv4 they carry.
    pub fn new(nat64_prefixes: &[Nat64Prefix]) -> Self {
        Self {
            nat64_prefixes: nat64_prefixes.into(),
        }
    }

    /// Why `ip` may not be fetched from, or `None` when it may.
    pub fn refusal(&self, ip: IpAddr, allow_private: bool) -> Option<&'static str> {
        match self.classify(ip) {
            Class::Public => None,
            Class::Private if allow_private => None,
            refused => Some(refused.reason()),
        }
    }

    /// The class of `ip`, with IPv4 addresses inside IPv6 ones judged as IPv4.
    pub fn classify(&self, ip: IpAddr) -> Class {
        match ip {
            IpAddr::V4(v4) => classify_v4(v4),
            IpAddr::V6(v6) => self.classify_v6(v6),
        }
    }

    /// The class of an IPv6 address: its own prefix's, or that of an IPv4 address it carries,
    /// whichever is stricter. A prefix in a private range (a NAT64 prefix in `fd00::/8`) keeps
    /// its addresses at least private whatever IPv4 address they carry.
    fn classify_v6(&self, ip: Ipv6Addr) -> Class {
        let own = own_class_v6(ip).unwrap_or(Class::Public);
        let operators = self
            .nat64_prefixes
            .iter()
            .filter(|prefix| prefix.contains(ip))
            .map(|prefix| Reading {
                ipv4: rfc6052_v4(ip, prefix.len),
                certain: true,
            });
        embedded_v4(ip)
            .into_iter()
            .chain(operators)
            .map(|reading| match classify_v4(reading.ipv4) {
                // A reading the prefix does not settle (local-use NAT64 at another length, an
                // interface identifier that only looks like ISATAP's) may be mere zeros: it
                // counts only when it points somewhere that matters.
                Class::Unroutable if !reading.certain => Class::Public,
                class => class,
            })
            .fold(own, Class::max)
    }
}

/// Why a host name may not be fetched from whatever it resolves to, or `None`.
pub fn name_refusal(host: &str) -> Option<&'static str> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    METADATA_NAMES
        .contains(&host.as_str())
        .then_some(Class::Metadata.reason())
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    let [a, b, c, _] = ip.octets();
    if ip.is_link_local() || METADATA_V4.contains(&ip) {
        return Class::Metadata;
    }
    let documentation =
        (a, b, c) == (192, 0, 2) || (a, b, c) == (198, 51, 100) || (a, b, c) == (203, 0, 113);
    if ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || a >= 240
        || documentation
    {
        return Class::Unroutable;
    }
    let private = ip.is_loopback()
        || ip.is_private()
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (18..20).contains(&b))
        || (a == 192 && b == 0 && c == 0);
    if private {
        Class::Private
    } else {
        Class::Public
    }
}

/// One IPv4 address an IPv6 address may carry, and whether its prefix says it is there.
struct Reading {
    ipv4: Ipv4Addr,
    certain: bool,
}

/// The class an IPv6 address has by its own prefix, when the prefix decides one.
fn own_class_v6(ip: Ipv6Addr) -> Option<Class> {
    let s = ip.segments();
    // fe80::/10 link-local; fd00:ec2::/32 holds AWS's metadata (::254), DNS and time services.
    if (s[0] & 0xffc0) == 0xfe80 || (s[0], s[1]) == (0xfd00, 0x0ec2) {
        return Some(Class::Metadata);
    }
    // 2001:db8::/32 documentation, 100::/64 discard-only.
    let documentation = (s[0], s[1]) == (0x2001, 0x0db8);
    let discard = s[0] == 0x0100 && s[1..4] == [0, 0, 0];
    if ip.is_unspecified() || ip.is_multicast() || documentation || discard {
        return Some(Class::Unroutable);
    }
    // ::1, fc00::/7 unique local, fec0::/10 site-local (deprecated, still routed inside sites),
    // 64:ff9b:1::/48 local-use NAT64.
    let local_nat64 = (s[0], s[1], s[2]) == (0x0064, 0xff9b, 0x0001);
    if ip.is_loopback() || (s[0] & 0xfe00) == 0xfc00 || (s[0] & 0xffc0) == 0xfec0 || local_nat64 {
        return Some(Class::Private);
    }
    None
}

/// Every IPv4 address `ip` carries, by each built-in way of writing one inside IPv6.
fn embedded_v4(ip: Ipv6Addr) -> Vec<Reading> {
    let s = ip.segments();
    let o = ip.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    let certain = |ipv4| Reading {
        ipv4,
        certain: true,
    };
    let mut readings: Vec<Reading> = match s {
        // ::ffff:a.b.c.d IPv4-mapped; ::ffff:0:a.b.c.d SIIT (RFC 6145).
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => vec![certain(last)],
        // ::a.b.c.d IPv4-compatible (deprecated), except :: and ::1.
        [0, 0, 0, 0, 0, 0, high, low] if high != 0 || low > 1 => vec![certain(last)],
        // 64:ff9b::/96 well-known NAT64 prefix (RFC 6052).
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => vec![certain(last)],
        // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): the operator picks the prefix length, so
        // the IPv4 address may sit where any RFC 6052 length of /48 or more puts it.
        [0x0064, 0xff9b, 0x0001, ..] => [48, 56, 64, 96]
            .into_iter()
            .map(|len| Reading {
                ipv4: rfc6052_v4(ip, len),
                certain: false,
            })
            .collect(),
        // 2002:a.b.c.d::/48 6to4: the IPv4 address is bits 16..48.
        [0x2002, ..] => vec![certain(Ipv4Addr::new(o[2], o[3], o[4], o[5]))],
        // 2001:0::/32 Teredo: the server's IPv4 in bits 32..64, the client's in the last 32
        // bits, inverted.
        [0x2001, 0, ..] => vec![
            certain(Ipv4Addr::new(o[4], o[5], o[6], o[7])),
            certain(Ipv4Addr::from(!u32::from(last))),
        ],
        _ => Vec::new(),
    };
    // ISATAP (RFC 5214) under any prefix: the interface identifier `0000:5efe:a.b.c.d`, or
    // `0200:5efe:a.b.c.d` with the universal bit set. The group bit (0x0100) is taken too: it
    // changes nothing for the router, so flipping it must not slip an address past.
    if s[4] & !0x0300 == 0 && s[5] == 0x5efe {
        readings.push(Reading {
            ipv4: last,
            certain: false,
        });
    }
    readings
}

/// The IPv4 address RFC 6052 §2.2 puts after a prefix of `len` bits (32, 40, 48, 56, 64 or
/// 96): the four octets from bit `len` on, skipping bits 64..72 (the reserved `u` octet).
fn rfc6052_v4(ip: Ipv6Addr, len: u8) -> Ipv4Addr {
    let octets = ip.octets();
    let mut after = (usize::from(len / 8)..16)
        .filter(|&index| index != 8)
        .map(|index| octets[index]);
    let mut next = || after.next().unwrap_or(0);
    Ipv4Addr::new(next(), next(), next(), next())
}
