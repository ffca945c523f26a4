//! A page of listings in the x402 version 2 Bazaar shape: each paid resource with the terms it
//! is paid under (`accepts`), what its agent is (name, description, tags, icon) and, under
//! `extensions`, the agent's identity, reputation and page here, and what the prober last saw
//! of the resource.

use super::networks;
use super::params::{AGENTINDEX, ERC8004};
use crate::graphql::days::{DAY_SECS, utc_date};
use crate::read::x402_resources::{AgentFacts, Page, ProbeRow, TermRow};
use serde_json::{Map, Value, json};

/// The x402 version the listings are written in.
pub(crate) const X402_VERSION: i64 = 2;
/// The Bazaar's bounds on a service's name and tags (printable ASCII, 32 characters, 5 tags).
const MOST_NAME_CHARS: usize = 32;
const MOST_TAGS: usize = 5;

/// A unix time as ISO 8601 (UTC, seconds).
fn iso8601(unix_secs: i64) -> String {
    let of_day = unix_secs.rem_euclid(DAY_SECS);
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        utc_date(unix_secs),
        of_day / 3_600,
        of_day % 3_600 / 60,
        of_day % 60
    )
}

/// `text` as the Bazaar takes a service name or tag: printable ASCII of at most 32 characters.
fn bazaar_text(text: &str) -> Option<String> {
    let text = text.trim();
    let printable = !text.is_empty() && text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    (printable && text.len() <= MOST_NAME_CHARS).then(|| text.to_owned())
}

/// The most `accepts` entries a listing shows.
const MOST_ACCEPTS: usize = 20;

/// One `accepts` entry of a declared term (fields the term does not give left out).
fn accepted(term: &TermRow) -> Value {
    let mut extra = Map::new();
    extra.insert("declaredIn".into(), term.source.clone().into());
    if let Some(skill) = &term.skill {
        extra.insert("skill".into(), skill.clone().into());
    }
    let mut entry = Map::new();
    entry.insert("scheme".into(), "exact".into());
    let given = [
        ("network", term.network.as_deref().map(networks::caip2)),
        ("amount", term.amount.clone()),
        ("asset", term.asset.clone()),
        ("payTo", term.pay_to.clone()),
    ];
    for (name, value) in given {
        if let Some(value) = value {
            entry.insert(name.into(), value.into());
        }
    }
    entry.insert("extra".into(), extra.into());
    entry.into()
}

/// What the prober last saw of the resource, and whether the 402 it answered asks to be paid
/// to the agent's own wallet or payment address.
fn live(probe: &ProbeRow, agent: &AgentFacts) -> Value {
    let detail: Value = probe
        .detail
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null);
    let accepts = detail.get("accepts").cloned().unwrap_or(json!([]));
    let own: Vec<&str> = [&agent.agent_wallet, &agent.payment_address]
        .into_iter()
        .filter_map(|address| address.as_deref())
        .collect();
    let pays_the_agent = accepts
        .as_array()
        .filter(|list| !list.is_empty())
        .map(|list| {
            list.iter().any(|accept| {
                accept["payTo"]
                    .as_str()
                    .is_some_and(|pay_to| own.iter().any(|own| own.eq_ignore_ascii_case(pay_to)))
            })
        });
    json!({
        "status": probe.status,
        "checkedAt": probe.checked_at.map(iso8601),
        "x402Version": detail["x402Version"],
        "accepts": accepts,
        "paysTheAgent": pays_the_agent,
    })
}

/// The listing of `resource` by `agent`, paid under `terms`.
fn listing(
    resource: &str,
    agent: Option<&AgentFacts>,
    terms: &[&TermRow],
    tags: &[String],
    probe: Option<&ProbeRow>,
) -> Value {
    let named = terms.iter().any(|term| term.named != 0);
    let mut item = Map::new();
    item.insert("resource".into(), resource.into());
    item.insert("type".into(), if named { "http" } else { "a2a" }.into());
    item.insert("x402Version".into(), X402_VERSION.into());
    item.insert(
        "accepts".into(),
        terms
            .iter()
            .take(MOST_ACCEPTS)
            .map(|term| accepted(term))
            .collect(),
    );
    let updated = probe
        .and_then(|probe| probe.checked_at)
        .or(agent.and_then(|agent| agent.fetched_at));
    item.insert(
        "lastUpdated".into(),
        updated.map(iso8601).unwrap_or_default().into(),
    );
    let mut extensions = Map::new();
    if let Some(agent) = agent {
        if let Some(description) = &agent.description {
            item.insert("description".into(), description.clone().into());
        }
        if let Some(name) = agent.name.as_deref().and_then(bazaar_text) {
            item.insert("serviceName".into(), name.into());
        }
        let tags: Vec<String> = tags
            .iter()
            .filter_map(|t| bazaar_text(t))
            .take(MOST_TAGS)
            .collect();
        if !tags.is_empty() {
            item.insert("tags".into(), tags.into());
        }
        let icon = agent.image.as_deref().filter(|url| {
            url.len() <= 2_048 && (url.starts_with("https://") || url.starts_with("http://"))
        });
        if let Some(icon) = icon {
            item.insert("iconUrl".into(), icon.into());
        }
        extensions.insert(
            AGENTINDEX.into(),
            json!({
                "agentId": agent.agent_key,
                "graphqlId": agent.agent_key,
                "page": format!("/agents/{}", agent.agent_key),
                "chainId": agent.chain_id,
                "source": agent.source,
                "owner": agent.owner,
                "name": agent.name,
                "reputation": agent.score,
                "live": probe.map(|probe| live(probe, agent)),
            }),
        );
        if agent.source == "erc8004" {
            extensions.insert(
                ERC8004.into(),
                json!({
                    "agentId": agent.token_id,
                    "agentRegistry": agent
                        .registry
                        .as_ref()
                        .map(|registry| format!("eip155:{}:{registry}", agent.chain_id)),
                }),
            );
        }
    }
    item.insert("extensions".into(), extensions.into());
    item.into()
}

/// The answer to a listing request: `x402Version`, `items` and `pagination`.
pub(crate) fn answer(page: &Page, limit: i64, offset: i64) -> Value {
    let items: Vec<Value> = page
        .listings
        .iter()
        .map(|(key, resource)| {
            let terms: Vec<&TermRow> = page
                .terms
                .iter()
                .filter(|term| &term.agent_key == key && &term.listed == resource)
                .collect();
            let tags = page.tags.get(key).map(Vec::as_slice).unwrap_or_default();
            listing(
                resource,
                page.agents.get(key),
                &terms,
                tags,
                page.probes.get(resource),
            )
        })
        .collect();
    json!({
        "x402Version": X402_VERSION,
        "items": items,
        "pagination": { "limit": limit, "offset": offset, "total": page.total },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_names_are_written_as_the_bazaar_reads_them() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_795_187_643), "2026-11-20T15:14:03Z");
        assert_eq!(
            bazaar_text(" Weather Oracle "),
            Some("Weather Oracle".into())
        );
        assert_eq!(bazaar_text("Météo"), None);
        assert_eq!(bazaar_text(&"x".repeat(33)), None);
    }
}
