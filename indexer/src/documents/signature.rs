//! Agent Card signatures: detached JWS over the RFC 8785 (JCS) canonical card without its
//! `signatures`. Only ES256, ES384, EdDSA, RS256 and PS256 are accepted (never `none` or HMAC).
//! Keys come from the configured trusted keys, or from the `jku` of the protected header when it
//! lies on the card's own origin. The official SDKs canonicalise slightly differently (the
//! Python one drops empty values and escapes non-ASCII, the JS one drops empty values and
//! protobuf defaults), so each of those variants is tried, also cut down to the v1.0 schema:
//! the SDKs sign the v1.0 form, and their servers may add v0.3 fields for old clients. As with
//! the SDKs' own verifiers, fields outside the v1.0 schema are then not covered by the signature.
//!
//! A card is hostile input, so what its signatures may cost is bounded: at most
//! [`MAX_SIGNATURES`] signatures read, [`MAX_JKU_FETCHES`] key sets fetched and
//! [`MAX_KEYS_PER_SIGNATURE`] keys tried per signature; what is left out is reported as a
//! [`Cap`], never an error. Canonicalising and the signature arithmetic run on the blocking
//! pool, off the async threads that serve everything else.

pub use super::canonical::canonical_variants;
use super::fetch::FetchError;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use url::Url;

/// Signatures read per card: the A2A spec expects one per signer, and each costs a
/// verification per key and canonical form.
pub const MAX_SIGNATURES: usize = 8;
/// Distinct `jku` key sets fetched per card, so one card cannot send the fetcher to many URLs.
pub const MAX_JKU_FETCHES: usize = 2;
/// Keys tried per signature (a `kid` normally narrows the set to one).
pub const MAX_KEYS_PER_SIGNATURE: usize = 16;

/// A bound a card's signatures reached; what was beyond it was not looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// More than [`MAX_SIGNATURES`] signatures; `found` in all.
    Signatures {
        /// How many the card carries.
        found: usize,
    },
    /// A signature's `jku` was not fetched: [`MAX_JKU_FETCHES`] key sets were already.
    JkuFetches,
    /// More than [`MAX_KEYS_PER_SIGNATURE`] candidate keys for one signature; `found` in all.
    Keys {
        /// How many keys matched.
        found: usize,
    },
}

impl std::fmt::Display for Cap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cap::Signatures { found } => write!(
                f,
                "the card carries {found} signatures; only the first {MAX_SIGNATURES} are checked (the cap on signatures per card)"
            ),
            Cap::JkuFetches => write!(
                f,
                "a signature's jku was not fetched: at most {MAX_JKU_FETCHES} key sets are fetched per card"
            ),
            Cap::Keys { found } => write!(
                f,
                "{found} keys match one signature; only the first {MAX_KEYS_PER_SIGNATURE} are tried (the cap on keys per signature)"
            ),
        }
    }
}

/// What checking a card's signatures found, and the caps it reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSignatures {
    /// The best status among the signatures checked.
    pub status: SignatureStatus,
    /// Caps reached, each once.
    pub capped: Vec<Cap>,
}

/// Why a key set named by a signature's `jku` could not be had. Cloned into the caches of key
/// sets fetched (per card and across cards), so a failure is remembered as well as a success.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JwksError {
    /// Fetching it failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The host answered 304 to a fetch that sent no validators.
    #[error("unexpected 304")]
    NotModified,
    /// The body is not a JSON Web Key Set.
    #[error("not a JWK set: {0}")]
    NotAJwkSet(#[source] Arc<serde_json::Error>),
}

/// Why a signature's `jku` is not fetched.
#[derive(Debug, thiserror::Error)]
enum JkuError {
    /// It does not parse as a URL.
    #[error("jku {jku:?} is not a URL: {source}")]
    NotAUrl {
        jku: String,
        source: url::ParseError,
    },
    /// The card came from nowhere a URL names, so no origin allows it.
    #[error("the card has no origin to check jku against")]
    NoOrigin,
    /// It is on another origin than the card's.
    #[error("jku {jku} is not on the card's origin {origin}")]
    OtherOrigin { jku: Url, origin: String },
}

/// Key sets fetched for one card, by URL, and the caps reached so far.
#[derive(Default)]
struct Budget {
    key_sets: HashMap<Url, Result<JwkSet, JwksError>>,
    capped: Vec<Cap>,
}

