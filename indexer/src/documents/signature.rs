//! Agent Card signatures: detached JWS over the RFC 8785 (JCS) canonical card without its
//! `signatures`. Only ES256, ES384, EdDSA, RS256 and PS256 are accepted (never `none` or HMAC).
//! Keys come from the configured trusted keys, or from the `jku` of the protected header when it
//! lies on the card's own origin. The official SDKs canonicalise slightly differently (the
//! Python one drops empty values and escapes non-ASCII, the JS one drops empty values and
//! protobuf defaults), so each of those variants is tried, also cut down to the v1.0 schema:
//! the SDKs sign the v1.0 form, and their servers may add v0.3 fields for old clients. As with
//! the SDKs' own verifiers, fields outside the v1.0 schema are then not covered by the signature.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use url::Url;

/// What the signatures of a card amount to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SignatureStatus {
    /// The card carries no signature.
    Unsigned,
    /// A signature verified with a key from `source` (`trusted` or the jku URL).
    Valid {
        /// The key id.
        kid: Option<String>,
        /// The algorithm.
        alg: String,
        /// Where the key came from.
        source: String,
    },
    /// A signature is malformed or does not match the card.
    Invalid {
        /// Why.
        reason: String,
    },
    /// No key could be found to check the signature with.
    KeyUnavailable {
        /// Why.
        reason: String,
    },
    /// The algorithm is not one this indexer accepts.
    Unsupported {
        /// The algorithm named.
        alg: String,
    },
}

impl SignatureStatus {
    /// The short name stored and shown (`unsigned`, `valid`, `invalid`, `key_unavailable`,
    /// `unsupported`).
    pub fn as_str(&self) -> &'static str {
        match self {
            SignatureStatus::Unsigned => "unsigned",
            SignatureStatus::Valid { .. } => "valid",
            SignatureStatus::Invalid { .. } => "invalid",
            SignatureStatus::KeyUnavailable { .. } => "key_unavailable",
            SignatureStatus::Unsupported { .. } => "unsupported",
        }
    }

    /// Rank for choosing the card's status among several signatures: valid wins.
    fn rank(&self) -> u8 {
        match self {
            SignatureStatus::Valid { .. } => 4,
            SignatureStatus::Invalid { .. } => 3,
            SignatureStatus::KeyUnavailable { .. } => 2,
            SignatureStatus::Unsupported { .. } => 1,
            SignatureStatus::Unsigned => 0,
        }
    }
}

/// The protected header fields that matter here.
#[derive(Debug, Deserialize)]
struct Protected {
    alg: Option<String>,
    kid: Option<String>,
    jku: Option<String>,
}

/// Verifies the signatures of `card` (the parsed card, `signatures` included). `origin` is the
/// URL the card came from, for `jku`; `fetch_jwks` fetches a key set from a URL.
pub async fn verify_card<F, Fut>(
    card: &Value,
    origin: Option<&Url>,
    trusted: &[Jwk],
    fetch_jwks: F,
) -> SignatureStatus
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Result<JwkSet, String>>,
{
    let Some(signatures) = card.get("signatures").and_then(Value::as_array) else {
        return SignatureStatus::Unsigned;
    };
    if signatures.is_empty() {
        return SignatureStatus::Unsigned;
    }
    let payloads = canonical_variants(card);
    let mut best = SignatureStatus::Unsigned;
    for signature in signatures {
        let status = verify_one(signature, &payloads, origin, trusted, &fetch_jwks).await;
        if status.rank() > best.rank() {
            best = status;
        }
        if matches!(best, SignatureStatus::Valid { .. }) {
            break;
        }
    }
    best
}

