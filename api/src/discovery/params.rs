//! The query of `GET /discovery/resources`, as the x402 Bazaar clients send it: `type`, `payTo`,
//! `scheme`, `network`, `extensions` (comma-separated keys every listing must carry), `limit`
//! and `offset`. A value that cannot be read is refused by name rather than ignored.

use super::networks;
use crate::read::x402_resources::TermFilter;
use agentindex_indexer::documents::payments::recipient;
use std::collections::BTreeMap;

/// Listings a page holds unless asked otherwise.
pub(crate) const DEFAULT_LIMIT: i64 = 20;
/// The most a page holds.
pub(crate) const MAX_LIMIT: i64 = 100;
/// The furthest a listing may start: deeper pages cost a walk over every listing before them.
pub(crate) const MAX_OFFSET: i64 = 10_000;

/// The extension key every listing carries: what agentindex knows of the agent behind it.
pub(crate) const AGENTINDEX: &str = "agentindex";
/// The extension key of listings whose agent is an ERC-8004 identity.
pub(crate) const ERC8004: &str = "erc8004";

/// A query that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{parameter}: {reason}")]
pub(crate) struct BadParameter {
    /// The parameter.
    pub(crate) parameter: &'static str,
    /// What is wrong with it.
    pub(crate) reason: String,
}

/// A read query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListQuery {
    pub(crate) filter: TermFilter,
    pub(crate) limit: i64,
    pub(crate) offset: i64,
}

/// Reads `query`.
pub(crate) fn read(query: &BTreeMap<String, String>) -> Result<ListQuery, BadParameter> {
    let given = |name: &str| {
        query
            .get(name)
            .map(|value| value.trim())
            .filter(|value| !value.is_empty())
    };
    let number =
        |parameter: &'static str, default: i64, most: i64, least: i64| match given(parameter) {
            None => Ok(default),
            Some(text) => match text.parse::<i64>() {
                Ok(n) if (least..=most).contains(&n) => Ok(n),
                _ => Err(BadParameter {
                    parameter,
                    reason: format!("{text:.40?} is not a whole number from {least} to {most}"),
                }),
            },
        };
    let mut filter = TermFilter::default();
    match given("type") {
        None => {}
        Some("http") => filter.with_resource = Some(true),
        Some("a2a") => filter.with_resource = Some(false),
        // No other kind of resource is declared (MCP tools name no price here).
        Some(_) => filter.none = true,
    }
    filter.pay_to = given("payTo").map(recipient);
    if let Some(scheme) = given("scheme") {
        // The terms agents declare name no scheme but `exact`'s fields.
        filter.none |= !scheme.eq_ignore_ascii_case("exact");
    }
    filter.networks = given("network").map(networks::spellings);
    for key in given("extensions")
        .into_iter()
        .flat_map(|keys| keys.split(','))
    {
        match key.trim() {
            "" | AGENTINDEX => {}
            ERC8004 => filter.erc8004 = true,
            _ => filter.none = true,
        }
    }
    Ok(ListQuery {
        filter,
        limit: number("limit", DEFAULT_LIMIT, MAX_LIMIT, 1)?,
        offset: number("offset", 0, MAX_OFFSET, 0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn filters_read_as_the_bazaar_clients_send_them() {
        let read = read(&query(&[
            ("type", "http"),
            ("payTo", "0xAB00000000000000000000000000000000000001"),
            ("scheme", "exact"),
            ("network", "base-sepolia"),
            ("extensions", "agentindex,erc8004"),
            ("limit", "5"),
            ("offset", "10"),
        ]))
        .unwrap();
        assert_eq!(read.limit, 5);
        assert_eq!(read.offset, 10);
        assert_eq!(read.filter.with_resource, Some(true));
        assert_eq!(
            read.filter.pay_to.as_deref(),
            Some("0xab00000000000000000000000000000000000001")
        );
        assert!(
            read.filter
                .networks
                .unwrap()
                .contains(&"eip155:84532".to_string())
        );
        assert!(read.filter.erc8004 && !read.filter.none);
    }

    #[test]
    fn what_no_listing_has_matches_nothing_and_bad_numbers_are_named() {
        for pairs in [
            [("type", "mcp")],
            [("scheme", "upto")],
            [("extensions", "bazaar")],
        ] {
            assert!(read(&query(&pairs)).unwrap().filter.none, "{pairs:?}");
        }
        for (parameter, value) in [
            ("limit", "0"),
            ("limit", "101"),
            ("offset", "-1"),
            ("offset", "x"),
        ] {
            let refused = read(&query(&[(parameter, value)])).unwrap_err();
            assert_eq!(refused.parameter, parameter);
        }
        assert_eq!(read(&query(&[])).unwrap().limit, DEFAULT_LIMIT);
    }
}
