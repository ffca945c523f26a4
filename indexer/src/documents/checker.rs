//! A document checked in full: fetched and read by [`check_until`], and a card's signatures
//! verified with the trusted keys or the key sets its `jku` names.
//!
//! One deadline (`documents.fetch_deadline_secs`) covers the whole check: the key sets are
//! fetched in whatever time the card's own fetch left, and not at all once it is gone. A card
//! whose host drips its answer therefore costs one deadline, not one for the card and one more
//! for each `jku` ([`MAX_JKU_FETCHES`] of them).
//!
//! [`MAX_JKU_FETCHES`]: super::signature::MAX_JKU_FETCHES

use super::check::{Checked, Expect, Projection, check_until};
use super::fetch::{FetchError, FetchPolicy, Fetched, Fetcher, Validators};
use super::jwks::JwksCache;
use super::signature::{JwksError, SignatureStatus, verify_card};
use super::uri::ResolveOptions;
use crate::config::DocumentsConfig;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::time::Instant;

/// Everything checking a document needs: the fetcher, how URIs resolve, and the keys card
/// signatures are trusted with.
#[derive(Debug, Clone)]
pub struct Checker {
    /// Fetches under the configured policy.
    pub fetcher: Fetcher,
    /// Gateways and scheme rules.
    pub resolve: ResolveOptions,
    /// Keys card signatures verify with, besides a `jku` on the card's origin.
    pub trusted_keys: Vec<Jwk>,
    /// Key sets fetched for `jku`, kept for a while.
    jwks: JwksCache,
}

impl Checker {
    /// A checker under the `[documents]` settings.
    pub fn from_config(config: &DocumentsConfig) -> Result<Self, FetchError> {
        Ok(Self {
            fetcher: Fetcher::new(FetchPolicy::from(config))?,
            resolve: ResolveOptions::from(config),
            trusted_keys: config.trusted_keys.clone(),
            jwks: JwksCache::default(),
        })
    }

    /// A checker from its parts.
    pub fn new(fetcher: Fetcher, resolve: ResolveOptions, trusted_keys: Vec<Jwk>) -> Self {
        Self {
            fetcher,
            resolve,
            trusted_keys,
            jwks: JwksCache::default(),
        }
    }

    /// Resolves, fetches and reads `uri`, and verifies a card's signatures, all within one
    /// fetch deadline from now.
    pub async fn check(
        &self,
        uri: &str,
        expect: Expect,
        validators: Option<&Validators>,
    ) -> Checked {
        let deadline = self.fetcher.deadline();
        let mut checked = check_until(
            uri,
            expect,
            &self.fetcher,
            &self.resolve,
            validators,
            deadline,
        )
        .await;
        if let (Some(Projection::Card(card)), Some(bytes)) = (&checked.projection, &checked.bytes) {
            let (status, ran_out) = if card.signatures.is_empty() {
                (SignatureStatus::Unsigned, false)
            } else {
                let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
                let origin = checked
                    .source
                    .as_deref()
                    .and_then(|s| url::Url::parse(s).ok());
                let ran_out = AtomicBool::new(false);
                let verified = verify_card(&value, origin.as_ref(), &self.trusted_keys, |url| {
                    self.fetch_jwks(url, deadline, &ran_out)
                })
                .await;
                for cap in verified.capped {
                    checked.report.warning(
                        "card.signature.capped",
                        "$.signatures",
                        cap.to_string(),
                    );
                }
                (verified.status, ran_out.into_inner())
            };
            match &status {
                SignatureStatus::Invalid { reason } => {
                    checked
                        .report
                        .warning("card.signature.invalid", "$.signatures", reason.clone())
                }
                SignatureStatus::Unsupported { alg } => checked.report.warning(
                    "card.signature.unsupported",
                    "$.signatures",
                    format!("algorithm {alg:?} is not accepted"),
                ),
                SignatureStatus::KeyUnavailable { reason } if ran_out => checked.report.warning(
                    "card.signature.deadline",
                    "$.signatures",
                    format!(
                        "the deadline for one document (documents.fetch_deadline_secs) ran out before the card's key set was fetched: {reason}"
                    ),
                ),
                SignatureStatus::KeyUnavailable { reason } => checked.report.info(
                    "card.signature.key_unavailable",
                    "$.signatures",
                    reason.clone(),
                ),
                _ => {}
            }
            checked.signature = Some(status);
        }
        checked
    }

    /// A JSON Web Key Set from `url`, under the fetch policy and within what is left of the
    /// document's `deadline`, or as fetched a moment ago. A fetch the deadline cut off (or
    /// never started) sets `ran_out` and is not kept: it says nothing about the key set's host.
    async fn fetch_jwks(
        &self,
        url: url::Url,
        deadline: Instant,
        ran_out: &AtomicBool,
    ) -> Result<JwkSet, JwksError> {
        if let Some(kept) = self.jwks.get(url.as_str()) {
            return kept;
        }
        let fetched = match self.fetcher.fetch_until(&url, None, deadline).await {
            Ok(Fetched::Body { bytes, .. }) => serde_json::from_slice(&bytes)
                .map_err(|error| JwksError::NotAJwkSet(Arc::new(error))),
            Ok(Fetched::NotModified) => Err(JwksError::NotModified),
            Err(error @ FetchError::Deadline { .. }) => {
                ran_out.store(true, Ordering::Relaxed);
                return Err(error.into());
            }
            Err(error) => Err(error.into()),
        };
        self.jwks.put(url.as_str(), fetched.clone());
        fetched
    }
}
