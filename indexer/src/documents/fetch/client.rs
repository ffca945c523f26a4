//! Which HTTP client may reach a URL: each client judges its DNS answers by the address rules
//! (private ranges open or not), and before any request a URL's scheme, host name and literal
//! address are checked against the policy, a listed private host getting the private client.

use super::{FetchError, FetchPolicy, Fetcher};
use crate::documents::address::{self, AddressRules};
use crate::documents::dns::CheckedResolver;
use std::net::IpAddr;
use std::sync::Arc;
use url::Url;

impl Fetcher {
    /// Refuses schemes, metadata host names and literal addresses the policy does not allow,
    /// and picks the client whose address rules apply to `url`: the private one only for a
    /// listed private host.
    pub(super) fn check(&self, url: &Url) -> Result<&reqwest::Client, FetchError> {
        match url.scheme() {
            "https" => {}
            "http" if self.policy.allow_http => {}
            _ => {
                return Err(FetchError::Scheme {
                    url: url.to_string(),
                });
            }
        }
        let listed = self.private_client.as_ref().filter(|_| {
            self.policy
                .private_hosts
                .iter()
                .any(|allowed| allowed.matches(url))
        });
        let allow_private = self.policy.allow_private || listed.is_some();
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) => {
                if let Some(reason) = address::name_refusal(name) {
                    return Err(FetchError::Blocked {
                        url: url.to_string(),
                        address: name.to_string(),
                        reason,
                    });
                }
                None
            }
            None => {
                return Err(FetchError::Scheme {
                    url: url.to_string(),
                });
            }
        };
        if let Some(ip) = literal
            && let Some(reason) = self.rules.refusal(ip, allow_private)
        {
            return Err(FetchError::Blocked {
                url: url.to_string(),
                address: ip.to_string(),
                reason,
            });
        }
        Ok(listed.unwrap_or(&self.client))
    }
}

/// The HTTP client for `policy`, whose DNS answers are judged by `rules` with private ranges
/// open or not.
pub(super) fn build_client(
    policy: &FetchPolicy,
    rules: &AddressRules,
    allow_private: bool,
) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(policy.connect_timeout)
        .timeout(policy.total_timeout)
        .dns_resolver(Arc::new(CheckedResolver {
            allow_private,
            rules: rules.clone(),
        }))
        .user_agent(
            policy
                .user_agent
                .as_deref()
                .unwrap_or(concat!("agentindex/", env!("CARGO_PKG_VERSION"))),
        )
        .build()
        .map_err(|e| FetchError::Network {
            url: String::new(),
            reason: format!("building the HTTP client: {e}"),
        })
}
