//! Where a document URI leads: HTTP(S) URLs to try in order (IPFS and Arweave content goes
//! through the configured gateways), or bytes carried in the URI itself (`data:`).
//!
//! Accepted: `https://`, `http://` (when allowed), `ipfs://CID[/path]`, `ipns://name[/path]`, bare
//! CIDs, gateway URLs (`…/ipfs/CID/…` and `CID.ipfs.host`), `ar://TX[/path]`, and `data:` in
//! base64 or percent-encoded form. Anything else is an error naming what was wrong.

use crate::config::DocumentsConfig;
use base64::Engine;
use url::Url;

/// Why a URI leads nowhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    /// Nothing but whitespace.
    #[error("the URI is empty")]
    Empty,
    /// A scheme this indexer does not fetch.
    #[error("unsupported URI scheme {0:?}")]
    UnsupportedScheme(String),
    /// Plain `http://` while only `https://` is allowed.
    #[error("plain http is not allowed: {0}")]
    HttpNotAllowed(String),
    /// Not parseable.
    #[error("malformed URI ({reason}): {uri}")]
    Malformed {
        /// The URI, shortened.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// A `data:` URI whose content is larger than documents may be.
    #[error("data: URI carries about {size} bytes, more than the {limit}-byte limit")]
    TooLarge {
        /// Decoded size (estimated before decoding).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// IPFS content with no gateway configured.
    #[error("no IPFS gateway is configured for {0}")]
    NoGateway(String),
}

/// Where to get a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Fetch these URLs, first that answers wins.
    Http(Vec<Url>),
    /// The document is in the URI.
    Inline {
        /// Its bytes.
        bytes: Vec<u8>,
        /// The declared media type (`text/plain;charset=US-ASCII` when none is given).
        media_type: String,
    },
}

/// What resolution may use.
#[derive(Debug, Clone)]
pub struct ResolveOptions {
    /// IPFS gateways, each ending in `/ipfs/`, tried in order.
    pub ipfs_gateways: Vec<Url>,
    /// The Arweave gateway `ar://` goes through.
    pub arweave_gateway: Url,
    /// Whether plain `http://` URLs may be fetched.
    pub allow_http: bool,
    /// The largest document a `data:` URI may carry.
    pub max_bytes: usize,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        Self {
            ipfs_gateways: vec![Url::parse("https://ipfs.io/ipfs/").expect("valid")],
            arweave_gateway: Url::parse("https://arweave.net/").expect("valid"),
            allow_http: false,
            max_bytes: 1 << 20,
        }
    }
}

/// How URIs resolve under the `[documents]` settings; gateways that are not URLs are skipped
/// (the config check reports them).
impl From<&DocumentsConfig> for ResolveOptions {
    fn from(config: &DocumentsConfig) -> Self {
        Self {
            ipfs_gateways: config
                .ipfs_gateways
                .iter()
                .filter_map(|g| Url::parse(g).ok())
                .collect(),
            allow_http: config.allow_http,
            ..Self::default()
        }
    }
}

