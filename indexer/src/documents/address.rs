//! Which network addresses documents may be fetched from. Public addresses always; loopback and
//! private ranges only when the config allows them (tests, private deployments, a listed
//! gateway host); link-local and cloud metadata addresses never, whatever the config says.
//!
//! An IPv4 address can be written inside an IPv6 one in several ways (IPv4-mapped,
//! IPv4-compatible, SIIT, NAT64, 6to4, Teredo); each is decoded and the IPv4 address judged, so
//! `[64:ff9b::a9fe:a9fe]` is the metadata service it reaches on a NAT64 host, not a public
//! address. Where one IPv6 address could carry an IPv4 one in more than one place (Teredo's
//! server and client, the local-use NAT64 prefix whose length is the operator's choice), every
//! reading is judged and the strictest wins.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

/// Why an address may not be fetched from, or `None` when it may.
pub fn refusal(ip: IpAddr, allow_private: bool) -> Option<&'static str> {
    match classify(ip) {
        Class::Public => None,
        Class::Private if allow_private => None,
        refused => Some(refused.reason()),
    }
}

/// Why a host name may not be fetched from whatever it resolves to, or `None`.
pub fn name_refusal(host: &str) -> Option<&'static str> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    METADATA_NAMES
        .contains(&host.as_str())
        .then_some(Class::Metadata.reason())
}

