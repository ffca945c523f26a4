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
    /// The endpoint that answered last, as [`crate::redact::url`] shows it.
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
    /// Known to pass (rate limit, timeout, dropped connection, 5xx): retried at once, with
    /// backoff, before the error is returned.
    #[error("transient: {0}")]
    Transient(String),
    /// Not understood. Returned to the caller without retrying here; the follower reports it and
    /// tries the step again with backoff, since stopping a chain on words nobody recognised would
    /// turn every new provider phrasing into an outage.
    #[error("unrecognised error: {0}")]
    Unknown(String),
    /// The node executed the call and it failed (`execution reverted`): an answer about the
    /// contract, the same however often it is asked.
    #[error("reverted: {0}")]
    Reverted(String),
    /// Can never succeed against this endpoint: the node lacks the method, the URL is not one,
    /// or the endpoint refuses the credentials in it.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

impl RpcErrorKind {
    /// The kind's name in metrics.
    pub fn label(&self) -> &'static str {
        match self {
            RpcErrorKind::RangeTooLarge { .. } => "range_too_large",
            RpcErrorKind::TooManyResults { .. } => "too_many_results",
            RpcErrorKind::Transient(_) => "transient",
            RpcErrorKind::Unknown(_) => "unknown",
            RpcErrorKind::Reverted(_) => "reverted",
            RpcErrorKind::Unsupported(_) => "unsupported",
        }
    }

    /// The same kind with every URL in its words shown through [`redact::text`]: a transport
    /// error quotes the URL it failed on, API key included.
    pub fn redacted(self) -> Self {
        use crate::redact::text;
        match self {
            RpcErrorKind::RangeTooLarge {
                message,
                max_range,
                suggested,
            } => RpcErrorKind::RangeTooLarge {
                message: text(&message),
                max_range,
                suggested,
            },
            RpcErrorKind::TooManyResults { message, suggested } => RpcErrorKind::TooManyResults {
                message: text(&message),
                suggested,
            },
            RpcErrorKind::Transient(message) => RpcErrorKind::Transient(text(&message)),
            RpcErrorKind::Unknown(message) => RpcErrorKind::Unknown(text(&message)),
            RpcErrorKind::Reverted(message) => RpcErrorKind::Reverted(text(&message)),
            RpcErrorKind::Unsupported(message) => RpcErrorKind::Unsupported(text(&message)),
        }
    }

    /// Whether the RPC layer retries the request itself: only failures known to pass.
    pub fn is_retryable(&self) -> bool {
        matches!(self, RpcErrorKind::Transient(_))
    }

    /// Whether asking again (now or later) cannot change the answer: a revert, or a request the
    /// endpoint can never serve.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            RpcErrorKind::Reverted(_) | RpcErrorKind::Unsupported(_)
        )
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
            // Some providers put the range complaint in the body of a 4xx or 5xx.
            match classify_message(0, &http.body) {
                limit @ (RpcErrorKind::RangeTooLarge { .. }
                | RpcErrorKind::TooManyResults { .. }) => limit,
                _ if http.status == 429 || http.status == 408 || http.status >= 500 => {
                    RpcErrorKind::Transient(text)
                }
                _ if http.status == 401 || http.status == 404 || http.status == 405 => {
                    RpcErrorKind::Unsupported(text)
                }
                _ => RpcErrorKind::Unknown(text),
            }
        }
        AlloyRpcError::Transport(other) => RpcErrorKind::Transient(other.to_string()),
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

/// Words in which providers refuse an `eth_getLogs` for the number or size of its results, and
/// who says them. Matched in lower case; the full list with examples is in the tests.
const RESULT_CAP_PHRASES: &[&str] = &[
    "log response size exceeded",            // Alchemy
    "query returned more than",              // Infura, geth, Polygon zkEVM
    "query exceeds max results",             // reth, LlamaRPC, Ankr
    "logs matched by query exceeds limit",   // Arbitrum Nitro
    "backend response too large",            // Optimism's public node
    "response size should not greater than", // 1RPC
    "response size exceeded",                // Chainstack, GetBlock
    "response is too big",                   // Nethermind
    "exceed max logs",                       // geth (log query limit)
    "too many logs",                         // Erigon
    "too many results",                      // generic
    "result set too large",                  // generic
    "results exceed",                        // BlockPI
];

