//! The `agents` arguments: `AgentFilter`, `AgentSource`, `AgentOrder`, and turning them and a
//! search text into a [`Selection`] for the read queries.

use crate::read::agents::{Order, Selection};
use async_graphql::{Enum, InputObject};

/// How an agent came on-chain.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AgentSource {
    /// Deployed by a watched factory.
    Factory,
    /// Enrolled in a watched registry.
    Registry,
    /// Minted in the ERC-8004 Identity Registry.
    #[graphql(name = "ERC8004")]
    Erc8004,
    /// An NFT of Masumi's agent registry on Cardano.
    Masumi,
}

impl AgentSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AgentSource::Factory => "factory",
            AgentSource::Registry => "registry",
            AgentSource::Erc8004 => "erc8004",
            AgentSource::Masumi => "masumi",
        }
    }

    pub(crate) fn parse(source: &str) -> Option<Self> {
        match source {
            "factory" => Some(AgentSource::Factory),
            "registry" => Some(AgentSource::Registry),
            "erc8004" => Some(AgentSource::Erc8004),
            "masumi" => Some(AgentSource::Masumi),
            _ => None,
        }
    }
}

/// How `agents` orders its results.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AgentOrder {
    /// Best full-text match first (needs `search`; without one, newest first).
    Relevance,
    /// Highest composite reputation first.
    Reputation,
    /// Most recently registered first.
    Newest,
}

/// Which agents `agents` lists; every field given must hold.
#[derive(InputObject, Clone, Debug, Default)]
pub(crate) struct AgentFilter {
    /// Only these chains.
    pub(crate) chain_ids: Option<Vec<i64>>,
    /// Only agents that came on-chain these ways.
    pub(crate) sources: Option<Vec<AgentSource>>,
    /// A skill id or a tag, case-insensitively.
    pub(crate) skill: Option<String>,
    /// Tags, all of them: of a skill, or declared by the agent itself (a Masumi entry's).
    pub(crate) tags: Option<Vec<String>>,
    /// An accepted input media type.
    pub(crate) input_mode: Option<String>,
    /// A produced output media type.
    pub(crate) output_mode: Option<String>,
    /// Declares x402 payment anywhere (card, registration file, vendor objects, contract terms).
    pub(crate) x402: Option<bool>,
    /// The Agent Card carries a valid signature.
    pub(crate) signed_card: Option<bool>,
    /// On-chain active flag.
    pub(crate) active: Option<bool>,
    /// Composite reputation score at least this (0–100).
    pub(crate) min_reputation: Option<f64>,
    /// Current on-chain owner (hex address).
    pub(crate) owner: Option<String>,
    /// A card interface with this protocol binding (JSONRPC, GRPC, HTTP+JSON), any case.
    pub(crate) protocol_binding: Option<String>,
    /// The card declares (or denies) streaming.
    pub(crate) streaming: Option<bool>,
    /// The card declares this extension URI.
    pub(crate) extension_uri: Option<String>,
    /// Some declared price is at least this (atomic units of its asset, a decimal integer).
    pub(crate) min_price: Option<String>,
    /// Some declared price is at most this (atomic units of its asset, a decimal integer).
    pub(crate) max_price: Option<String>,
    /// As this instance's prober saw it: an endpoint answered at its last probe; `false` lists
    /// agents probed whose endpoints all failed ("registered but unreachable").
    pub(crate) reachable: Option<bool>,
    /// Answered at least this share (0 to 1) of the last 7 days' probes.
    pub(crate) min_uptime: Option<f64>,
    /// An MCP server of the agent lists a tool of this name, case-insensitively.
    pub(crate) mcp_tool: Option<String>,
    /// The agent's authenticated extended card (fetched with this instance's credentials) has
    /// a skill of this id, case-insensitively.
    pub(crate) extended_skill: Option<String>,
    /// An x402 resource answered an unpaid request with 402 asking to be paid to the agent's
    /// own on-chain wallet or payment address.
    pub(crate) x402_live: Option<bool>,
}

/// Refuses a list argument `name` of more than `max` items (`[api.reads]
/// max_list_argument`): each item widens the SQL, the plan and the cache key.
pub(crate) fn capped<T>(name: &str, list: Option<&[T]>, max: usize) -> async_graphql::Result<()> {
    match list {
        Some(items) if items.len() > max => Err(async_graphql::Error::new(format!(
            "`{name}` has {} items; at most {max} are accepted",
            items.len()
        ))),
        _ => Ok(()),
    }
}

