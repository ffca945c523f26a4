//! ERC-8004 registration files of every revision read into one projection: `services` or the
//! older `endpoints`, entries with `name`/`endpoint` or `type`/`url`, the trust and x402 field
//! spellings, and `registrations` checked against the agent that points at the file.

use super::json::{Fields, parse, text};
use super::lint::Report;
use serde::{Deserialize, Serialize};
use url::Url;

/// The `type` of a current registration file.
pub const REGISTRATION_TYPE: &str = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1";

/// One service the agent offers (A2A, MCP, OASF, ENS, DID, web, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Service {
    /// Its kind as written (`A2A`, `MCP`, …).
    pub name: String,
    /// Where it is.
    pub endpoint: String,
    /// Its protocol version, when given.
    pub version: Option<String>,
    /// Skills it lists (an OASF service's taxonomy skills).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// Domains it lists (an OASF service's taxonomy domains).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<String>,
    /// What an A2A service says its agent's skills are (`a2aSkills`: the agent0 SDK writes the
    /// tags of the card's skills there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a2a_skills: Vec<String>,
}

/// A `registrations` entry: the agent this file says it describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// Token id, as decimal text.
    pub agent_id: String,
    /// `eip155:{chain}:{registry}`.
    pub agent_registry: String,
}

/// Everything discovery needs from a registration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistrationProjection {
    /// Agent name.
    pub name: Option<String>,
    /// Agent description.
    pub description: Option<String>,
    /// Image URL.
    pub image: Option<String>,
    /// Services, in the file's order.
    pub services: Vec<Service>,
    /// Whether the agent accepts x402 payments.
    pub x402_support: Option<bool>,
    /// Whether the agent says it is active.
    pub active: Option<bool>,
    /// The agents the file claims to describe.
    pub registrations: Vec<Registration>,
    /// Trust models it supports.
    pub supported_trust: Vec<String>,
}

impl RegistrationProjection {
    /// The URLs to try for the A2A card: a card URL as is, a base URL as
    /// `/.well-known/agent-card.json` then `/.well-known/agent.json`.
    pub fn a2a_card_urls(&self) -> Vec<String> {
        let Some(service) = self
            .services
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case("a2a"))
        else {
            return Vec::new();
        };
        card_urls(&service.endpoint)
    }

    /// Whether a `registrations` entry names token `agent_id` of `registry` on `chain_id`.
    pub fn names_agent(&self, chain_id: u64, registry: &str, agent_id: &str) -> bool {
        self.registrations.iter().any(|r| {
            let mut parts = r.agent_registry.split(':');
            parts.next() == Some("eip155")
                && parts.next() == Some(chain_id.to_string().as_str())
                && parts
                    .next()
                    .is_some_and(|a| a.eq_ignore_ascii_case(registry))
                && r.agent_id == agent_id
        })
    }
}

/// Card URLs to try for an A2A service endpoint.
pub fn card_urls(endpoint: &str) -> Vec<String> {
    let Ok(url) = Url::parse(endpoint) else {
        return Vec::new();
    };
    if url.path().ends_with(".json") {
        return vec![url.to_string()];
    }
    let base = endpoint.trim_end_matches('/');
    vec![
        format!("{base}/.well-known/agent-card.json"),
        format!("{base}/.well-known/agent.json"),
    ]
}

/// Reads a registration file from its bytes; `None` when it is not a JSON object at all.
pub fn parse_registration(bytes: &[u8], report: &mut Report) -> Option<RegistrationProjection> {
    let value = parse(bytes, report)?;
    read_registration(&value, report)
}

/// Reads a registration file from parsed JSON.
pub fn read_registration(
    value: &serde_json::Value,
    report: &mut Report,
) -> Option<RegistrationProjection> {
    let file = Fields::of(value, "$", report, "registration.not_object")?;
    match file.string(&["type"], report) {
        Some(kind) if kind == REGISTRATION_TYPE => {}
        Some(kind) => report.warning(
            "registration.type.unknown",
            "$.type",
            format!("type {kind:?} is not {REGISTRATION_TYPE}"),
        ),
        None => report.warning("registration.type.missing", "$.type", "no type"),
    }
    let name = file.string(&["name"], report);
    // A file holding only `registrations` is a domain proof (what
    // `/.well-known/agent-registration.json` needs to be), complete for that purpose.
    // Some proofs in the wild write their one entry flat, at the top level.
    let flat_entry = !file.map.contains_key("registrations")
        && file.map.contains_key("agentId")
        && file.map.contains_key("agentRegistry");
    let proof_only = name.is_none()
        && (file.map.contains_key("registrations") || flat_entry)
        && !["services", "endpoints", "description"]
            .iter()
            .any(|key| file.map.contains_key(*key));
    if proof_only {
        report.info(
            "registration.proof_only",
            "$",
            "only registrations: a domain proof, not a description of the agent",
        );
    } else if name.is_none() {
        report.error("registration.name.missing", "$.name", "no name");
    }
    if file.map.contains_key("endpoints") && !file.map.contains_key("services") {
        report.info(
            "registration.endpoints.legacy",
            "$.endpoints",
            "`endpoints` is the older name of `services`",
        );
    }
    let mut services = Vec::new();
    for (path, item) in file.array(&["services", "endpoints"], report) {
        let Some(entry) = Fields::of(item, &path, report, "registration.service.not_object") else {
            continue;
        };
        let name = entry.string(&["name", "type"], report);
        let endpoint = entry.string(&["endpoint", "url"], report);
        match (name, endpoint) {
            (Some(name), Some(endpoint)) => services.push(Service {
                name,
                endpoint,
                version: entry.string(&["version"], report),
                skills: entry.strings(&["skills"], report),
                domains: entry.strings(&["domains"], report),
                a2a_skills: entry.strings(&["a2aSkills"], report),
            }),
            _ => report.warning(
                "registration.service.incomplete",
                path,
                "a service needs a name and an endpoint",
            ),
        }
    }
    if services.is_empty() && !proof_only {
        report.warning("registration.services.missing", "$.services", "no services");
    }
    let mut registrations = Vec::new();
    for (path, item) in file.array(&["registrations"], report) {
        let Some(entry) = Fields::of(item, &path, report, "registration.entry.not_object") else {
            continue;
        };
        let id = entry
            .any(&["agentId"])
            .and_then(|(_, v)| text(v, &entry.path_of("agentId"), report));
        match (id, entry.string(&["agentRegistry"], report)) {
            (Some(agent_id), Some(agent_registry)) => registrations.push(Registration {
                agent_id,
                agent_registry,
            }),
            _ => report.warning(
                "registration.entry.incomplete",
                path,
                "a registration needs agentId and agentRegistry",
            ),
        }
    }
    if flat_entry {
        report.warning(
            "registration.entry.flat",
            "$.agentId",
            "agentId and agentRegistry at the top level, not in a registrations list; read as one entry",
        );
        let id = file
            .any(&["agentId"])
            .and_then(|(_, v)| text(v, &file.path_of("agentId"), report));
        if let (Some(agent_id), Some(agent_registry)) =
            (id, file.string(&["agentRegistry"], report))
        {
            registrations.push(Registration {
                agent_id,
                agent_registry,
            });
        }
    }
    Some(RegistrationProjection {
        name,
        description: file.string(&["description"], report),
        image: file.string(&["image"], report),
        services,
        x402_support: file.boolean(&["x402Support", "x402support", "x402"], report),
        active: file.boolean(&["active"], report),
        registrations,
        supported_trust: file.strings(
            &["supportedTrust", "supportedTrusts", "trustModels"],
            report,
        ),
    })
}
