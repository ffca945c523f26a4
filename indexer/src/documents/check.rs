//! One document from URI to verdict: resolve, fetch, tell a registration file from an Agent Card,
//! read it into its projection, and report. Every failure along the way becomes a lint, so the
//! caller always gets a report; `agentindex card check` prints it and the documents worker
//! stores it. A card's signatures are verified on top of this by [`super::Checker`].

use super::cid::{Cid, Verdict};
use super::feedback::{self, FeedbackFileProjection};
use super::fetch::{FetchError, Fetched, Fetcher, Validators};
use super::json::parse;
use super::lint::Report;
use super::signature::SignatureStatus;
use super::uri::{ResolveOptions, Target, ipfs_content, resolve};
use super::{CardProjection, RegistrationProjection, card, registration};
use alloy::primitives::{B256, keccak256};
use serde::Serialize;
use serde_json::Value;
use tokio::time::Instant;

/// What a document turned out to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Projection {
    /// An A2A Agent Card.
    Card(Box<CardProjection>),
    /// An ERC-8004 registration file.
    Registration(RegistrationProjection),
    /// An ERC-8004 feedback file.
    Feedback(Box<FeedbackFileProjection>),
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
    /// For a card: what its signatures amount to.
    pub signature: Option<SignatureStatus>,
}

/// How to read a document whose kind is known in advance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Expect {
    /// Whatever it looks like.
    Any,
    /// An Agent Card.
    Card,
    /// A registration file.
    Registration,
    /// A registration file's A2A service endpoint: a card URL, or a base URL tried as
    /// `/.well-known/agent-card.json`, then `/.well-known/agent.json`.
    A2a,
    /// An agent contract's own `agentCard()` JSON; the URI is `eip155:{chain}:{contract}` and the
    /// documents worker reads it with `eth_call`.
    Onchain,
    /// An ERC-8004 feedback file (a `NewFeedback` event's `feedbackURI`).
    Feedback,
}

impl Expect {
    /// The name stored in `documents.expect`.
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Any => "any",
            Expect::Card => "card",
            Expect::Registration => "registration",
            Expect::A2a => "a2a",
            Expect::Onchain => "onchain",
            Expect::Feedback => "feedback",
        }
    }

    /// The variant a stored name stands for.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Expect::Any,
            Expect::Card,
            Expect::Registration,
            Expect::A2a,
            Expect::Onchain,
            Expect::Feedback,
        ]
        .into_iter()
        .find(|e| e.as_str() == name)
    }
}

/// Resolves, fetches and reads `uri` (without verifying signatures; see [`Checker::check`]),
/// within one fetch deadline from now.
///
/// [`Checker::check`]: super::Checker::check
pub async fn check(
    uri: &str,
    expect: Expect,
    fetcher: &Fetcher,
    options: &ResolveOptions,
    validators: Option<&Validators>,
) -> Checked {
    check_until(
        uri,
        expect,
        fetcher,
        options,
        validators,
        fetcher.deadline(),
    )
    .await
}

/// As [`check`], giving up at `deadline`: every URL tried for the document, retries and
/// redirects included, shares it (and so may the work done after, like fetching a card's key
/// sets).
pub async fn check_until(
    uri: &str,
    expect: Expect,
    fetcher: &Fetcher,
    options: &ResolveOptions,
    validators: Option<&Validators>,
    deadline: Instant,
) -> Checked {
    let mut checked = Checked::nothing(uri);
    if expect == Expect::Onchain {
        checked.report.error(
            "document.uri",
            "$",
            "an on-chain card is read from its contract, not fetched",
        );
        return checked;
    }
    let candidates = match expect {
        Expect::A2a => {
            let urls = registration::card_urls(uri);
            if urls.is_empty() {
                vec![uri.to_string()]
            } else {
                urls
            }
        }
        _ => vec![uri.to_string()],
    };
    let mut failure = None;
    let mut bytes = None;
    for candidate in &candidates {
        match obtain(candidate, fetcher, options, validators, deadline).await {
            Ok(Obtained::Unchanged(source)) => {
                checked.not_modified = true;
                checked.source = Some(source);
                return checked;
            }
            Ok(Obtained::Body(source, body, found, unverified)) => {
                checked.source = Some(source);
                checked.validators = found;
                if let Some(reason) = unverified {
                    checked.report.info("document.cid.unverified", "$", reason);
                }
                bytes = Some(body);
                break;
            }
            Err(error) => failure = Some(error),
        }
    }
    let Some(bytes) = bytes else {
        let (code, message, retryable) =
            failure.unwrap_or(("document.fetch", "nothing to fetch".into(), false));
        checked.retryable = retryable;
        checked.report.error(code, "$", message);
        return checked;
    };
    let expect = if expect == Expect::A2a {
        Expect::Card
    } else {
        expect
    };
    checked.read(bytes, expect);
    if checked
        .source
        .as_deref()
        .is_some_and(|source| source.starts_with("http://"))
    {
        checked.report.warning(
            "document.transport.insecure",
            "$",
            "fetched over plain http: anyone on the way could have changed it, so it is used but never counts as verified",
        );
    }
    checked
}

