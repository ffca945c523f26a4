//! Which network addresses documents may be fetched from. Public addresses always; loopback and
//! private ranges only when the config allows them (tests, private deployments); link-local and
//! cloud metadata addresses never, whatever the config says.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address may not be fetched from, or `None` when it may.
pub fn refusal(ip: IpAddr, allow_private: bool) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4, allow_private),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refusal_v4(v4, allow_private),
            None => refusal_v6(v6, allow_private),
        },
    }
}

fn refusal_v4(ip: Ipv4Addr, allow_private: bool) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_link_local() {
        return Some("link-local or cloud metadata address");
    }
    if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || a == 0 || a >= 240 {
        return Some("unroutable address");
    }
    let private = ip.is_loopback()
        || ip.is_private()
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (18..20).contains(&b))
        || (a == 192 && b == 0 && ip.octets()[2] == 0);
    (private && !allow_private).then_some("loopback or private address")
}

fn refusal_v6(ip: Ipv6Addr, allow_private: bool) -> Option<&'static str> {
    let first = ip.segments()[0];
    // fe80::/10 link-local; fd00:ec2::254 is the AWS metadata service over IPv6.
    if (first & 0xffc0) == 0xfe80 || ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("link-local or cloud metadata address");
    }
    if ip.is_unspecified() || ip.is_multicast() {
        return Some("unroutable address");
    }
    let private = ip.is_loopback() || (first & 0xfe00) == 0xfc00;
    (private && !allow_private).then_some("loopback or private address")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ip: &str, allow_private: bool) -> Option<&'static str> {
        refusal(ip.parse().unwrap(), allow_private)
    }

    #[test]
    fn public_addresses_pass_and_private_ones_only_when_allowed() {
        for public in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "8.8.8.8",
        ] {
            assert_eq!(check(public, false), None, "{public}");
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
            assert!(check(private, false).is_some(), "{private}");
            assert_eq!(check(private, true), None, "{private} when allowed");
        }
    }

    #[test]
    fn metadata_and_link_local_are_never_allowed() {
        for never in [
            "169.254.169.254",
            "169.254.0.1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
        ] {
            assert!(check(never, true).is_some(), "{never}");
        }
    }
}
