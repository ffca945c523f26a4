//! An agent's liveness over the endpoints it declares: one status (up when every probed
//! endpoint is up, degraded when some answered, down when none did, unknown before any
//! probe), uptime over a day and a week, the median latency of a day, the tools its MCP
//! servers list, its card's authenticated extended card and that card's skills, and whether an
//! x402 resource asks to be paid to the agent's own wallet.

use super::rollup::{self, Sample};
use super::{Kind, Status};
use serde_json::{Value, json};

/// Seconds in a day.
pub const DAY: i64 = 86_400;

/// One endpoint an agent declares, as last probed.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointState {
    /// Its kind.
    pub kind: Kind,
    /// Its URL.
    pub url: String,
    /// What its last probe found; `None` before the first.
    pub status: Option<Status>,
    /// When it was last probed.
    pub checked_at: Option<i64>,
    /// When it last answered.
    pub last_ok_at: Option<i64>,
    /// What its last probe saw (see [`super::Outcome::detail`]).
    pub detail: Value,
}

/// Probes past the raw window, summed over the days of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DailyTotals {
    /// Probes.
    pub probes: i64,
    /// Of which answered.
    pub answered: i64,
}

/// What an endpoint showed the agent can do: a tool its MCP server lists, or a skill of its
/// extended card.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Capability {
    /// What it is looked up by: the tool's name or the skill's id.
    pub key: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
}

/// An agent's liveness.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSummary {
    /// `up`, `degraded`, `down` or `unknown`.
    pub status: &'static str,
    /// Whether an endpoint answered at its last probe.
    pub reachable: bool,
    /// When an endpoint last answered.
    pub last_seen: Option<i64>,
    /// When an endpoint was last probed.
    pub checked_at: Option<i64>,
    /// The share of probes answered over the last day.
    pub uptime_24h: Option<f64>,
    /// The share of probes answered over the last week.
    pub uptime_7d: Option<f64>,
    /// The median latency of the answered probes of the last day.
    pub latency_p50_ms: Option<i64>,
    /// Whether an x402 resource answered 402 asking for payment to one of the agent's wallets.
    pub x402_live: bool,
    /// Each x402 resource's requirements and whether its `payTo` is the agent's.
    pub x402_detail: Option<Value>,
    /// The tools its MCP servers listed, by name.
    pub mcp_tools: Vec<Capability>,
    /// What asking for its card's authenticated extended card found (`challenged`, `fetched`,
    /// `missing`, `unanswered`), when a card claims one.
    pub extended_card: Option<String>,
    /// The skills of its extended card, when one was fetched.
    pub extended_skills: Vec<Capability>,
}

/// The liveness of an agent with `endpoints`, raw `samples` of the last week, `daily` totals
/// of the week's days past the raw window, and `wallets` (lower-case or not), at `now`.
pub fn summarize(
    endpoints: &[EndpointState],
    samples: &[Sample],
    daily: DailyTotals,
    wallets: &[String],
    now: i64,
) -> AgentSummary {
    let probed: Vec<Status> = endpoints.iter().filter_map(|e| e.status).collect();
    let status = if probed.is_empty() {
        "unknown"
    } else if probed.iter().all(|s| *s == Status::Up) {
        "up"
    } else if probed.iter().any(|s| s.answered()) {
        "degraded"
    } else {
        "down"
    };
    let week: Vec<&Sample> = samples.iter().filter(|s| s.at >= now - 7 * DAY).collect();
    let raw_answered = week.iter().filter(|s| s.answered).count() as i64;
    let probes = week.len() as i64 + daily.probes;
    let uptime_7d = (probes > 0).then(|| (raw_answered + daily.answered) as f64 / probes as f64);
    let up = |kind: Kind| {
        endpoints
            .iter()
            .filter(move |e| e.kind == kind && e.status == Some(Status::Up))
    };
    let mcp_tools = capabilities(up(Kind::Mcp).map(|e| &e.detail["tools"]), "name");
    let extended = endpoints
        .iter()
        .filter(|e| e.kind == Kind::A2aCard && e.status.is_some_and(Status::answered))
        .map(|e| &e.detail["extendedCard"])
        .find(|extended| extended.is_object());
    let extended_card = extended
        .and_then(|e| e["status"].as_str())
        .map(str::to_string);
    let extended_skills = capabilities(extended.map(|e| &e["skills"]).into_iter(), "id");
    let resources: Vec<Value> = endpoints
        .iter()
        .filter(|e| e.kind == Kind::X402 && e.status.is_some())
        .map(|e| x402_resource(e, wallets))
        .collect();
    let x402_live = resources.iter().any(|r| r["live"] == json!(true));
    AgentSummary {
        status,
        reachable: probed.iter().any(|s| s.answered()),
        last_seen: endpoints.iter().filter_map(|e| e.last_ok_at).max(),
        checked_at: endpoints.iter().filter_map(|e| e.checked_at).max(),
        uptime_24h: rollup::uptime(samples, now - DAY),
        uptime_7d,
        latency_p50_ms: rollup::median_latency(samples, now - DAY),
        x402_live,
        x402_detail: (!resources.is_empty()).then_some(Value::Array(resources)),
        mcp_tools,
        extended_card,
        extended_skills,
    }
}

