//! A2A Agent Cards of v1.0, v0.3 and hybrids read into one projection: interfaces,
//! capabilities with extensions, security schemes, skills, payment terms and signatures. A field
//! that breaks the specification is linted and left out; the rest of the card still counts.

pub use super::extension::Extension;
use super::json::{Fields, parse};
use super::lint::Report;
use super::payments::{self, PaymentTerms};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which card shape a document follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CardShape {
    /// `supportedInterfaces` (A2A v1.0).
    V1,
    /// Top-level `url` and `preferredTransport` (A2A v0.3 and earlier).
    V03,
    /// Both.
    Hybrid,
    /// Neither: no way to reach the agent is declared.
    Unknown,
}

/// One way to reach the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interface {
    /// Endpoint URL.
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` (upper case as the spec writes them).
    pub binding: String,
    /// A2A protocol version of this interface, when stated.
    pub version: Option<String>,
}

/// Optional protocol features.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Streaming responses.
    pub streaming: Option<bool>,
    /// Push notifications.
    pub push_notifications: Option<bool>,
    /// An extended card for authenticated clients.
    pub extended_agent_card: Option<bool>,
    /// Protocol extensions.
    pub extensions: Vec<Extension>,
}

/// A named security scheme and its kind (`apiKey`, `http`, `oauth2`, `openIdConnect`,
/// `mutualTLS`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecurityScheme {
    /// The name the card gives it.
    pub name: String,
    /// Its kind.
    pub kind: String,
}

/// One skill.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skill {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example prompts.
    pub examples: Vec<String>,
    /// Accepted media types, when they differ from the card's defaults.
    pub input_modes: Vec<String>,
    /// Produced media types, when they differ from the card's defaults.
    pub output_modes: Vec<String>,
}

/// A detached JWS over the canonical card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardSignature {
    /// Base64url protected header.
    pub protected: String,
    /// Base64url signature.
    pub signature: String,
    /// Unprotected header, when given.
    pub header: Option<Value>,
}

/// Everything discovery needs from a card, whatever its version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardProjection {
    /// The shape it follows.
    pub shape: CardShape,
    /// Agent name.
    pub name: Option<String>,
    /// Agent description.
    pub description: Option<String>,
    /// The agent's own version.
    pub version: Option<String>,
    /// A2A protocol versions declared.
    pub protocol_versions: Vec<String>,
    /// Provider organisation.
    pub provider: Option<String>,
    /// Provider URL.
    pub provider_url: Option<String>,
    /// Documentation link.
    pub documentation_url: Option<String>,
    /// Icon link.
    pub icon_url: Option<String>,
    /// Ways to reach the agent, preferred first.
    pub interfaces: Vec<Interface>,
    /// Optional features and extensions.
    pub capabilities: Capabilities,
    /// Security schemes.
    pub security_schemes: Vec<SecurityScheme>,
    /// Default accepted media types.
    pub default_input_modes: Vec<String>,
    /// Default produced media types.
    pub default_output_modes: Vec<String>,
    /// Skills.
    pub skills: Vec<Skill>,
    /// x402 payment terms declared anywhere in the card.
    pub payments: Vec<PaymentTerms>,
    /// Signatures.
    pub signatures: Vec<CardSignature>,
}

/// Fields the A2A specifications define at the top level of a card (both versions).
const KNOWN_FIELDS: &[&str] = &[
    "name",
    "description",
    "version",
    "protocolVersion",
    "protocolVersions",
    "provider",
    "documentationUrl",
    "iconUrl",
    "supportedInterfaces",
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "capabilities",
    "securitySchemes",
    "security",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "signatures",
    "supportsAuthenticatedExtendedCard",
    "extensions",
];

/// Reads a card from its bytes; `None` (with the reason in `report`) when it is not a JSON
/// object at all.
pub fn parse_card(bytes: &[u8], report: &mut Report) -> Option<CardProjection> {
    let value = parse(bytes, report)?;
    read_card(&value, report)
}

/// Reads a card from parsed JSON.
pub fn read_card(value: &Value, report: &mut Report) -> Option<CardProjection> {
    let card = Fields::of(value, "$", report, "card.not_object")?;
    for key in card.map.keys() {
        if !KNOWN_FIELDS.contains(&key.as_str()) {
            report.info(
                "card.field.unknown",
                card.path_of(key),
                format!("field {key:?} is not in the A2A specification; kept as is"),
            );
        }
    }
    let name = card.string(&["name"], report);
    if name.as_deref().is_none_or(|n| n.trim().is_empty()) {
        report.error("card.name.missing", "$.name", "a card must name its agent");
    }
    let description = card.string(&["description"], report);
    if description.is_none() {
        report.warning(
            "card.description.missing",
            "$.description",
            "no description",
        );
    }
    let mut protocol_versions = card.strings(&["protocolVersions"], report);
    if let Some(version) = card.string(&["protocolVersion"], report) {
        protocol_versions.insert(0, version);
    }

    let (shape, interfaces) = interfaces(&card, report);
    if interfaces.is_empty() {
        report.error(
            "card.interfaces.missing",
            "$.supportedInterfaces",
            "no usable interface: neither supportedInterfaces nor url",
        );
    }
    for interface in &interfaces {
        if let Some(version) = &interface.version
            && !protocol_versions.contains(version)
        {
            protocol_versions.push(version.clone());
        }
    }

    let mut capabilities = Capabilities::default();
    if let Some(caps) = card.object(&["capabilities"], report) {
        capabilities.streaming = caps.boolean(&["streaming"], report);
        capabilities.push_notifications = caps.boolean(&["pushNotifications"], report);
        capabilities.extended_agent_card = caps.boolean(&["extendedAgentCard"], report);
        for (path, item) in caps.array(&["extensions"], report) {
            let Some(ext) = Fields::of(item, &path, report, "card.extension.not_object") else {
                continue;
            };
            let Some(uri) = ext.string(&["uri"], report) else {
                report.warning(
                    "card.extension.uri.missing",
                    ext.path_of("uri"),
                    "extension without uri",
                );
                continue;
            };
            capabilities.extensions.push(Extension {
                uri,
                description: ext.string(&["description"], report),
                required: ext.boolean(&["required"], report).unwrap_or(false),
                params: ext.map.get("params").cloned().unwrap_or(Value::Null),
            });
        }
    } else if !card.map.contains_key("capabilities") {
        report.warning(
            "card.capabilities.missing",
            "$.capabilities",
            "no capabilities object",
        );
    }
    if capabilities.extended_agent_card.is_none() {
        capabilities.extended_agent_card =
            card.boolean(&["supportsAuthenticatedExtendedCard"], report);
    }

    let security_schemes = security_schemes(&card, report);
    let default_input_modes = card.strings(&["defaultInputModes"], report);
    let default_output_modes = card.strings(&["defaultOutputModes"], report);
    if default_input_modes.is_empty() || default_output_modes.is_empty() {
        report.warning(
            "card.modes.missing",
            "$.defaultInputModes",
            "default input or output modes are missing",
        );
    }
    let skills = skills(&card, report);
    let provider = card.object(&["provider"], report);
    let signatures = signatures(&card, report);
    let payments = payments::from_card(&card, &capabilities.extensions, report);
    Some(CardProjection {
        shape,
        name,
        description,
        version: card.string(&["version"], report),
        protocol_versions,
        provider: provider
            .as_ref()
            .and_then(|p| p.string(&["organization"], report)),
        provider_url: provider.as_ref().and_then(|p| p.string(&["url"], report)),
        documentation_url: card.string(&["documentationUrl"], report),
        icon_url: card.string(&["iconUrl"], report),
        interfaces,
        capabilities,
        security_schemes,
        default_input_modes,
        default_output_modes,
        skills,
        payments,
        signatures,
    })
}

/// The card's interfaces, `supportedInterfaces` first when it is non-empty.
fn interfaces(card: &Fields<'_>, report: &mut Report) -> (CardShape, Vec<Interface>) {
    let mut declared = Vec::new();
    for (path, item) in card.array(&["supportedInterfaces"], report) {
        let Some(entry) = Fields::of(item, &path, report, "card.interface.not_object") else {
            continue;
        };
        if let Some(interface) = interface(
            &entry,
            &["protocolBinding", "transport"],
            entry.string(&["protocolVersion"], report),
            report,
        ) {
            declared.push(interface);
        }
    }
    let mut legacy = Vec::new();
    if card.map.contains_key("url") {
        let version = card.string(&["protocolVersion"], report);
        if let Some(interface) = interface(card, &["preferredTransport"], version.clone(), report) {
            legacy.push(interface);
        }
        for (path, item) in card.array(&["additionalInterfaces"], report) {
            let Some(entry) = Fields::of(item, &path, report, "card.interface.not_object") else {
                continue;
            };
            if let Some(interface) = interface(&entry, &["transport"], version.clone(), report)
                && !legacy.contains(&interface)
            {
                legacy.push(interface);
            }
        }
    }
    let shape = match (
        card.map.contains_key("supportedInterfaces"),
        card.map.contains_key("url"),
    ) {
        (true, true) => CardShape::Hybrid,
        (true, false) => CardShape::V1,
        (false, true) => CardShape::V03,
        (false, false) => CardShape::Unknown,
    };
    if declared.is_empty() {
        (shape, legacy)
    } else {
        (shape, declared)
    }
}

/// One interface from an object with `url` and a binding under one of `binding_keys`.
fn interface(
    entry: &Fields<'_>,
    binding_keys: &[&'static str],
    version: Option<String>,
    report: &mut Report,
) -> Option<Interface> {
    let path = entry.path_of("url");
    let Some(url) = entry.string(&["url"], report) else {
        report.warning("card.interface.url.missing", path, "interface without url");
        return None;
    };
    match url::Url::parse(&url) {
        Ok(parsed) if matches!(parsed.scheme(), "https" | "http" | "grpc" | "grpcs") => {}
        Ok(parsed) => {
            report.warning(
                "card.interface.url.scheme",
                path,
                format!("interface URL with scheme {:?}", parsed.scheme()),
            );
            return None;
        }
        Err(error) => {
            report.warning(
                "card.interface.url.invalid",
                path,
                format!("interface URL {url:?} is not a URL: {error}"),
            );
            return None;
        }
    }
    let binding = entry
        .string(binding_keys, report)
        .map(|b| b.trim().to_ascii_uppercase())
        .unwrap_or_else(|| "JSONRPC".to_string());
    if !matches!(binding.as_str(), "JSONRPC" | "GRPC" | "HTTP+JSON") {
        report.warning(
            "card.interface.binding.unknown",
            entry.path_of(binding_keys[0]),
            format!("binding {binding:?} is not JSONRPC, GRPC or HTTP+JSON"),
        );
    }
    Some(Interface {
        url,
        binding,
        version,
    })
}

/// Security schemes in either the v0.3 (OpenAPI `type`) or the v1.0 (one wrapper key per kind)
/// form.
fn security_schemes(card: &Fields<'_>, report: &mut Report) -> Vec<SecurityScheme> {
    let Some(schemes) = card.object(&["securitySchemes"], report) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in schemes.map {
        let path = schemes.path_of(name);
        let Some(scheme) = Fields::of(value, &path, report, "card.security.not_object") else {
            continue;
        };
        let kind = if let Some(kind) = scheme.string(&["type"], report) {
            Some(kind)
        } else {
            scheme.map.keys().find_map(|key| {
                Some(
                    match key.as_str() {
                        "apiKeySecurityScheme" => "apiKey",
                        "httpAuthSecurityScheme" => "http",
                        "oauth2SecurityScheme" => "oauth2",
                        "openIdConnectSecurityScheme" => "openIdConnect",
                        "mtlsSecurityScheme" => "mutualTLS",
                        _ => return None,
                    }
                    .to_string(),
                )
            })
        };
        match kind {
            Some(kind) => out.push(SecurityScheme {
                name: name.clone(),
                kind,
            }),
            None => report.warning(
                "card.security.kind.unknown",
                path,
                "security scheme of no known kind",
            ),
        }
    }
    out
}

/// The card's skills; a skill without id or name is linted and left out.
fn skills(card: &Fields<'_>, report: &mut Report) -> Vec<Skill> {
    if !card.map.contains_key("skills") {
        report.warning("card.skills.missing", "$.skills", "no skills");
    }
    let mut out: Vec<Skill> = Vec::new();
    for (path, item) in card.array(&["skills"], report) {
        let Some(skill) = Fields::of(item, &path, report, "card.skill.not_object") else {
            continue;
        };
        let id = skill.string(&["id"], report);
        let name = skill.string(&["name"], report);
        let (Some(id), Some(name)) = (id, name) else {
            report.warning(
                "card.skill.incomplete",
                &path,
                "a skill needs an id and a name",
            );
            continue;
        };
        if out.iter().any(|s| s.id == id) {
            report.warning(
                "card.skill.id.duplicate",
                skill.path_of("id"),
                format!("skill id {id:?} appears twice"),
            );
        }
        out.push(Skill {
            id,
            name,
            description: skill.string(&["description"], report),
            tags: skill.strings(&["tags"], report),
            examples: skill.strings(&["examples"], report),
            input_modes: skill.strings(&["inputModes"], report),
            output_modes: skill.strings(&["outputModes"], report),
        });
    }
    out
}

/// The card's signatures.
fn signatures(card: &Fields<'_>, report: &mut Report) -> Vec<CardSignature> {
    let mut out = Vec::new();
    for (path, item) in card.array(&["signatures"], report) {
        let Some(signature) = Fields::of(item, &path, report, "card.signature.not_object") else {
            continue;
        };
        match (
            signature.string(&["protected"], report),
            signature.string(&["signature"], report),
        ) {
            (Some(protected), Some(value)) => out.push(CardSignature {
                protected,
                signature: value,
                header: signature.map.get("header").cloned(),
            }),
            _ => report.warning(
                "card.signature.incomplete",
                path,
                "a signature needs protected and signature",
            ),
        }
    }
    out
}