impl Budget {
    fn cap(&mut self, cap: Cap) {
        if !self.capped.contains(&cap) {
            self.capped.push(cap);
        }
    }
}

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
) -> CardSignatures
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Result<JwkSet, JwksError>>,
{
    let unsigned = CardSignatures {
        status: SignatureStatus::Unsigned,
        capped: Vec::new(),
    };
    let Some(signatures) = card.get("signatures").and_then(Value::as_array) else {
        return unsigned;
    };
    if signatures.is_empty() {
        return unsigned;
    }
    let mut budget = Budget::default();
    if signatures.len() > MAX_SIGNATURES {
        budget.cap(Cap::Signatures {
            found: signatures.len(),
        });
    }
    let owned = card.clone();
    let payloads = match tokio::task::spawn_blocking(move || canonical_variants(&owned)).await {
        Ok(payloads) => Arc::new(payloads),
        Err(error) => {
            return CardSignatures {
                status: SignatureStatus::Invalid {
                    reason: format!("canonicalising the card failed: {error}"),
                },
                capped: budget.capped,
            };
        }
    };
    let mut best = SignatureStatus::Unsigned;
    for signature in signatures.iter().take(MAX_SIGNATURES) {
        let status = verify_one(
            signature,
            &payloads,
            origin,
            trusted,
            &fetch_jwks,
            &mut budget,
        )
        .await;
        if status.rank() > best.rank() {
            best = status;
        }
        if matches!(best, SignatureStatus::Valid { .. }) {
            break;
        }
    }
    CardSignatures {
        status: best,
        capped: budget.capped,
    }
}

async fn verify_one<F, Fut>(
    signature: &Value,
    payloads: &Arc<Vec<Vec<u8>>>,
    origin: Option<&Url>,
    trusted: &[Jwk],
    fetch_jwks: &F,
    budget: &mut Budget,
) -> SignatureStatus
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Result<JwkSet, JwksError>>,
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
            Err(refused) => unavailable = refused.to_string(),
            Ok(url) => match key_set(&url, fetch_jwks, budget).await {
                Some(Ok(set)) => {
                    candidates.extend(
                        set.keys
                            .into_iter()
                            .filter(|k| kid.is_none() || k.common.key_id == kid)
                            .map(|k| (k, url.to_string())),
                    );
                    unavailable = format!("no key with kid {kid:?} at {url}");
                }
                Some(Err(error)) => unavailable = format!("fetching {url}: {error}"),
                None => unavailable = Cap::JkuFetches.to_string(),
            },
        }
    }
    if candidates.is_empty() {
        return SignatureStatus::KeyUnavailable {
            reason: unavailable,
        };
    }
    if candidates.len() > MAX_KEYS_PER_SIGNATURE {
        budget.cap(Cap::Keys {
            found: candidates.len(),
        });
        candidates.truncate(MAX_KEYS_PER_SIGNATURE);
    }
    let (protected, value, payloads) = (protected.to_string(), value.to_string(), payloads.clone());
    let matched = tokio::task::spawn_blocking(move || {
        try_keys(&candidates, &payloads, &protected, &value, alg)
    })
    .await
    .ok()
    .flatten();
    match matched {
        Some(source) => SignatureStatus::Valid {
            kid,
            alg: alg_name,
            source,
        },
        None => invalid("the signature does not match the card"),
    }
}

/// The key set at `url`: fetched once per card, and only while the card's budget of
/// [`MAX_JKU_FETCHES`] lasts (`None` once it is spent).
async fn key_set<F, Fut>(
    url: &Url,
    fetch_jwks: &F,
    budget: &mut Budget,
) -> Option<Result<JwkSet, JwksError>>
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Result<JwkSet, JwksError>>,
{
    if let Some(known) = budget.key_sets.get(url) {
        return Some(known.clone());
    }
    if budget.key_sets.len() >= MAX_JKU_FETCHES {
        budget.cap(Cap::JkuFetches);
        return None;
    }
    let fetched = fetch_jwks(url.clone()).await;
    budget.key_sets.insert(url.clone(), fetched.clone());
    Some(fetched)
}

/// The source of the first key that verifies `signature` over one of `payloads`. CPU-bound:
/// run on the blocking pool.
fn try_keys(
    candidates: &[(Jwk, String)],
    payloads: &[Vec<u8>],
    protected: &str,
    signature: &str,
    alg: Algorithm,
) -> Option<String> {
    for (jwk, source) in candidates {
        let Ok(key) = jsonwebtoken::DecodingKey::from_jwk(jwk) else {
            continue;
        };
        for payload in payloads {
            let message = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
            if jsonwebtoken::crypto::verify(signature, message.as_bytes(), &key, alg)
                .unwrap_or(false)
            {
                return Some(source.clone());
            }
        }
    }
    None
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
fn same_origin(jku: &str, origin: Option<&Url>) -> Result<Url, JkuError> {
    let url = Url::parse(jku).map_err(|source| JkuError::NotAUrl {
        jku: jku.to_string(),
        source,
    })?;
    let Some(origin) = origin else {
        return Err(JkuError::NoOrigin);
    };
    if url.origin() != origin.origin() {
        return Err(JkuError::OtherOrigin {
            jku: url,
            origin: origin.origin().ascii_serialization(),
        });
    }
    Ok(url)
}