/// The entries of the JSON arrays `lists` as capabilities looked up by their field `key`, one a
/// key however it is cased.
fn capabilities<'a>(lists: impl Iterator<Item = &'a Value>, key: &str) -> Vec<Capability> {
    let mut found: Vec<Capability> = lists
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|entry| {
            Some(Capability {
                key: entry.get(key)?.as_str()?.to_string(),
                name: entry
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                description: entry
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        })
        .collect();
    found.sort_by_key(|c| (c.key.to_lowercase(), c.key.clone()));
    found.dedup_by(|a, b| a.key.eq_ignore_ascii_case(&b.key));
    found
}

/// One x402 resource as the agent's summary shows it: its requirements, and live when it
/// answered 402 asking for payment to one of `wallets`.
fn x402_resource(endpoint: &EndpointState, wallets: &[String]) -> Value {
    let accepts = endpoint.detail.get("accepts").cloned().unwrap_or(json!([]));
    let pays_agent = accepts.as_array().into_iter().flatten().any(|accept| {
        accept
            .get("payTo")
            .and_then(Value::as_str)
            .is_some_and(|pay_to| wallets.iter().any(|w| w.eq_ignore_ascii_case(pay_to)))
    });
    let up = endpoint.status == Some(Status::Up);
    json!({
        "url": endpoint.url,
        "status": endpoint.status.map(Status::as_str),
        "checkedAt": endpoint.checked_at,
        "accepts": accepts,
        "walletMatches": up.then_some(pays_agent),
        "live": up && pays_agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(kind: Kind, status: Option<Status>, detail: Value) -> EndpointState {
        EndpointState {
            kind,
            url: format!("https://a.example/{}", kind.as_str()),
            status,
            checked_at: status.map(|_| 1_000),
            last_ok_at: status.filter(|s| s.answered()).map(|_| 900),
            detail,
        }
    }

    #[test]
    fn status_is_up_only_when_every_probed_endpoint_is() {
        let up = endpoint(Kind::Web, Some(Status::Up), Value::Null);
        let down = endpoint(Kind::Mcp, Some(Status::Down), Value::Null);
        let pending = endpoint(Kind::X402, None, Value::Null);
        let of = |e: &[EndpointState]| summarize(e, &[], DailyTotals::default(), &[], 2_000);
        assert_eq!(of(&[]).status, "unknown");
        assert_eq!(of(std::slice::from_ref(&pending)).status, "unknown");
        assert_eq!(of(&[up.clone(), pending.clone()]).status, "up");
        assert_eq!(of(&[up.clone(), down.clone()]).status, "degraded");
        assert!(of(&[up.clone(), down.clone()]).reachable);
        assert_eq!(of(std::slice::from_ref(&down)).status, "down");
        assert!(!of(&[down]).reachable);
        assert_eq!(of(&[up]).last_seen, Some(900));
    }

    #[test]
    fn x402_is_live_only_when_the_402_pays_the_agents_wallet() {
        let detail = json!({"accepts": [{"payTo": "0xAbCd000000000000000000000000000000000001"}]});
        let resource = endpoint(Kind::X402, Some(Status::Up), detail);
        let mine = vec!["0xabcd000000000000000000000000000000000001".to_string()];
        let other = vec!["0x9999000000000000000000000000000000000009".to_string()];
        let of = |wallets: &[String]| {
            summarize(
                std::slice::from_ref(&resource),
                &[],
                DailyTotals::default(),
                wallets,
                2_000,
            )
        };
        assert!(of(&mine).x402_live);
        assert!(!of(&other).x402_live);
        assert_eq!(
            of(&other).x402_detail.unwrap()[0]["walletMatches"],
            json!(false)
        );
        assert!(!of(&[]).x402_live);
    }

    #[test]
    fn uptime_of_the_week_adds_the_daily_rollups() {
        let now = 10 * DAY;
        let samples = [
            Sample {
                at: now - 100,
                answered: true,
                latency_ms: Some(40),
            },
            Sample {
                at: now - 2 * DAY,
                answered: false,
                latency_ms: None,
            },
        ];
        let daily = DailyTotals {
            probes: 2,
            answered: 2,
        };
        let summary = summarize(&[], &samples, daily, &[], now);
        assert_eq!(summary.uptime_24h, Some(1.0));
        assert_eq!(summary.uptime_7d, Some(0.75));
        assert_eq!(summary.latency_p50_ms, Some(40));
        let tools = json!({"tools": [{"name": "b", "description": "B"}, {"name": "a"}]});
        let mcp = endpoint(Kind::Mcp, Some(Status::Up), tools);
        let listed = summarize(&[mcp], &[], DailyTotals::default(), &[], now).mcp_tools;
        assert_eq!(
            listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
    }
}
