//! One document from URI to verdict: resolve, fetch, tell a registration file from an Agent Card,
//! read it into its projection, and report. Every failure along the way becomes a lint, so the
//! caller always gets a report; `agentindex card check` prints it and the documents worker
//! stores it.

use super::fetch::{Fetched, Fetcher, Validators};
use super::json::parse;
use super::lint::Report;
use super::uri::{ResolveOptions, Target, resolve};
use super::{CardProjection, RegistrationProjection, card, registration};
use alloy::primitives::{B256, keccak256};
use serde::Serialize;
use serde_json::Value;

/// What a document turned out to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Projection {
    /// An A2A Agent Card.
    Card(Box<CardProjection>),
    /// An ERC-8004 registration file.
    Registration(RegistrationProjection),
}

/// The outcome of checking one document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checked {
    /// The URI as given.
    pub uri: String,
    /// Where the bytes came from (the URL after redirects, or `data:`).
    pub source: Option<String>,
    /// The bytes, when any arrived.
    #[serde(skip)]
    pub bytes: Option<Vec<u8>>,
    /// keccak256 of the bytes.
    pub hash: Option<B256>,
    /// Validators for a conditional refresh.
    #[serde(skip)]
    pub validators: Validators,
    /// The server said the document is unchanged since the validators given.
    pub not_modified: bool,
    /// What could be read.
    pub projection: Option<Projection>,
    /// Everything found wrong, fetch failures included.
    pub report: Report,
    /// Whether the failure may go away by trying later (a timeout, a 503).
    pub retryable: bool,
}

/// How to read a document whose kind is known in advance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Whatever it looks like.
    Any,
    /// An Agent Card.
    Card,
    /// A registration file.
    Registration,
}

/// Resolves, fetches and reads `uri`.
pub async fn check(
    uri: &str,
    expect: Expect,
    fetcher: &Fetcher,
    options: &ResolveOptions,
    validators: Option<&Validators>,
) -> Checked {
    let mut checked = Checked {
        uri: uri.to_string(),
        source: None,
        bytes: None,
        hash: None,
        validators: Validators::default(),
        not_modified: false,
        projection: None,
        report: Report::default(),
        retryable: false,
    };
    let target = match resolve(uri, options) {
        Ok(target) => target,
        Err(error) => {
            checked.report.error("document.uri", "$", error.to_string());
            return checked;
        }
    };
    let bytes = match target {
        Target::Inline { bytes, .. } => {
            checked.source = Some("data:".into());
            bytes
        }
        Target::Http(urls) => {
            let mut last_error = None;
            let mut body = None;
            for url in &urls {
                match fetcher.fetch(url, validators).await {
                    Ok(Fetched::NotModified) => {
                        checked.not_modified = true;
                        checked.source = Some(url.to_string());
                        return checked;
                    }
                    Ok(Fetched::Body {
                        bytes,
                        final_url,
                        validators,
                        ..
                    }) => {
                        checked.source = Some(final_url.to_string());
                        checked.validators = validators;
                        body = Some(bytes);
                        break;
                    }
                    Err(error) => last_error = Some(error),
                }
            }
            match (body, last_error) {
                (Some(bytes), _) => bytes,
                (None, Some(error)) => {
                    checked.retryable = error.is_retryable();
                    checked
                        .report
                        .error("document.fetch", "$", error.to_string());
                    return checked;
                }
                (None, None) => {
                    checked
                        .report
                        .error("document.fetch", "$", "no URL to fetch");
                    return checked;
                }
            }
        }
    };
    checked.hash = Some(keccak256(&bytes));
    checked.projection = read(&bytes, expect, &mut checked.report);
    checked.bytes = Some(bytes);
    checked
}

/// Reads `bytes` as what `expect` says, or as whatever they look like.
pub fn read(bytes: &[u8], expect: Expect, report: &mut Report) -> Option<Projection> {
    let value = parse(bytes, report)?;
    let registration = match expect {
        Expect::Card => false,
        Expect::Registration => true,
        Expect::Any => looks_like_registration(&value),
    };
    if registration {
        registration::read_registration(&value, report).map(Projection::Registration)
    } else {
        card::read_card(&value, report).map(|c| Projection::Card(Box::new(c)))
    }
}

/// A registration file names its ERC-8004 type or carries its services and registrations.
fn looks_like_registration(value: &Value) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    map.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.contains("eip-8004"))
        || ["services", "endpoints", "registrations"]
            .iter()
            .any(|k| map.contains_key(*k))
            && !map.contains_key("skills")
}