async fn verify_one<F, Fut>(
    signature: &Value,
    payloads: &[Vec<u8>],
    origin: Option<&Url>,
    trusted: &[Jwk],
    fetch_jwks: &F,
) -> SignatureStatus
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Result<JwkSet, String>>,
{
    let invalid = |reason: &str| SignatureStatus::Invalid {
        reason: reason.to_string(),
    };
    let (Some(protected), Some(value)) = (
        signature.get("protected").and_then(Value::as_str),
        signature.get("signature").and_then(Value::as_str),
    ) else {
        return invalid("a signature needs protected and signature strings");
    };
    let Ok(header_bytes) = URL_SAFE_NO_PAD.decode(protected.trim_end_matches('=')) else {
        return invalid("the protected header is not base64url");
    };
    let Ok(header) = serde_json::from_slice::<Protected>(&header_bytes) else {
        return invalid("the protected header is not a JSON object");
    };
    // An unprotected header may carry kid or jku too; the protected one wins.
    let unprotected = signature.get("header");
    let field = |name: &str| {
        unprotected
            .and_then(|h| h.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let kid = header.kid.clone().or_else(|| field("kid"));
    let jku = header.jku.clone().or_else(|| field("jku"));
    let Some(alg_name) = header.alg else {
        return invalid("the protected header names no alg");
    };
    let Some(alg) = allowed(&alg_name) else {
        return SignatureStatus::Unsupported { alg: alg_name };
    };

    let mut candidates: Vec<(Jwk, String)> = trusted
        .iter()
        .filter(|k| kid.is_none() || k.common.key_id == kid)
        .map(|k| (k.clone(), "trusted".to_string()))
        .collect();
    let mut unavailable = String::from("no trusted key matches and the card names no jku");
    if candidates.is_empty()
        && let Some(jku) = jku
    {
        match same_origin(&jku, origin) {
            Err(reason) => unavailable = reason,
            Ok(url) => match fetch_jwks(url.clone()).await {
                Ok(set) => {
                    candidates.extend(
                        set.keys
                            .into_iter()
                            .filter(|k| kid.is_none() || k.common.key_id == kid)
                            .map(|k| (k, url.to_string())),
                    );
                    unavailable = format!("no key with kid {kid:?} at {url}");
                }
                Err(error) => unavailable = format!("fetching {url}: {error}"),
            },
        }
    }
    if candidates.is_empty() {
        return SignatureStatus::KeyUnavailable {
            reason: unavailable,
        };
    }
    for (jwk, source) in &candidates {
        let Ok(key) = jsonwebtoken::DecodingKey::from_jwk(jwk) else {
            continue;
        };
        for payload in payloads {
            let message = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
            if jsonwebtoken::crypto::verify(value, message.as_bytes(), &key, alg).unwrap_or(false) {
                return SignatureStatus::Valid {
                    kid: kid.clone(),
                    alg: alg_name,
                    source: source.clone(),
                };
            }
        }
    }
    invalid("the signature does not match the card")
}

/// The algorithms accepted.
fn allowed(name: &str) -> Option<Algorithm> {
    match name {
        "ES256" => Some(Algorithm::ES256),
        "ES384" => Some(Algorithm::ES384),
        "EdDSA" => Some(Algorithm::EdDSA),
        "RS256" => Some(Algorithm::RS256),
        "PS256" => Some(Algorithm::PS256),
        _ => None,
    }
}

/// `jku` as a URL on the card's own origin.
fn same_origin(jku: &str, origin: Option<&Url>) -> Result<Url, String> {
    let url = Url::parse(jku).map_err(|e| format!("jku {jku:?} is not a URL: {e}"))?;
    let Some(origin) = origin else {
        return Err("the card has no origin to check jku against".into());
    };
    if url.origin() != origin.origin() {
        return Err(format!(
            "jku {url} is not on the card's origin {}",
            origin.origin().ascii_serialization()
        ));
    }
    Ok(url)
}

/// The canonical bytes signers may have signed: JCS of the card without `signatures`, as is,
/// with empty values dropped (also with non-ASCII escaped), and with protobuf defaults dropped.
pub fn canonical_variants(card: &Value) -> Vec<Vec<u8>> {
    let mut unsigned = card.clone();
    if let Some(map) = unsigned.as_object_mut() {
        map.remove("signatures");
    }
    let mut variants = Vec::new();
    let mut push = |bytes: Vec<u8>| {
        if !variants.contains(&bytes) {
            variants.push(bytes);
        }
    };
    if let Ok(bytes) = serde_jcs::to_vec(&unsigned) {
        push(bytes);
    }
    let pruned = drop_empty(&unsigned, false).unwrap_or(Value::Object(Default::default()));
    if let Ok(bytes) = serde_jcs::to_vec(&pruned) {
        push(escape_non_ascii(&bytes));
        push(bytes);
    }
    // Protobuf-based serialisers also leave out `false` and `0`.
    let defaults = drop_empty(&unsigned, true).unwrap_or(Value::Object(Default::default()));
    if let Ok(bytes) = serde_jcs::to_vec(&defaults) {
        push(bytes);
    }
    // The SDKs sign the v1.0 form; a server that adds v0.3 fields for old clients serves more
    // than was signed, so the card is also tried cut down to the v1.0 schema.
    let v1 = v1_fields(&unsigned);
    for defaults in [false, true] {
        let cut = drop_empty(&v1, defaults).unwrap_or(Value::Object(Default::default()));
        if let Ok(bytes) = serde_jcs::to_vec(&cut) {
            push(bytes);
        }
    }
    variants
}

/// Fields of the A2A v1.0 `AgentCard` schema, per object kind.
const V1_CARD: &[&str] = &[
    "name",
    "description",
    "supportedInterfaces",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "iconUrl",
];
const V1_INTERFACE: &[&str] = &["url", "protocolBinding", "tenant", "protocolVersion"];
const V1_PROVIDER: &[&str] = &["url", "organization"];
const V1_CAPABILITIES: &[&str] = &[
    "streaming",
    "pushNotifications",
    "extensions",
    "extendedAgentCard",
];
const V1_EXTENSION: &[&str] = &["uri", "description", "required", "params"];
const V1_SKILL: &[&str] = &[
    "id",
    "name",
    "description",
    "tags",
    "examples",
    "inputModes",
    "outputModes",
    "securityRequirements",
];

/// The card with only the fields the v1.0 schema defines (security schemes and extension
/// params are kept whole).
fn v1_fields(card: &Value) -> Value {
    fn keep(value: &Value, fields: &[&str]) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| fields.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    fn each(value: &Value, fields: &[&str]) -> Value {
        match value {
            Value::Array(items) => Value::Array(items.iter().map(|i| keep(i, fields)).collect()),
            other => other.clone(),
        }
    }
    let mut out = keep(card, V1_CARD);
    if let Value::Object(map) = &mut out {
        if let Some(v) = map.get_mut("supportedInterfaces") {
            *v = each(v, V1_INTERFACE);
        }
        if let Some(v) = map.get_mut("provider") {
            *v = keep(v, V1_PROVIDER);
        }
        if let Some(v) = map.get_mut("skills") {
            *v = each(v, V1_SKILL);
        }
        if let Some(caps) = map.get_mut("capabilities") {
            *caps = keep(caps, V1_CAPABILITIES);
            if let Some(ext) = caps.get_mut("extensions") {
                *ext = each(ext, V1_EXTENSION);
            }
        }
    }
    out
}

/// The value without empty strings, arrays, objects and nulls, recursively (`None` when the
/// value itself is empty); with `defaults`, without `false` and `0` either.
fn drop_empty(value: &Value, defaults: bool) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Bool(false) if defaults => None,
        Value::Number(n) if defaults && n.as_f64() == Some(0.0) => None,
        Value::Array(items) => {
            let kept: Vec<Value> = items
                .iter()
                .filter_map(|v| drop_empty(v, defaults))
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| drop_empty(v, defaults).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

/// JSON text with every non-ASCII character written as `\uXXXX` (surrogate pairs beyond the
/// BMP), as Python's `json.dumps(ensure_ascii=True)` writes it.
fn escape_non_ascii(json: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(json);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into_bytes()
}