impl Checked {
    /// Nothing obtained yet for `uri`.
    pub fn nothing(uri: &str) -> Self {
        Self {
            uri: uri.to_string(),
            source: None,
            bytes: None,
            hash: None,
            validators: Validators::default(),
            not_modified: false,
            projection: None,
            report: Report::default(),
            retryable: false,
            signature: None,
        }
    }

    /// Takes `bytes` as the document and reads them as `expect` says.
    pub fn read(&mut self, bytes: Vec<u8>, expect: Expect) {
        self.hash = Some(keccak256(&bytes));
        self.projection = read(&bytes, expect, &mut self.report);
        self.bytes = Some(bytes);
    }
}

/// Bytes fetched or carried by a URI (with why they could not be checked against the URI's
/// CID, when it has one and they could not), or the news that they did not change.
enum Obtained {
    Body(String, Vec<u8>, Validators, Option<String>),
    Unchanged(String),
}

/// Resolves and fetches one URI, giving up at `deadline`; a failure is (lint code, message,
/// retryable). Bytes that are not the content of the URI's CID are refused and the next
/// gateway is tried.
async fn obtain(
    uri: &str,
    fetcher: &Fetcher,
    options: &ResolveOptions,
    validators: Option<&Validators>,
    deadline: Instant,
) -> Result<Obtained, (&'static str, String, bool)> {
    let urls = match resolve(uri, options) {
        Ok(Target::Inline { bytes, .. }) => {
            return Ok(Obtained::Body(
                "data:".into(),
                bytes,
                Validators::default(),
                None,
            ));
        }
        Ok(Target::Http(urls)) => urls,
        Err(error) => return Err(("document.uri", error.to_string(), false)),
    };
    let content = ipfs_content(uri);
    let mut last = ("document.fetch", format!("{uri}: no URL to fetch"), false);
    for url in &urls {
        match fetcher.fetch_until(url, validators, deadline).await {
            Ok(Fetched::NotModified) => return Ok(Obtained::Unchanged(url.to_string())),
            Ok(Fetched::Body {
                bytes,
                final_url,
                validators,
                ..
            }) => {
                let unverified = match content.as_ref().map(|c| content_check(c, &bytes)) {
                    Some(ContentCheck::Differs(differs)) => {
                        tracing::warn!(target: "agentindex::documents", %url, "a gateway served bytes that are not the CID's content");
                        last = (
                            "document.cid.mismatch",
                            format!("{final_url}: {differs}"),
                            false,
                        );
                        continue;
                    }
                    Some(ContentCheck::Unverifiable(why)) => Some(why),
                    Some(ContentCheck::Matches) | None => None,
                };
                return Ok(Obtained::Body(
                    final_url.to_string(),
                    bytes,
                    validators,
                    unverified,
                ));
            }
            Err(error) => {
                let deadline_passed = matches!(error, FetchError::Deadline { .. });
                last = ("document.fetch", error.to_string(), error.is_retryable());
                if deadline_passed {
                    break;
                }
            }
        }
    }
    Err(last)
}