/// Words in which providers refuse an `eth_getLogs` for the width of its block range.
const RANGE_CAP_PHRASES: &[&str] = &[
    "block range too large",                      // Base public node, Erigon
    "block range is too large",                   // Optimism public node, dRPC
    "range is too large",                         // Merkle
    "block range is too wide",                    // Ankr, Moonbeam
    "exceed maximum block range",                 // geth --rpc.rangelimit, PublicNode
    "maximum block range",                        // PublicNode
    "exceeds max block range",                    // reth, Hyperliquid, LlamaRPC
    "block range limit exceeded",                 // Chainstack
    "requested too many blocks",                  // Avalanche C-Chain
    "max range:",                                 // Cloudflare
    "maximum allowed number of requested blocks", // thirdweb
    "block range",                                // Alchemy "up to a 500 block range", Aurora
    "blocks range",                               // QuickNode
    "limited to a",                               // QuickNode, Blast, 1RPC
    "exceeds the range allowed",                  // Blast (paid)
    "please limit the query to at most",          // Coinbase Developer Platform
    "block range greater than",                   // Swell, op-geth forks
    "block range exceeds",                        // Somnia
    "query must be smaller than size",            // Harmony
    "blocks distance",                            // Ankr (TAC)
    "range exceeds maximum",                      // Besu
    "range limit",                                // Besu, Tenderly
    "range too large",                            // generic
    "range too wide",                             // generic
    "ranges over",                                // dRPC's free tier
];

/// Words that name a range or a result cap only together with one of these.
const LIMIT_WORDS: &[&str] = &[
    "too large",
    "too wide",
    "too many",
    "exceed",
    "max",
    "limit",
    "up to",
    "at most",
    "greater than",
    "smaller than",
    "allowed",
    "not supported",
];

/// Words of failures known to pass: rate limits, budgets, overloaded or syncing backends.
const TRANSIENT_PHRASES: &[&str] = &[
    "rate limit",
    "rate exceeded",
    "too many requests",
    "request limit",
    "capacity",
    "compute units",
    "throughput",
    "exceeded the quota",
    "daily request count",
    "timeout",
    "timed out",
    "try again",
    "temporarily",
    "overloaded",
    "busy",
    "header not found",
    "unknown block",
    "block not found",
    "not yet available",
    "no backend is currently healthy",
    "service unavailable",
    "bad gateway",
    "internal error",
    "connection reset",
];

/// Words of a method the node lacks.
const UNSUPPORTED_PHRASES: &[&str] = &[
    "method not found",
    "does not exist/is not available",
    "method not supported",
    "unsupported method",
    "is not supported",
    "not whitelisted",
    "method not allowed",
];

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
mod tests {
    use super::*;

