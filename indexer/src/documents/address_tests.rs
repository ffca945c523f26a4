//! Which addresses documents may come from: the built-in ranges, every way of writing IPv4
//! inside IPv6 (ISATAP included), and an operator's NAT64 prefixes at each RFC 6052 length.
//! Pure functions, no network.

use super::address::{AddressRules, Class, name_refusal};
use crate::config::Nat64Prefix;
use std::net::IpAddr;

fn class(ip: &str) -> Class {
    AddressRules::default().classify(ip.parse().unwrap())
}

fn refusal(ip: IpAddr, allow_private: bool) -> Option<&'static str> {
    AddressRules::default().refusal(ip, allow_private)
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

/// ISATAP's interface identifier carries an IPv4 address in its last 32 bits under any
/// prefix; the universal and group bits of its first octet change nothing.
#[test]
fn isatap_is_judged_as_the_ipv4_it_carries() {
    for iid in ["0:5efe", "200:5efe", "100:5efe", "300:5efe"] {
        let at = |v4: &str| class(&format!("2600:1f18:1234:5678:{iid}:{v4}"));
        assert_eq!(at("8.8.8.8"), Class::Public, "{iid} public");
        assert_eq!(at("10.0.0.1"), Class::Private, "{iid} private");
        assert_eq!(at("127.0.0.1"), Class::Private, "{iid} loopback");
        assert_eq!(at("169.254.169.254"), Class::Metadata, "{iid} metadata");
        assert_eq!(at("100.100.100.200"), Class::Metadata, "{iid} Alibaba");
    }
    // Under a private prefix the address stays private even when the IPv4 one is public.
    assert_eq!(class("fd00:1::200:5efe:808:808"), Class::Private);
    // A public address whose identifier merely ends in zeros is not made unroutable.
    assert_eq!(class("2600:1f18:1234:5678:0:5efe:0:0"), Class::Public);
    // Other interface identifiers are not ISATAP.
    assert_eq!(
        class("2600:1f18:1234:5678:400:5efe:a9fe:a9fe"),
        Class::Public
    );
    assert_eq!(class("2600:1f18:1234:5678:0:5eff:a9fe:a9fe"), Class::Public);
}

fn operator(prefixes: &[&str]) -> AddressRules {
    let prefixes: Vec<Nat64Prefix> = prefixes.iter().map(|p| p.parse().unwrap()).collect();
    AddressRules::new(&prefixes)
}

/// An operator's NAT64 prefix at each RFC 6052 length, carrying a public, a private and a
/// metadata address: looks public without the key, judged as its IPv4 address with it.
#[test]
fn an_operators_nat64_prefix_is_judged_as_the_ipv4_it_carries_at_every_length() {
    // (prefix, carrying 8.8.8.8, 10.0.0.1, 169.254.169.254)
    let prefixes = [
        (
            "2600:1f18:64::/96",
            "2600:1f18:64::808:808",
            "2600:1f18:64::a00:1",
            "2600:1f18:64::a9fe:a9fe",
        ),
        (
            "2600:1f18::/32",
            "2600:1f18:808:808::",
            "2600:1f18:a00:1::",
            "2600:1f18:a9fe:a9fe::",
        ),
        (
            "2600:1f18:100::/40",
            "2600:1f18:108:808:8::",
            "2600:1f18:10a:0:1::",
            "2600:1f18:1a9:fea9:fe::",
        ),
        (
            "2600:1f18:122::/48",
            "2600:1f18:122:808:8:800::",
            "2600:1f18:122:a00:0:100::",
            "2600:1f18:122:a9fe:a9:fe00::",
        ),
        (
            "2600:1f18:122:300::/56",
            "2600:1f18:122:308:8:808::",
            "2600:1f18:122:30a:0:1::",
            "2600:1f18:122:3a9:fe:a9fe::",
        ),
        (
            "2600:1f18:122:344::/64",
            "2600:1f18:122:344:8:808:800:0",
            "2600:1f18:122:344:a:0:100:0",
            "2600:1f18:122:344:a9:fea9:fe00:0",
        ),
    ];
    for (prefix, public, private, metadata) in prefixes {
        let rules = operator(&[prefix]);
        let judge = |ip: &str| rules.classify(ip.parse().unwrap());
        for ip in [public, private, metadata] {
            assert_eq!(class(ip), Class::Public, "{ip} without {prefix}");
        }
        assert_eq!(judge(public), Class::Public, "{prefix} {public}");
        assert_eq!(judge(private), Class::Private, "{prefix} {private}");
        assert_eq!(judge(metadata), Class::Metadata, "{prefix} {metadata}");
        assert!(
            rules.refusal(metadata.parse().unwrap(), true).is_some(),
            "{prefix} {metadata} is never allowed"
        );
        assert_eq!(
            rules.refusal(private.parse().unwrap(), true),
            None,
            "{prefix} {private} when private ranges are open"
        );
        // The prefix decodes only its own addresses.
        assert_eq!(
            judge("2600:1f19::a9fe:a9fe"),
            Class::Public,
            "{prefix} leaves others alone"
        );
    }
}

#[test]
fn an_operators_nat64_prefix_in_a_private_range_stays_private_and_zeros_are_unroutable() {
    let rules = operator(&["fd64::/96", "2600:1f18:64::/96"]);
    let judge = |ip: &str| rules.classify(ip.parse().unwrap());
    assert_eq!(judge("fd64::808:808"), Class::Private);
    assert_eq!(judge("fd64::a9fe:a9fe"), Class::Metadata);
    assert_eq!(judge("fd64::7f00:1"), Class::Private);
    // The operator said the IPv4 address is there: 0.0.0.0 through it is no address.
    assert_eq!(judge("2600:1f18:64::"), Class::Unroutable);
    // The built-in prefixes are still decoded alongside.
    assert_eq!(judge("64:ff9b::a9fe:a9fe"), Class::Metadata);
}
