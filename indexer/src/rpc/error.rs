//! What an RPC failure means for the caller: retry it, split the range, or give up.
//!
//! Providers word their `eth_getLogs` limits differently; this module reads the common phrasings
//! (and the block range some of them suggest) into [`RpcErrorKind`].

use alloy::transports::{RpcError as AlloyRpcError, TransportErrorKind};

/// A failed request, after retries and failover.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{method} on {endpoint}: {kind}")]
pub struct RpcError {
    /// The JSON-RPC method.
    pub method: &'static str,
    /// The endpoint that answered last.
    pub endpoint: String,
    /// What went wrong.
    pub kind: RpcErrorKind,
}

/// Classified causes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcErrorKind {
    /// The block range was too wide; `max_range` when the provider named its limit.
    #[error("block range too large ({message})")]
    RangeTooLarge {
        /// The provider's words.
        message: String,
        /// A range size the provider accepts, when it said.
        max_range: Option<u64>,
        /// A concrete `[from, to]` the provider suggested.
        suggested: Option<(u64, u64)>,
    },
    /// The range holds more logs than the provider returns at once.
    #[error("too many results ({message})")]
    TooManyResults {
        /// The provider's words.
        message: String,
        /// A concrete `[from, to]` the provider suggested.
        suggested: Option<(u64, u64)>,
    },
    /// Worth trying again (rate limit, timeout, dropped connection, 5xx).
    #[error("transient: {0}")]
    Transient(String),
    /// Will fail again however often it is tried (bad request, unsupported method, revert).
    #[error("permanent: {0}")]
    Permanent(String),
}

impl RpcErrorKind {
    /// The kind's name in metrics.
    pub fn label(&self) -> &'static str {
        match self {
            RpcErrorKind::RangeTooLarge { .. } => "range_too_large",
            RpcErrorKind::TooManyResults { .. } => "too_many_results",
            RpcErrorKind::Transient(_) => "transient",
            RpcErrorKind::Permanent(_) => "permanent",
        }
    }

    /// Whether the same request may succeed later.
    pub fn is_retryable(&self) -> bool {
        matches!(self, RpcErrorKind::Transient(_))
    }

    /// Whether a narrower `eth_getLogs` range may succeed.
    pub fn wants_smaller_range(&self) -> bool {
        matches!(
            self,
            RpcErrorKind::RangeTooLarge { .. } | RpcErrorKind::TooManyResults { .. }
        )
    }
}

/// Classifies an alloy transport or JSON-RPC error.
pub(crate) fn classify(error: &AlloyRpcError<TransportErrorKind>) -> RpcErrorKind {
    match error {
        AlloyRpcError::ErrorResp(payload) => classify_message(payload.code, &payload.message),
        AlloyRpcError::Transport(TransportErrorKind::HttpError(http)) => {
            let text = format!("HTTP {}: {}", http.status, truncate(&http.body));
            if http.status == 429 || http.status == 408 || http.status >= 500 {
                // Some providers put the range complaint in the body of a 4xx/5xx.
                match classify_message(0, &http.body) {
                    limit @ (RpcErrorKind::RangeTooLarge { .. }
                    | RpcErrorKind::TooManyResults { .. }) => limit,
                    _ => RpcErrorKind::Transient(text),
                }
            } else {
                match classify_message(0, &http.body) {
                    limit @ (RpcErrorKind::RangeTooLarge { .. }
                    | RpcErrorKind::TooManyResults { .. }) => limit,
                    _ => RpcErrorKind::Permanent(text),
                }
            }
        }
        AlloyRpcError::Transport(other) => RpcErrorKind::Transient(other.to_string()),
        AlloyRpcError::NullResp => RpcErrorKind::Transient("null response".into()),
        AlloyRpcError::DeserError { err, text } => {
            // A proxy's HTML error page or a cut-off body: try again.
            RpcErrorKind::Transient(format!("unreadable response ({err}): {}", truncate(text)))
        }
        other => RpcErrorKind::Permanent(other.to_string()),
    }
}