/// The class of `ip`, with IPv4 addresses inside IPv6 ones judged as IPv4.
pub fn classify(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
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

fn classify_v6(ip: Ipv6Addr) -> Class {
    let own = own_class_v6(ip).unwrap_or(Class::Public);
    let embedded = embedded_v4(ip);
    let readings = embedded.iter().map(|v4| match classify_v4(*v4) {
        // A reading the prefix does not settle (local-use NAT64 at another length) may be
        // mere zeros: it counts only when it points somewhere that matters.
        Class::Unroutable if !embedded.certain => Class::Public,
        class => class,
    });
    readings.fold(own, Class::max)
}

/// The IPv4 addresses an IPv6 address carries, and whether its prefix says exactly where.
struct Embedded {
    readings: Vec<Ipv4Addr>,
    certain: bool,
}

impl Embedded {
    fn iter(&self) -> impl Iterator<Item = &Ipv4Addr> {
        self.readings.iter()
    }
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

/// Every IPv4 address `ip` carries, by each way of writing one inside IPv6.
fn embedded_v4(ip: Ipv6Addr) -> Embedded {
    let s = ip.segments();
    let o = ip.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    let certain = !matches!(s, [0x0064, 0xff9b, 0x0001, ..]);
    let readings = match s {
        // ::ffff:a.b.c.d IPv4-mapped; ::ffff:0:a.b.c.d SIIT (RFC 6145).
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => vec![last],
        // ::a.b.c.d IPv4-compatible (deprecated), except :: and ::1.
        [0, 0, 0, 0, 0, 0, high, low] if high != 0 || low > 1 => vec![last],
        // 64:ff9b::/96 well-known NAT64 prefix (RFC 6052).
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => vec![last],
        // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): the operator picks the prefix length, so
        // the IPv4 address may sit where any RFC 6052 length of /48 or more puts it.
        [0x0064, 0xff9b, 0x0001, ..] => vec![
            Ipv4Addr::new(o[6], o[7], o[9], o[10]),
            Ipv4Addr::new(o[7], o[9], o[10], o[11]),
            Ipv4Addr::new(o[9], o[10], o[11], o[12]),
            last,
        ],
        // 2002:a.b.c.d::/48 6to4: the IPv4 address is bits 16..48.
        [0x2002, ..] => vec![Ipv4Addr::new(o[2], o[3], o[4], o[5])],
        // 2001:0::/32 Teredo: the server's IPv4 in bits 32..64, the client's in the last 32
        // bits, inverted.
        [0x2001, 0, ..] => vec![
            Ipv4Addr::new(o[4], o[5], o[6], o[7]),
            Ipv4Addr::from(!u32::from(last)),
        ],
        _ => Vec::new(),
    };
    Embedded { readings, certain }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(ip: &str) -> Class {
        classify(ip.parse().unwrap())
    }

    #[test]
    fn public_addresses_pass_and_private_ones_only_when_allowed() {
        for public in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "8.8.8.8",
        ] {
            assert_eq!(refusal(public.parse().unwrap(), false), None, "{public}");
        }
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "::1",
            "fd12::1",
            "::ffff:127.0.0.1",
        ] {
            let ip = private.parse().unwrap();
            assert_eq!(
                refusal(ip, false),
                Some("loopback or private address"),
                "{private}"
            );
            assert_eq!(refusal(ip, true), None, "{private} when allowed");
        }
    }

    #[test]
    fn metadata_and_link_local_are_never_allowed() {
        for never in [
            "169.254.169.254",
            "169.254.0.1",
            "fe80::1",
            "fd00:ec2::254",
            "fd00:ec2::23",
            "::ffff:169.254.169.254",
            "100.100.100.200",
            "192.0.0.192",
            "168.63.129.16",
        ] {
            assert_eq!(class(never), Class::Metadata, "{never}");
            assert!(refusal(never.parse().unwrap(), true).is_some(), "{never}");
        }
        for unroutable in [
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::",
            "ff02::1",
            "2001:db8::1",
            "192.0.2.1",
        ] {
            assert_eq!(class(unroutable), Class::Unroutable, "{unroutable}");
        }
    }

    /// Each way of writing IPv4 inside IPv6, carrying a public, a private and a metadata
    /// address: judged as the IPv4 address it carries.
    #[test]
    fn every_ipv6_embedding_is_judged_as_the_ipv4_it_carries() {
        // (form, public 8.8.8.8, private 10.0.0.1, metadata 169.254.169.254)
        let forms = [
            (
                "mapped",
                "::ffff:8.8.8.8",
                "::ffff:10.0.0.1",
                "::ffff:169.254.169.254",
            ),
            ("compatible", "::8.8.8.8", "::10.0.0.1", "::169.254.169.254"),
            (
                "SIIT",
                "::ffff:0:8.8.8.8",
                "::ffff:0:10.0.0.1",
                "::ffff:0:a9fe:a9fe",
            ),
            (
                "NAT64",
                "64:ff9b::808:808",
                "64:ff9b::a00:1",
                "64:ff9b::a9fe:a9fe",
            ),
            (
                "6to4",
                "2002:808:808::1",
                "2002:a00:1::1",
                "2002:a9fe:a9fe::1",
            ),
            // Teredo: server 65.54.227.120 (public), client inverted in the last 32 bits.
            (
                "Teredo",
                "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
                "2001:0:4136:e378:8000:63bf:f5ff:fffe",
                "2001:0:4136:e378:8000:63bf:5601:5601",
            ),
        ];
        for (form, public, private, metadata) in forms {
            assert_eq!(class(public), Class::Public, "{form} {public}");
            assert_eq!(class(private), Class::Private, "{form} {private}");
            assert_eq!(
                refusal(private.parse().unwrap(), true),
                None,
                "{form} {private} when allowed"
            );
            assert_eq!(class(metadata), Class::Metadata, "{form} {metadata}");
            assert!(
                refusal(metadata.parse().unwrap(), true).is_some(),
                "{form} {metadata}"
            );
        }
        // A Teredo server address that is private makes the whole address private.
        assert_eq!(class("2001:0:a00:1:8000:63bf:f7f7:f7f7"), Class::Private);
    }

    #[test]
    fn local_use_nat64_is_private_and_judged_at_every_prefix_length() {
        // /96 layout: metadata in the last 32 bits.
        assert_eq!(class("64:ff9b:1::a9fe:a9fe"), Class::Metadata);
        // /48 layout: a9.fe in bits 48..64, a9.fe in bits 72..88.
        assert_eq!(class("64:ff9b:1:a9fe:a9:fe00::"), Class::Metadata);
        // A public address through the local-use prefix is still a local network.
        assert_eq!(class("64:ff9b:1::808:808"), Class::Private);
    }

    #[test]
    fn site_local_and_unique_local_are_private() {
        for private in ["fec0::1", "feff::1", "fc00::1", "fdff:ffff::1"] {
            assert_eq!(class(private), Class::Private, "{private}");
        }
        assert_eq!(class("fe80::1"), Class::Metadata);
    }

    #[test]
    fn metadata_hosts_are_refused_by_name() {
        for name in [
            "metadata.google.internal",
            "METADATA.google.internal.",
            "metadata.goog",
            "instance-data.ec2.internal",
        ] {
            assert!(name_refusal(name).is_some(), "{name}");
        }
        for name in ["example.org", "google.internal", "metadata.example.org"] {
            assert_eq!(name_refusal(name), None, "{name}");
        }
    }
}