impl AgentFilter {
    /// Refuses a list of more than `max` items in any of the filter's list fields.
    pub(crate) fn check_lists(&self, max: usize) -> async_graphql::Result<()> {
        capped("filter.chainIds", self.chain_ids.as_deref(), max)?;
        capped("filter.sources", self.sources.as_deref(), max)?;
        capped("filter.tags", self.tags.as_deref(), max)
    }

    /// The selection this filter and `search` describe.
    pub(crate) fn selection(&self, search: Option<&str>) -> Selection {
        Selection {
            chain_ids: self.chain_ids.clone().unwrap_or_default(),
            sources: self.sources.iter().flatten().map(|s| s.as_str()).collect(),
            skill: self.skill.clone().filter(|s| !s.trim().is_empty()),
            tags: self.tags.clone().unwrap_or_default(),
            input_mode: self.input_mode.clone(),
            output_mode: self.output_mode.clone(),
            x402: self.x402,
            signed: self.signed_card,
            active: self.active,
            min_reputation: self.min_reputation,
            owner: self.owner.clone(),
            protocol_binding: self.protocol_binding.clone(),
            streaming: self.streaming,
            extension_uri: self.extension_uri.clone(),
            min_price: self.min_price.as_deref().and_then(price),
            max_price: self.max_price.as_deref().and_then(price),
            reachable: self.reachable,
            min_uptime: self.min_uptime,
            mcp_tool: lookup_key(self.mcp_tool.as_deref()),
            extended_skill: lookup_key(self.extended_skill.as_deref()),
            x402_live: self.x402_live,
            search: search.and_then(|text| fts_query(text, false)),
            search_as_prefix: search.and_then(|text| fts_query(text, true)),
        }
    }
}

/// A name looked up by its lower-case form (`None` when blank).
fn lookup_key(name: Option<&str>) -> Option<String> {
    name.map(|name| name.trim().to_lowercase())
        .filter(|name| !name.is_empty())
}

/// A price bound as a number (`None` when it is not a decimal integer, which then filters
/// nothing out).
fn price(text: &str) -> Option<f64> {
    text.trim()
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| text.trim().parse().ok())
        .flatten()
}

/// The order a request asks for: relevance only makes sense with a search.
pub(crate) fn order(asked: Option<AgentOrder>, searching: bool) -> Order {
    match asked {
        Some(AgentOrder::Reputation) => Order::Reputation,
        Some(AgentOrder::Newest) => Order::Newest,
        Some(AgentOrder::Relevance) | None if searching => Order::Relevance,
        _ => Order::Newest,
    }
}

/// An FTS5 query from free text: every word quoted (so no input is FTS syntax), all required;
/// with `last_as_prefix` the last one matches any word it begins. `None` when there is no word.
pub(crate) fn fts_query(text: &str, last_as_prefix: bool) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    let mut query = words.join(" ");
    if query.is_empty() {
        return None;
    }
    if last_as_prefix {
        query.push('*');
    }
    Some(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_text_becomes_quoted_words_with_a_prefix_last() {
        assert_eq!(
            fts_query("Translate text", false),
            Some("\"translate\" \"text\"".into())
        );
        assert_eq!(
            fts_query("Translate text", true),
            Some("\"translate\" \"text\"*".into())
        );
        assert_eq!(
            fts_query("weather) OR \"x\" NEAR(y", true),
            Some("\"weather\" \"or\" \"x\" \"near\" \"y\"*".into()),
            "FTS operators in the input are plain words"
        );
        assert_eq!(fts_query("  ()  ", true), None);
    }

    #[test]
    fn list_arguments_past_the_cap_are_refused_by_name() {
        let filter = AgentFilter {
            tags: Some(vec!["a".into(); 3]),
            ..AgentFilter::default()
        };
        assert!(filter.check_lists(3).is_ok());
        let refused = filter.check_lists(2).unwrap_err();
        assert_eq!(
            refused.message,
            "`filter.tags` has 3 items; at most 2 are accepted"
        );
        assert!(capped::<i64>("chainIds", None, 0).is_ok());
    }

    #[test]
    fn relevance_needs_a_search() {
        assert_eq!(order(None, true), Order::Relevance);
        assert_eq!(order(Some(AgentOrder::Relevance), false), Order::Newest);
        assert_eq!(order(Some(AgentOrder::Reputation), true), Order::Reputation);
    }
}
