//! The `documents.nat64_prefixes` key: IPv6 prefixes through which the operator's own network
//! reaches IPv4 (RFC 6052 network-specific prefixes). The well-known `64:ff9b::/96` and the
//! local-use `64:ff9b:1::/48` need no entry; a prefix of the operator's choosing cannot be
//! known without one, and an address under it would otherwise look like any public IPv6 address
//! while reaching, say, the metadata service. Read at load; a bad entry names the key.

use serde::{Deserialize, Deserializer};
use std::net::Ipv6Addr;

/// The prefix lengths RFC 6052 §2.2 gives a place for the IPv4 address at.
pub const NAT64_PREFIX_LENGTHS: [u8; 6] = [32, 40, 48, 56, 64, 96];

/// An IPv6 prefix a NAT64 translates through: `2001:db8:64::/96`, `2001:db8::/32`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nat64Prefix {
    /// The prefix, with every bit past `len` zero.
    pub network: Ipv6Addr,
    /// Its length in bits, one of [`NAT64_PREFIX_LENGTHS`].
    pub len: u8,
}

impl Nat64Prefix {
    /// Whether `ip` lies under this prefix.
    pub fn contains(&self, ip: Ipv6Addr) -> bool {
        (u128::from(ip) ^ u128::from(self.network)) >> (128 - u32::from(self.len)) == 0
    }
}

impl std::str::FromStr for Nat64Prefix {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let shape =
            || format!("{text:?} is not an IPv6 prefix in CIDR form, like 2001:db8:64::/96");
        let (address, len) = text.trim().split_once('/').ok_or_else(shape)?;
        let network: Ipv6Addr = address.parse().map_err(|_| shape())?;
        let len: u8 = len.parse().map_err(|_| shape())?;
        if !NAT64_PREFIX_LENGTHS.contains(&len) {
            return Err(format!(
                "{text:?}: a NAT64 prefix is /32, /40, /48, /56, /64 or /96 (RFC 6052 §2.2), not /{len}"
            ));
        }
        let host_bits = u128::MAX >> len;
        if u128::from(network) & host_bits != 0 {
            let masked = Ipv6Addr::from(u128::from(network) & !host_bits);
            return Err(format!(
                "{text:?} has bits set past /{len}; the prefix is written {masked}/{len}"
            ));
        }
        Ok(Self { network, len })
    }
}

impl std::fmt::Display for Nat64Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.len)
    }
}

impl<'de> Deserialize<'de> for Nat64Prefix {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(text: &str) -> Nat64Prefix {
        text.parse().unwrap()
    }

    #[test]
    fn every_rfc_6052_length_reads_and_contains_its_own_addresses() {
        for (text, inside, outside) in [
            (
                "2001:db8:64::/96",
                "2001:db8:64::a9fe:a9fe",
                "2001:db8:65::a9fe:a9fe",
            ),
            ("2001:db8::/32", "2001:db8:a9fe:a9fe::", "2001:db9::1"),
            (
                "2001:db8:100::/40",
                "2001:db8:1a9:fea9:fe::",
                "2001:db8:200::1",
            ),
            (
                "2001:db8:122::/48",
                "2001:db8:122:a9fe:a9:fe00::",
                "2001:db8:123::1",
            ),
            (
                "2001:db8:122:300::/56",
                "2001:db8:122:3a9:fe:a9fe::",
                "2001:db8:122:400::",
            ),
            (
                "2001:db8:122:344::/64",
                "2001:db8:122:344:a9:fea9:fe00:0",
                "2001:db8:122:345::",
            ),
        ] {
            let read = prefix(text);
            assert_eq!(read.to_string(), text);
            assert!(
                read.contains(inside.parse().unwrap()),
                "{text} holds {inside}"
            );
            assert!(
                !read.contains(outside.parse().unwrap()),
                "{text} lacks {outside}"
            );
        }
    }

    #[test]
    fn lengths_rfc_6052_does_not_define_and_stray_bits_are_refused_with_the_reason() {
        let not_defined = "2001:db8::/80".parse::<Nat64Prefix>().unwrap_err();
        assert!(
            not_defined.contains("/32, /40, /48, /56, /64 or /96"),
            "{not_defined}"
        );
        assert!(not_defined.contains("not /80"), "{not_defined}");
        let stray = "2001:db8:64::1/96".parse::<Nat64Prefix>().unwrap_err();
        assert!(stray.contains("2001:db8:64::/96"), "{stray}");
        for bad in ["2001:db8:64::", "10.0.0.0/8", "2001:db8::/x", "/96", ""] {
            let error = bad.parse::<Nat64Prefix>().unwrap_err();
            assert!(error.contains("CIDR"), "{bad:?}: {error}");
        }
    }

    #[test]
    fn the_key_loads_from_the_file_and_the_environment_and_a_bad_entry_names_the_key() {
        let load = |text: &str, vars: &[(&str, &str)]| {
            super::super::Config::from_toml_and_env(
                text,
                std::path::Path::new("t.toml"),
                vars.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            )
        };
        assert!(load("", &[]).unwrap().documents.nat64_prefixes.is_empty());
        let config = load(
            "[documents]\nnat64_prefixes = [\"2001:db8:64::/96\"]\n",
            &[],
        )
        .unwrap();
        assert_eq!(
            config.documents.nat64_prefixes,
            vec![prefix("2001:db8:64::/96")]
        );
        let config = load(
            "",
            &[(
                "AGENTINDEX_DOCUMENTS__NAT64_PREFIXES",
                "[\"2001:db8::/32\"]",
            )],
        )
        .unwrap();
        assert_eq!(
            config.documents.nat64_prefixes,
            vec![prefix("2001:db8::/32")]
        );
        let bad = load(
            "[documents]\nnat64_prefixes = [\"2001:db8:64::/96\", \"2001:db8::/80\"]\n",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad.contains("config key `documents.nat64_prefixes[1]`"),
            "{bad}"
        );
        assert!(bad.contains("not /80"), "{bad}");
    }
}