/// Resolves `uri`.
pub fn resolve(uri: &str, options: &ResolveOptions) -> Result<Target, UriError> {
    let uri = uri.trim();
    if uri.is_empty() {
        return Err(UriError::Empty);
    }
    if let Some(content) = strip_scheme(uri, "data:") {
        return data(uri, content, options.max_bytes);
    }
    if let Some(rest) = strip_scheme(uri, "ipfs://") {
        let rest = rest.strip_prefix("ipfs/").unwrap_or(rest);
        return through_gateways(uri, "ipfs", rest, options, None);
    }
    if let Some(rest) = strip_scheme(uri, "ipns://") {
        return through_gateways(uri, "ipns", rest, options, None);
    }
    if let Some(rest) = strip_scheme(uri, "ar://") {
        if rest.is_empty() {
            return Err(malformed(uri, "no transaction id"));
        }
        let url = options
            .arweave_gateway
            .join(rest)
            .map_err(|e| malformed(uri, &e.to_string()))?;
        return Ok(Target::Http(vec![url]));
    }
    if is_cid(uri.split(['/', '?', '#']).next().unwrap_or_default()) {
        return through_gateways(uri, "ipfs", uri, options, None);
    }
    let url = Url::parse(uri).map_err(|e| match e {
        url::ParseError::RelativeUrlWithoutBase => {
            UriError::UnsupportedScheme(String::from("none"))
        }
        other => malformed(uri, &other.to_string()),
    })?;
    match url.scheme() {
        "https" => {}
        "http" if options.allow_http => {}
        "http" => return Err(UriError::HttpNotAllowed(shorten(uri))),
        other => return Err(UriError::UnsupportedScheme(other.to_string())),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(malformed(uri, "no host"));
    }
    if let Some(content) = gateway_content(&url) {
        return through_gateways(uri, "ipfs", &content, options, Some(url));
    }
    Ok(Target::Http(vec![url]))
}

/// The rest of `uri` after `scheme`, compared case-insensitively.
fn strip_scheme<'a>(uri: &'a str, scheme: &str) -> Option<&'a str> {
    let head = uri.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme)
        .then(|| &uri[scheme.len()..])
}

/// `CID[/path]` of a gateway URL: `https://host/ipfs/CID/path` or `https://CID.ipfs.host/path`.
fn gateway_content(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    if let Some((cid, _)) = host.split_once(".ipfs.")
        && is_cid(cid)
    {
        return Some(format!("{cid}{}", url.path()));
    }
    let mut segments = url.path_segments()?;
    if segments.next()? != "ipfs" {
        return None;
    }
    let rest: Vec<&str> = segments.collect();
    (!rest.is_empty() && is_cid(rest[0])).then(|| rest.join("/"))
}

/// The content `namespace/rest` through every gateway, then `original` if it was a gateway URL.
fn through_gateways(
    uri: &str,
    namespace: &str,
    rest: &str,
    options: &ResolveOptions,
    original: Option<Url>,
) -> Result<Target, UriError> {
    let rest = rest.trim_start_matches('/');
    if rest.is_empty() {
        return Err(malformed(uri, "no content identifier"));
    }
    if namespace == "ipfs" && !is_cid(rest.split(['/', '?', '#']).next().unwrap_or_default()) {
        return Err(malformed(uri, "not a CID"));
    }
    let mut urls = Vec::new();
    for gateway in &options.ipfs_gateways {
        let base = if namespace == "ipns" {
            gateway
                .as_str()
                .strip_suffix("/ipfs/")
                .map(|root| format!("{root}/ipns/"))
                .unwrap_or_else(|| gateway.to_string())
        } else {
            gateway.to_string()
        };
        if let Ok(url) = Url::parse(&format!("{base}{rest}")) {
            urls.push(url);
        }
    }
    if let Some(original) = original
        && !urls.contains(&original)
    {
        urls.push(original);
    }
    if urls.is_empty() {
        return Err(UriError::NoGateway(shorten(uri)));
    }
    Ok(Target::Http(urls))
}

/// Whether `uri` names its content by its hash (`ipfs://CID…`, a bare CID, or `data:` carrying
/// the bytes), so the bytes behind it cannot change.
pub fn is_content_addressed(uri: &str) -> bool {
    let uri = uri.trim();
    if strip_scheme(uri, "data:").is_some() {
        return true;
    }
    if let Some(rest) = strip_scheme(uri, "ipfs://") {
        let rest = rest.strip_prefix("ipfs/").unwrap_or(rest);
        return is_cid(rest.split(['/', '?', '#']).next().unwrap_or_default());
    }
    is_cid(uri.split(['/', '?', '#']).next().unwrap_or_default())
}

