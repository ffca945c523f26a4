//! Reading a failed request into an [`RpcErrorKind`]: the transport's status and the JSON-RPC
//! error's code and words (see `phrases.rs`), and the block range some providers suggest or name
//! as their limit.

use super::error::RpcErrorKind;
use super::phrases::{
    LIMIT_WORDS, RANGE_CAP_PHRASES, REJECTED_PHRASES, RESULT_CAP_PHRASES, TRANSIENT_PHRASES,
    UNSUPPORTED_PHRASES,
};
use alloy::transports::{RpcError as AlloyRpcError, TransportErrorKind};

/// Classifies an alloy transport or JSON-RPC error.
pub(crate) fn classify(error: &AlloyRpcError<TransportErrorKind>) -> RpcErrorKind {
    match error {
        AlloyRpcError::ErrorResp(payload) => classify_message(payload.code, &payload.message),
        AlloyRpcError::Transport(TransportErrorKind::HttpError(http)) => {
            let text = format!("HTTP {}: {}", http.status, truncate(&http.body));
            // Some providers put the range complaint in the body of a 4xx or 5xx.
            match classify_message(0, &http.body) {
                limit @ (RpcErrorKind::RangeTooLarge { .. }
                | RpcErrorKind::TooManyResults { .. }) => limit,
                _ if http.status == 429 || http.status == 408 || http.status >= 500 => {
                    RpcErrorKind::Transient(text)
                }
                _ if http.status == 401 || http.status == 403 => RpcErrorKind::Rejected(text),
                RpcErrorKind::Rejected(_) => RpcErrorKind::Rejected(text),
                _ if http.status == 404 || http.status == 405 => RpcErrorKind::Unsupported(text),
                _ => RpcErrorKind::Unknown(text),
            }
        }
        AlloyRpcError::Transport(other) => {
            // reqwest's own words stop at "error sending request"; the cause is in its sources.
            let text = with_sources(other);
            match connection_failed(other) {
                true => RpcErrorKind::Unreachable(text),
                false => RpcErrorKind::Transient(text),
            }
        }
        AlloyRpcError::NullResp => RpcErrorKind::Transient("null response".into()),
        AlloyRpcError::DeserError { err, text } => {
            // A proxy's HTML error page or a cut-off body: try again.
            RpcErrorKind::Transient(format!("unreadable response ({err}): {}", truncate(text)))
        }
        AlloyRpcError::UnsupportedFeature(feature) => {
            RpcErrorKind::Unsupported(format!("unsupported feature: {feature}"))
        }
        other => RpcErrorKind::Unknown(other.to_string()),
    }
}

/// Whether the transport never got a connection to the endpoint: refused, no such host, a
/// failed TLS handshake.
fn connection_failed(error: &TransportErrorKind) -> bool {
    let TransportErrorKind::Custom(inner) = error else {
        return false;
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(inner.as_ref());
    while let Some(error) = source {
        if let Some(request) = error.downcast_ref::<alloy::transports::http::reqwest::Error>() {
            return request.is_connect();
        }
        source = error.source();
    }
    false
}

/// An error's words followed by its sources' (`a: b: c`), without repeating a source whose
/// words the one before already holds.
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let words = cause.to_string();
        if !text.contains(&words) {
            text = format!("{text}: {words}");
        }
        source = cause.source();
    }
    text
}

/// Classifies a JSON-RPC error by its code and wording.
pub(crate) fn classify_message(code: i64, message: &str) -> RpcErrorKind {
    let lower = message.to_ascii_lowercase();
    let has = |phrases: &[&str]| phrases.iter().any(|p| lower.contains(p));
    let suggested = suggested_range(message);
    let names_limit = has(LIMIT_WORDS) || suggested.is_some();
    if has(RESULT_CAP_PHRASES) && !lower.contains("rate limit") {
        return RpcErrorKind::TooManyResults {
            message: message.to_string(),
            suggested,
        };
    }
    if has(RANGE_CAP_PHRASES) && names_limit && !lower.contains("rate limit") {
        return RpcErrorKind::RangeTooLarge {
            message: message.to_string(),
            max_range: max_range(&lower),
            suggested,
        };
    }
    let text = || format!("{code}: {message}");
    if code == 3 || lower.contains("execution reverted") || lower.contains("revert") {
        return RpcErrorKind::Reverted(text());
    }
    if has(REJECTED_PHRASES) {
        return RpcErrorKind::Rejected(text());
    }
    if code == -32601 || has(UNSUPPORTED_PHRASES) {
        return RpcErrorKind::Unsupported(text());
    }
    if has(TRANSIENT_PHRASES) || code == 429 || code == -32005 || code == -32603 {
        return RpcErrorKind::Transient(text());
    }
    RpcErrorKind::Unknown(text())
}

/// The block range a provider suggests: `[0x…, 0x…]` (Alchemy, Infura, zkSync) or
/// `retry with the range 5000-6000` (reth).
fn suggested_range(message: &str) -> Option<(u64, u64)> {
    let pair = |text: &str, separator: char| {
        let mut parts = text.split(separator).map(|p| parse_number(p.trim()));
        let (from, to) = (parts.next()??, parts.next()??);
        (from <= to).then_some((from, to))
    };
    if let Some(open) = message.find('[') {
        let close = open + message[open..].find(']')?;
        return pair(&message[open + 1..close], ',');
    }
    let lower = message.to_ascii_lowercase();
    let at = lower.find("the range ")? + "the range ".len();
    let span: String = lower[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    pair(&span, '-')
}

/// The widest range a provider accepts: the last number of the message once a suggested
/// `[from, to]` is cut out ("maximum is set to 2048" after "from 0 to 5000", "(12000 > 10000)",
/// "up to a 5 block range", "10,000", "10k").
fn max_range(lower: &str) -> Option<u64> {
    let without_hint = match (lower.find('['), lower.find(']')) {
        (Some(open), Some(close)) if open < close => {
            format!("{} {}", &lower[..open], &lower[close + 1..])
        }
        _ => lower.to_string(),
    };
    let mut last = None;
    for token in without_hint.split(|c: char| !(c.is_ascii_alphanumeric() || c == ',')) {
        let token = token.trim_matches(',');
        let value = if let Some(k) = token.strip_suffix('k') {
            k.replace(',', "").parse::<u64>().ok().map(|v| v * 1_000)
        } else {
            token.replace(',', "").parse::<u64>().ok()
        };
        if let Some(value) = value.filter(|v| *v > 0) {
            last = Some(value);
        }
    }
    last
}

fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
