//! Masumi's on-chain registry metadata: the CIP-25 object minted with each agent's NFT, read
//! into one shape whichever variant wrote it. Three are in use, told apart by their keys (their
//! `metadata_version` values overlap): the registry's first shape (`api_base_url`, `capability`,
//! `author`, `legal`, `agentPricing`), the payment service's version 2 (`supported_payment_sources`,
//! `verifications`) and the A2A standard (MIP-002: `api_url`, `agent_card_url`,
//! `a2a_protocol_versions`). Cardano limits a metadata string to 64 bytes, so longer strings
//! are arrays of chunks, joined here; numbers written as strings and strings as numbers are
//! both accepted. Fields no variant defines are kept as they are and reported.

use super::json::Fields;
use super::lint::Report;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Cardano's limit on one metadata string, in bytes.
pub const CHUNK_BYTES: usize = 64;

/// Keys the three variants define; anything else is kept in [`MasumiMetadata::unknown`].
const KNOWN: &[&str] = &[
    "name",
    "description",
    "image",
    "tags",
    "type",
    "metadata_version",
    "api_base_url",
    "api_url",
    "agent_card_url",
    "a2a_protocol_versions",
    "author",
    "legal",
    "capability",
    "example_output",
    "agentPricing",
    "pricing",
    "supported_payment_sources",
    "verifications",
];

/// An agent's registry metadata, in one shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MasumiMetadata {
    /// Which variant wrote it: `v1`, `v2` (the payment service's) or `a2a` (MIP-002).
    pub variant: String,
    /// `metadata_version` as written.
    pub metadata_version: Option<String>,
    /// `type`, when given (inbox agents say `MasumiInboxV1`).
    pub kind: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `image`: a picture of the agent.
    pub image: Option<String>,
    /// `api_base_url` (v1, v2) or `api_url` (A2A).
    pub api_url: Option<String>,
    /// The A2A Agent Card's URL (A2A).
    pub agent_card_url: Option<String>,
    /// `tags`: what it does, in words.
    pub tags: Vec<String>,
    /// `a2a_protocol_versions`: the A2A versions it speaks (A2A).
    pub a2a_protocol_versions: Vec<String>,
    /// `capability`.
    pub capability: Option<Capability>,
    /// `author`.
    pub author: Option<Author>,
    /// `legal`.
    pub legal: Option<Legal>,
    /// `agentPricing` (or `pricing`).
    pub pricing: Option<Pricing>,
    /// `example_output`.
    pub example_outputs: Vec<ExampleOutput>,
    /// The payment service's `supported_payment_sources`, as written.
    pub payment_sources: Option<Value>,
    /// The payment service's `verifications`, as written.
    pub verifications: Option<Value>,
    /// Fields no variant defines, as written.
    pub unknown: Map<String, Value>,
}

/// `capability`: what the agent runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capability {
    /// `name`.
    pub name: Option<String>,
    /// `version`.
    pub version: Option<String>,
}

/// `author`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    /// `name`.
    pub name: Option<String>,
    /// `contact_email` (or `contact`).
    pub contact_email: Option<String>,
    /// `contact_other`.
    pub contact_other: Option<String>,
    /// `organization`.
    pub organization: Option<String>,
}

/// `legal`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Legal {
    /// `privacy_policy`: its URL.
    pub privacy_policy: Option<String>,
    /// `terms`: its URL.
    pub terms: Option<String>,
    /// `other`.
    pub other: Option<String>,
}

/// `agentPricing`: `Fixed` with its prices, `Free`, or `Dynamic`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pricing {
    /// `pricingType`: `Fixed`, `Free` or `Dynamic`.
    pub pricing_type: Option<String>,
    /// `fixedPricing`.
    pub fixed: Vec<Price>,
}

/// One fixed price: an amount of a unit (`""` or `lovelace` for ada, else a token's unit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Price {
    /// A whole number of the unit.
    pub amount: String,
    /// `lovelace` (or `""`) for ada, else the token's unit.
    pub unit: String,
}

/// `example_output`: a sample of what the agent produces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExampleOutput {
    /// `name`.
    pub name: Option<String>,
    /// `mime_type`.
    pub mime_type: Option<String>,
    /// `url`.
    pub url: Option<String>,
}