    #[test]
    fn result_caps_with_and_without_a_suggested_range() {
        let alchemy = "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x1a2b, 0x1a3f]";
        assert_eq!(
            classify_message(-32602, alchemy),
            RpcErrorKind::TooManyResults {
                message: alchemy.into(),
                suggested: Some((0x1a2b, 0x1a3f))
            }
        );
        for (text, suggested) in [
            (
                "query returned more than 10000 results. Try with this block range [0x10, 0x20].",
                Some((16, 32)),
            ),
            (
                "query exceeds max results 20000, retry with the range 5000-6000",
                Some((5000, 6000)),
            ),
            ("logs matched by query exceeds limit of 10000", None),
            ("backend response too large", None),
            ("response size should not greater than 10000000 bytes", None),
        ] {
            match classify_message(-32005, text) {
                RpcErrorKind::TooManyResults { suggested: s, .. } => {
                    assert_eq!(s, suggested, "{text}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn range_caps_in_each_providers_words() {
        for (text, max, suggested) in [
            (
                "You can make eth_getLogs requests with up to a 5 block range. Based on your parameters, this block range should work: [0x0, 0x4]",
                Some(5),
                Some((0, 4)),
            ),
            ("block range too large", None, None),
            ("Block range is too large", None, None),
            ("block range is too wide", None, None),
            ("exceed maximum block range: 5000", Some(5000), None),
            ("query exceeds max block range 100000", Some(100_000), None),
            (
                "eth_getLogs is limited to a 10,000 range",
                Some(10_000),
                None,
            ),
            (
                "requested too many blocks from 0 to 5000, maximum is set to 2048",
                Some(2048),
                None,
            ),
            (
                "eth_getLogs range exceeds the range allowed for your plan (12000 > 10000)",
                Some(10_000),
                None,
            ),
            (
                "eth_getLogs range is too large, max is 10k blocks",
                Some(10_000),
                None,
            ),
            (
                "maximum [from, to] blocks distance: 10000",
                Some(10_000),
                None,
            ),
            ("Requested range exceeds maximum range limit", None, None),
            (
                "ranges over 10000 blocks are not supported on freetier",
                Some(10_000),
                None,
            ),
        ] {
            match classify_message(-32000, text) {
                RpcErrorKind::RangeTooLarge {
                    max_range,
                    suggested: s,
                    ..
                } => {
                    assert_eq!(max_range, max, "{text}");
                    assert_eq!(s, suggested, "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn rate_limits_pass_reverts_and_missing_methods_are_final_the_rest_unknown() {
        for text in [
            "Too Many Requests",
            "request timed out",
            "rate limit exceeded",
            "Your app has exceeded its compute units per second capacity",
            "daily request count exceeded, request rate limited",
            "no backend is currently healthy to serve traffic",
        ] {
            assert!(classify_message(-32000, text).is_retryable(), "{text}");
        }
        let missing =
            classify_message(-32601, "the method eth_foo does not exist/is not available");
        assert!(matches!(missing, RpcErrorKind::Unsupported(_)));
        let reverted = classify_message(3, "execution reverted");
        assert!(matches!(reverted, RpcErrorKind::Reverted(_)));
        assert!(missing.is_final() && reverted.is_final());
        for text in [
            "invalid argument 0: hex string without 0x prefix",
            "invalid block range params",
            "something nobody has seen",
        ] {
            let kind = classify_message(-32602, text);
            assert!(matches!(kind, RpcErrorKind::Unknown(_)), "{text}: {kind:?}");
            assert!(!kind.is_retryable() && !kind.is_final());
        }
    }

    /// The emulator speaks every wording collected from providers; each must shrink the range
    /// (to the size named or suggested, when the provider says one), and each rate-limit answer
    /// must be retried.
    #[test]
    fn every_emulated_provider_wording_is_understood() {
        use agentindex_emulator::Provider;
        use alloy::transports::HttpError;
        for provider in Provider::ALL {
            let range = provider.range_refusal(100, 199, 10);
            match classify_message(range.code, &range.message) {
                RpcErrorKind::RangeTooLarge {
                    max_range,
                    suggested,
                    ..
                } => {
                    assert!(
                        max_range.is_none_or(|m| m == 10),
                        "{provider:?}: {max_range:?}"
                    );
                    assert_eq!(suggested.unwrap_or((100, 109)), (100, 109), "{provider:?}");
                }
                RpcErrorKind::TooManyResults { suggested, .. } => {
                    assert_eq!(suggested.unwrap_or((100, 109)), (100, 109), "{provider:?}");
                }
                other => panic!("{provider:?} range refusal read as {other:?}"),
            }
            let results = provider.result_refusal(10_000, (100, 150));
            match classify_message(results.code, &results.message) {
                RpcErrorKind::TooManyResults { suggested, .. } => {
                    assert_eq!(suggested.unwrap_or((100, 150)), (100, 150), "{provider:?}");
                }
                other => panic!("{provider:?} result refusal read as {other:?}"),
            }
            let limited = provider.rate_limited(25);
            let body = serde_json::json!({"jsonrpc": "2.0", "id": 1,
                "error": {"code": limited.code, "message": limited.message}});
            let error = AlloyRpcError::Transport(TransportErrorKind::HttpError(HttpError {
                status: limited.status,
                body: body.to_string(),
            }));
            assert!(classify(&error).is_retryable(), "{provider:?}: {limited:?}");
            assert!(
                classify_message(limited.code, &limited.message).is_retryable(),
                "{provider:?} rate limit in a 200 answer: {limited:?}"
            );
        }
    }
}
