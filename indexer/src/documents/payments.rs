//! x402 payment terms wherever a card declares them: the a2a-x402 extension (its params, or
//! each entry of an `accepts` list), vendor objects such as a top-level
//! `extensions.x402-payment`, and per-skill `extensions.pricing`. Field spellings differ between
//! vendors; each term is read under all the names seen.

use super::extension::Extension;
use super::json::{Fields, text};
use super::lint::Report;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One declared way to pay the agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentTerms {
    /// Where it was declared: `a2a-x402`, `x402-payment`, `skill-pricing` or `registration`.
    pub source: String,
    /// JSON path of the declaration.
    pub path: String,
    /// Network or chain, as written (`base-sepolia`, `84532`, `eip155:84532`).
    pub network: Option<String>,
    /// Token contract or symbol.
    pub asset: Option<String>,
    /// Recipient.
    pub pay_to: Option<String>,
    /// Amount as written (atomic units or a decimal price).
    pub amount: Option<String>,
    /// The skill the price applies to, for per-skill pricing.
    pub skill: Option<String>,
    /// The resource URL the terms are for (an x402 requirement's `resource`), which the prober
    /// asks without paying; left out of the stored form when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

const NETWORK: &[&str] = &["network", "chainId", "chain", "chain_id"];
const ASSET: &[&str] = &["asset", "token", "currency"];
const PAY_TO: &[&str] = &["payTo", "pay_to", "address", "recipient", "payee"];
const RESOURCE: &[&str] = &["resource", "resourceUrl", "url", "endpoint"];
const AMOUNT: &[&str] = &[
    "amount",
    "maxAmountRequired",
    "price",
    "priceUsdc",
    "minPayment",
];

/// A recipient as the index keeps and compares it: hex addresses in lower case (their case is
/// a checksum), anything else (a base58 address) as written.
pub fn recipient(pay_to: &str) -> String {
    let trimmed = pay_to.trim();
    if trimmed.len() > 2 && trimmed[..2].eq_ignore_ascii_case("0x") {
        trimmed.to_ascii_lowercase()
    } else {
        trimmed.to_owned()
    }
}

/// Whether an extension URI is the a2a-x402 extension (any published version).
pub fn is_x402_extension(uri: &str) -> bool {
    uri.to_ascii_lowercase().contains("a2a-x402")
}

/// Every payment term of a card.
pub(super) fn from_card(
    card: &Fields<'_>,
    extensions: &[Extension],
    report: &mut Report,
) -> Vec<PaymentTerms> {
    let mut out = Vec::new();
    for (index, extension) in extensions.iter().enumerate() {
        if !is_x402_extension(&extension.uri) {
            continue;
        }
        let path = format!("$.capabilities.extensions[{index}].params");
        match &extension.params {
            Value::Object(params) => {
                let fields = Fields {
                    map: params,
                    path: path.clone(),
                };
                let accepts = fields.array(&["accepts"], report);
                if accepts.is_empty() {
                    out.push(terms("a2a-x402", &fields, report));
                }
                for (entry_path, entry) in accepts {
                    if let Some(entry) =
                        Fields::of(entry, entry_path, report, "card.x402.not_object")
                    {
                        out.push(terms("a2a-x402", &entry, report));
                    }
                }
            }
            // The extension alone declares x402 support, without terms.
            Value::Null => out.push(PaymentTerms {
                source: "a2a-x402".into(),
                path,
                ..PaymentTerms::default()
            }),
            _ => report.warning(
                "card.x402.params",
                path,
                "x402 extension params are not an object",
            ),
        }
    }
    // Vendor objects: `extensions` as an object rather than the A2A array.
    if let Some(Value::Object(vendor)) = card.map.get("extensions")
        && let Some(value) = vendor.get("x402-payment").or_else(|| vendor.get("x402"))
        && let Some(fields) = Fields::of(
            value,
            "$.extensions.x402-payment",
            report,
            "card.x402.not_object",
        )
    {
        out.push(terms("x402-payment", &fields, report));
    }
    if let Some(Value::Array(skills)) = card.map.get("skills") {
        for (index, skill) in skills.iter().enumerate() {
            let Some(pricing) = skill.get("extensions").and_then(|e| e.get("pricing")) else {
                continue;
            };
            let path = format!("$.skills[{index}].extensions.pricing");
            if let Some(fields) = Fields::of(pricing, path, report, "card.x402.not_object") {
                let mut found = terms("skill-pricing", &fields, report);
                found.skill = skill.get("id").and_then(Value::as_str).map(str::to_string);
                out.push(found);
            }
        }
    }
    out
}

/// The terms in one object, under any of the known spellings.
pub(super) fn terms(source: &str, fields: &Fields<'_>, report: &mut Report) -> PaymentTerms {
    let read = |keys: &[&'static str], report: &mut Report| {
        fields
            .any(keys)
            .and_then(|(key, value)| text(value, &fields.path_of(key), report))
    };
    PaymentTerms {
        source: source.to_string(),
        path: fields.path.clone(),
        network: read(NETWORK, report),
        asset: read(ASSET, report),
        pay_to: read(PAY_TO, report),
        amount: read(AMOUNT, report),
        skill: None,
        // A string, or version 2's `{url, description, mimeType}`; anything else is no resource.
        resource: fields.any(RESOURCE).and_then(|(_, value)| {
            value
                .as_str()
                .or_else(|| value.get("url").and_then(Value::as_str))
                .map(str::to_string)
        }),
    }
}