/// Classifies a JSON-RPC error by its code and wording.
pub(crate) fn classify_message(code: i64, message: &str) -> RpcErrorKind {
    let lower = message.to_ascii_lowercase();
    let suggested = suggested_range(message);
    let too_many = [
        "more than",
        "response size",
        "log response",
        "too many results",
        "too many logs",
        "results",
        "size exceeded",
    ]
    .iter()
    .any(|p| lower.contains(p));
    let range = [
        "range",
        "too wide",
        "distance",
        "block limit",
        "blocks limit",
    ]
    .iter()
    .any(|p| lower.contains(p));
    if too_many && !lower.contains("rate") {
        return RpcErrorKind::TooManyResults {
            message: message.to_string(),
            suggested,
        };
    }
    if range
        && (lower.contains("large")
            || lower.contains("exceed")
            || lower.contains("max")
            || lower.contains("limit")
            || lower.contains("wide")
            || lower.contains("too"))
    {
        return RpcErrorKind::RangeTooLarge {
            message: message.to_string(),
            max_range: max_range(&lower),
            suggested,
        };
    }
    let transient = [
        "rate limit",
        "too many requests",
        "timeout",
        "timed out",
        "try again",
        "temporarily",
        "overloaded",
        "capacity",
        "header not found",
        "unknown block",
        "busy",
    ]
    .iter()
    .any(|p| lower.contains(p));
    if transient || code == 429 || code == -32005 || code == -32603 && lower.contains("internal") {
        return RpcErrorKind::Transient(format!("{code}: {message}"));
    }
    RpcErrorKind::Permanent(format!("{code}: {message}"))
}

/// A `[0x…, 0x…]` (or decimal) pair in the message, as Alchemy and Infura give.
fn suggested_range(message: &str) -> Option<(u64, u64)> {
    let open = message.find('[')?;
    let close = open + message[open..].find(']')?;
    let mut parts = message[open + 1..close]
        .split(',')
        .map(|p| parse_number(p.trim()));
    let (from, to) = (parts.next()??, parts.next()??);
    (from <= to).then_some((from, to))
}

/// The largest number in a message about a maximum range ("max is 1000 blocks", "10,000 range",
/// "1k blocks").
fn max_range(lower: &str) -> Option<u64> {
    let mut best: Option<u64> = None;
    for token in lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == ',')) {
        let token = token.trim_matches(',');
        let value = if let Some(k) = token.strip_suffix('k') {
            k.replace(',', "").parse::<u64>().ok().map(|v| v * 1_000)
        } else {
            token.replace(',', "").parse::<u64>().ok()
        };
        if let Some(v) = value.filter(|v| *v > 0) {
            best = Some(best.map_or(v, |b| b.max(v)));
        }
    }
    best
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
mod tests {
    use super::*;

    #[test]
    fn provider_phrasings_of_result_limits() {
        let alchemy = "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x1a2b, 0x1a3f]";
        assert_eq!(
            classify_message(-32602, alchemy),
            RpcErrorKind::TooManyResults {
                message: alchemy.into(),
                suggested: Some((0x1a2b, 0x1a3f))
            }
        );
        let infura =
            "query returned more than 10000 results. Try with this block range [0x10, 0x20].";
        assert!(matches!(
            classify_message(-32005, infura),
            RpcErrorKind::TooManyResults {
                suggested: Some((16, 32)),
                ..
            }
        ));
    }

    #[test]
    fn provider_phrasings_of_range_limits() {
        for (text, max) in [
            ("block range too large", None),
            ("exceed maximum block range: 5000", Some(5000)),
            ("query exceeds max block range 1000", Some(1000)),
            ("range is too large, max is 1k blocks", Some(1000)),
            ("eth_getLogs is limited to a 10,000 range", Some(10_000)),
        ] {
            match classify_message(-32000, text) {
                RpcErrorKind::RangeTooLarge { max_range, .. } => {
                    assert_eq!(max_range, max, "{text}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn rate_limits_and_timeouts_are_transient_and_bad_requests_permanent() {
        assert!(classify_message(429, "Too Many Requests").is_retryable());
        assert!(classify_message(-32000, "request timed out").is_retryable());
        assert!(classify_message(-32005, "rate limit exceeded").is_retryable());
        assert!(!classify_message(-32601, "the method eth_foo does not exist").is_retryable());
        assert!(
            !classify_message(-32602, "invalid argument 0: hex string without 0x prefix")
                .is_retryable()
        );
        assert!(!classify_message(3, "execution reverted").is_retryable());
    }
}