/// The IPFS content a URI names, for checking what a gateway serves against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpfsContent {
    /// The CID.
    pub cid: String,
    /// Whether the URI names a path inside the CID (a file in a directory), whose bytes the
    /// CID alone cannot check.
    pub inside: bool,
}

/// The CID (and whether a path follows it) of `ipfs://CID[/path]`, a bare CID, or a gateway URL
/// (`…/ipfs/CID/…`, `CID.ipfs.host/…`); `None` for anything else (`ipns://` included: a name,
/// not a hash).
pub fn ipfs_content(uri: &str) -> Option<IpfsContent> {
    let uri = uri.trim();
    let content = if let Some(rest) = strip_scheme(uri, "ipfs://") {
        rest.strip_prefix("ipfs/").unwrap_or(rest).to_string()
    } else if is_cid(uri.split(['/', '?', '#']).next().unwrap_or_default()) {
        uri.to_string()
    } else {
        gateway_content(&Url::parse(uri).ok()?)?
    };
    let (cid, rest) = content
        .split_once(['/', '?', '#'])
        .map_or((content.as_str(), ""), |(cid, _)| {
            (cid, &content[cid.len()..])
        });
    if !is_cid(cid) {
        return None;
    }
    let path = rest.split(['?', '#']).next().unwrap_or_default();
    Some(IpfsContent {
        cid: cid.to_string(),
        inside: !path.trim_matches('/').is_empty(),
    })
}

/// Whether `text` looks like an IPFS CID: CIDv0 (`Qm` + 44 base58 characters) or a CIDv1 in
/// base32 (`b` + lower-case base32, as gateways and tools print them).
pub fn is_cid(text: &str) -> bool {
    const BASE58: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    if text.len() == 46 && text.starts_with("Qm") {
        return text.chars().all(|c| BASE58.contains(c));
    }
    text.len() >= 50
        && text.len() <= 120
        && text.starts_with('b')
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || ('2'..='7').contains(&c))
}

/// Decodes a `data:` URI's content: `[media type][;base64],payload`.
fn data(uri: &str, content: &str, limit: usize) -> Result<Target, UriError> {
    let (header, payload) = content
        .split_once(',')
        .ok_or_else(|| malformed(uri, "data: URI without a comma"))?;
    let (media_type, base64) = match header.strip_suffix(";base64") {
        Some(media) => (media, true),
        None => (header, false),
    };
    let media_type = if media_type.is_empty() {
        "text/plain;charset=US-ASCII".to_string()
    } else {
        media_type.to_ascii_lowercase()
    };
    let estimate = if base64 {
        payload.len() / 4 * 3
    } else {
        payload.len()
    };
    if estimate > limit {
        return Err(UriError::TooLarge {
            size: estimate,
            limit,
        });
    }
    let bytes = if base64 {
        // Padding, line breaks and percent-escaped characters are common in the wild.
        let unescaped = percent_decode(payload);
        let text: Vec<u8> = unescaped
            .into_iter()
            .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
            .collect();
        use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
        STANDARD_NO_PAD
            .decode(&text)
            .or_else(|_| URL_SAFE_NO_PAD.decode(&text))
            .map_err(|e| malformed(uri, &format!("bad base64: {e}")))?
    } else {
        percent_decode(payload)
    };
    Ok(Target::Inline { bytes, media_type })
}

/// `%XX` escapes decoded; malformed escapes are kept as they are.
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex_value(bytes[i + 1]), hex_value(bytes[i + 2]))
        {
            out.push(high * 16 + low);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn hex_value(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|d| d as u8)
}

fn malformed(uri: &str, reason: &str) -> UriError {
    UriError::Malformed {
        uri: shorten(uri),
        reason: reason.to_string(),
    }
}

/// At most 120 characters of `uri`, for messages.
fn shorten(uri: &str) -> String {
    match uri.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &uri[..at]),
        None => uri.to_string(),
    }
}

#[cfg(test)]
#[path = "uri_tests.rs"]
mod tests;
