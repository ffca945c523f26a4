//! Name resolution for document fetches: every address a host name resolves to is judged by
//! [`AddressRules::refusal`] before a connection is tried, so a name can never lead where a
//! literal address could not.

use super::address::{self, AddressRules, Class};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::SocketAddr;

/// What a refused resolution says, so the fetcher can tell it from other transport errors.
const REFUSED: &str = "resolves only to refused addresses";

/// DNS that drops every address the rules refuse.
pub(super) struct CheckedResolver {
    /// Whether loopback and private addresses are allowed (never link-local or metadata).
    pub(super) allow_private: bool,
    /// The rules addresses are judged by, the operator's NAT64 prefixes included.
    pub(super) rules: AddressRules,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let rules = self.rules.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            if let Some(reason) = address::name_refusal(&host) {
                return Err(format!("{host} {REFUSED} ({reason})").into());
            }
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| rules.refusal(a.ip(), allow_private).is_none())
                .collect();
            if allowed.is_empty() {
                let reason = found
                    .first()
                    .and_then(|a| rules.refusal(a.ip(), allow_private))
                    .unwrap_or("no address");
                return Err(format!("{host} {REFUSED} ({reason})").into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// The refusal a transport error's text carries, when the resolver refused the name.
pub(super) fn refusal_in(text: &str) -> Option<&'static str> {
    let detail = &text[text.find(REFUSED)?..];
    Some(
        [Class::Metadata, Class::Unroutable, Class::Private]
            .into_iter()
            .map(Class::reason)
            .find(|reason| detail.contains(reason))
            .unwrap_or(Class::Private.reason()),
    )
}