/// What checking fetched bytes against the CID they were fetched by found.
enum ContentCheck {
    /// The bytes are the CID's content.
    Matches,
    /// They cannot be told apart from it here, and why.
    Unverifiable(String),
    /// They are not its content, in words.
    Differs(String),
}

/// Whether `bytes` are the content `content` names.
fn content_check(content: &super::uri::IpfsContent, bytes: &[u8]) -> ContentCheck {
    if content.inside {
        return ContentCheck::Unverifiable(format!(
            "the document is a path inside {}, which its bytes alone cannot be checked against",
            content.cid
        ));
    }
    let cid = match Cid::parse(&content.cid) {
        Ok(cid) => cid,
        Err(error) => return ContentCheck::Unverifiable(error.to_string()),
    };
    match cid.verify(bytes) {
        Verdict::Matches => ContentCheck::Matches,
        Verdict::Differs => ContentCheck::Differs(format!(
            "the bytes served are not the content of {}",
            content.cid
        )),
        Verdict::Unverifiable(why) => ContentCheck::Unverifiable(format!("{}: {why}", content.cid)),
    }
}

/// Reads `bytes` as what `expect` says, or as whatever they look like.
pub fn read(bytes: &[u8], expect: Expect, report: &mut Report) -> Option<Projection> {
    let value = parse(bytes, report)?;
    let registration = match expect {
        Expect::Feedback => {
            return feedback::read_feedback_file(&value, report)
                .map(|file| Projection::Feedback(Box::new(file)));
        }
        Expect::Card | Expect::A2a | Expect::Onchain => false,
        Expect::Registration => true,
        Expect::Any => looks_like_registration(&value),
    };
    if registration {
        registration::read_registration(&value, report).map(Projection::Registration)
    } else {
        card::read_card(&value, report).map(|c| Projection::Card(Box::new(c)))
    }
}

/// Whether a document is a registration file rather than an Agent Card, from all it carries:
/// the ERC-8004 `type` settles it; otherwise each field that only one kind defines (in the shape
/// that kind gives it) counts for that kind. A card with a `url` and a vendor `endpoints` object
/// stays a card; a registration file that lists a few skills stays a registration file.
pub(super) fn looks_like_registration(value: &Value) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    if let Some(kind) = map.get("type").and_then(Value::as_str)
        && kind.to_ascii_lowercase().contains("eip-8004")
    {
        return true;
    }
    let has = |key: &str| map.get(key).is_some_and(|v| !v.is_null());
    let list_of_services = |key: &str| {
        map.get(key).and_then(Value::as_array).is_some_and(|items| {
            items.iter().any(|item| {
                ["endpoint", "url"]
                    .iter()
                    .any(|field| item.get(*field).is_some_and(Value::is_string))
                    && ["name", "type"]
                        .iter()
                        .any(|field| item.get(*field).is_some())
            })
        })
    };
    let mut registration = 0;
    let mut card = 0;
    for (present, weight) in [
        (map.get("registrations").is_some_and(Value::is_array), 3),
        (has("agentId") && has("agentRegistry"), 3),
        (list_of_services("services"), 2),
        (list_of_services("endpoints"), 2),
        (
            ["supportedTrust", "supportedTrusts", "trustModels"]
                .iter()
                .any(|key| has(key)),
            1,
        ),
        (["x402Support", "x402support"].iter().any(|key| has(key)), 1),
        (has("image"), 1),
    ] {
        if present {
            registration += weight;
        }
    }
    for (present, weight) in [
        (
            map.get("supportedInterfaces").is_some_and(Value::is_array),
            3,
        ),
        (map.get("url").is_some_and(Value::is_string), 2),
        (has("skills"), 2),
        (has("capabilities"), 1),
        (has("defaultInputModes") || has("defaultOutputModes"), 1),
        (has("protocolVersion") || has("protocolVersions"), 1),
        (has("preferredTransport") || has("additionalInterfaces"), 1),
        (has("securitySchemes"), 1),
    ] {
        if present {
            card += weight;
        }
    }
    registration > card
}