/// Reads `value` (the asset's CIP-25 object) into [`MasumiMetadata`], with what was wrong.
pub fn parse_masumi_metadata(value: &Value) -> (MasumiMetadata, Report) {
    let mut report = Report::default();
    let Some(fields) = Fields::of(value, "$", &mut report, "masumi.metadata.type") else {
        return (MasumiMetadata::default(), report);
    };
    check_chunks(value, "$", &mut report);
    let r = &mut report;
    let string = |keys: &[&'static str], r: &mut Report| fields.string(keys, r);
    let mut meta = MasumiMetadata {
        metadata_version: string(&["metadata_version"], r),
        kind: string(&["type"], r),
        name: string(&["name"], r),
        description: string(&["description"], r),
        image: string(&["image"], r),
        api_url: string(&["api_base_url", "api_url"], r),
        agent_card_url: string(&["agent_card_url"], r),
        tags: fields.strings(&["tags"], r),
        a2a_protocol_versions: fields.strings(&["a2a_protocol_versions"], r),
        ..MasumiMetadata::default()
    };
    meta.capability = fields.object(&["capability"], r).map(|c| Capability {
        name: c.string(&["name"], r),
        version: c.string(&["version"], r),
    });
    meta.author = fields.object(&["author"], r).map(|a| Author {
        name: a.string(&["name"], r),
        contact_email: a.string(&["contact_email", "contact"], r),
        contact_other: a.string(&["contact_other"], r),
        organization: a.string(&["organization"], r),
    });
    meta.legal = fields.object(&["legal"], r).map(|l| Legal {
        privacy_policy: l.string(&["privacy_policy"], r),
        terms: l.string(&["terms"], r),
        other: l.string(&["other"], r),
    });
    meta.pricing = fields
        .object(&["agentPricing", "pricing"], r)
        .map(|p| pricing(&p, r));
    for (path, item) in fields.array(&["example_output"], r) {
        if let Some(o) = Fields::of(item, path, r, "json.type.object") {
            meta.example_outputs.push(ExampleOutput {
                name: o.string(&["name"], r),
                mime_type: o.string(&["mime_type", "mimeType"], r),
                url: o.string(&["url"], r),
            });
        }
    }
    meta.payment_sources = fields
        .any(&["supported_payment_sources"])
        .map(|(_, v)| v.clone());
    meta.verifications = fields.any(&["verifications"]).map(|(_, v)| v.clone());
    meta.unknown = fields
        .map
        .iter()
        .filter(|(key, _)| !KNOWN.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    meta.variant = variant(&meta).to_string();
    lint(&meta, r);
    (meta, report)
}

fn pricing(fields: &Fields<'_>, report: &mut Report) -> Pricing {
    let fixed = fields
        .array(&["fixedPricing", "fixed_pricing"], report)
        .into_iter()
        .filter_map(|(path, item)| {
            let price = Fields::of(item, &path, report, "json.type.object")?;
            let amount = price.string(&["amount"], report)?;
            if amount.parse::<u128>().is_err() {
                report.warning(
                    "masumi.pricing.amount",
                    price.path_of("amount"),
                    format!("amount {amount:?} is not a whole number of the unit"),
                );
                return None;
            }
            let unit = price.string(&["unit"], report).unwrap_or_default();
            Some(Price { amount, unit })
        })
        .collect();
    Pricing {
        pricing_type: fields.string(&["pricingType", "pricing_type"], report),
        fixed,
    }
}

/// Which variant the keys say wrote it.
fn variant(meta: &MasumiMetadata) -> &'static str {
    if meta.agent_card_url.is_some() || !meta.a2a_protocol_versions.is_empty() {
        "a2a"
    } else if meta.payment_sources.is_some() || meta.verifications.is_some() {
        "v2"
    } else {
        "v1"
    }
}

fn lint(meta: &MasumiMetadata, report: &mut Report) {
    if meta.name.as_deref().is_none_or(|n| n.trim().is_empty()) {
        report.warning("masumi.name.missing", "$.name", "the agent has no name");
    }
    for (key, url) in [
        ("api_url", &meta.api_url),
        ("agent_card_url", &meta.agent_card_url),
        ("image", &meta.image),
    ] {
        if let Some(url) = url
            && !url::Url::parse(url)
                .is_ok_and(|u| matches!(u.scheme(), "https" | "http" | "ipfs" | "ar" | "data"))
        {
            report.warning(
                "masumi.url.invalid",
                format!("$.{key}"),
                format!("{url:?} is not a URL agentindex can fetch"),
            );
        }
    }
    if !meta.unknown.is_empty() {
        let names: Vec<&str> = meta.unknown.keys().map(String::as_str).collect();
        report.info(
            "masumi.field.unknown",
            "$",
            format!(
                "fields no Masumi metadata variant defines, kept as written: {}",
                names.join(", ")
            ),
        );
    }
}

/// Reports every string longer than Cardano allows in one metadata value (a provider shows such
/// metadata only if a chain accepted it, so this finds a malformed emulation or a transcription).
fn check_chunks(value: &Value, path: &str, report: &mut Report) {
    match value {
        Value::String(s) if s.len() > CHUNK_BYTES => report.warning(
            "masumi.chunk.too_long",
            path,
            format!(
                "a string of {} bytes; on-chain metadata strings hold {CHUNK_BYTES} at most",
                s.len()
            ),
        ),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_chunks(item, &format!("{path}[{i}]"), report);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                check_chunks(item, &format!("{path}.{key}"), report);
            }
        }
        _ => {}
    }
}
