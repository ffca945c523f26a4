//! What an RPC failure means for the caller: retry it, split the range, or give up.
//!
//! Providers word their `eth_getLogs` limits differently; `classify.rs` reads the common phrasings
//! (and the block range some of them suggest) into [`RpcErrorKind`].

use crate::health::Problem;

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
    /// Known to pass (rate limit, dropped connection, 5xx): retried at once, with backoff,
    /// before the error is returned.
    #[error("transient: {0}")]
    Transient(String),
    /// Nothing accepted the connection (refused, no such host, TLS): retried like a transient
    /// error, and reported as the endpoint being unreachable.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// Connected, but no answer within the request timeout: retried like a transient error.
    #[error("no answer: {0}")]
    Silent(String),
    /// The endpoint refused the credentials (HTTP 401/403, "invalid API key"): the next
    /// endpoint is tried, this one is not asked again for this request. The follower keeps
    /// trying with backoff, since a key can be mended at the provider without a restart.
    #[error("credentials rejected: {0}")]
    Rejected(String),
    /// Not understood. Returned to the caller without retrying here; the follower reports it and
    /// tries the step again with backoff, since stopping a chain on words nobody recognised would
    /// turn every new provider phrasing into an outage.
    #[error("unrecognised error: {0}")]
    Unknown(String),
    /// The node executed the call and it failed (`execution reverted`): an answer about the
    /// contract, the same however often it is asked.
    #[error("reverted: {0}")]
    Reverted(String),
    /// Can never succeed against this endpoint: the node lacks the method, or the URL is not
    /// one.
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
            RpcErrorKind::Unreachable(_) => "unreachable",
            RpcErrorKind::Silent(_) => "timeout",
            RpcErrorKind::Rejected(_) => "rejected",
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
            RpcErrorKind::Unreachable(message) => RpcErrorKind::Unreachable(text(&message)),
            RpcErrorKind::Silent(message) => RpcErrorKind::Silent(text(&message)),
            RpcErrorKind::Rejected(message) => RpcErrorKind::Rejected(text(&message)),
            RpcErrorKind::Unknown(message) => RpcErrorKind::Unknown(text(&message)),
            RpcErrorKind::Reverted(message) => RpcErrorKind::Reverted(text(&message)),
            RpcErrorKind::Unsupported(message) => RpcErrorKind::Unsupported(text(&message)),
        }
    }

    /// Whether the RPC layer retries the request itself: only failures known to pass.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            RpcErrorKind::Transient(_) | RpcErrorKind::Unreachable(_) | RpcErrorKind::Silent(_)
        )
    }

    /// What the failure says of the endpoint itself; `None` when the endpoint answered (a
    /// revert or a range refusal is an answer).
    pub fn problem(&self) -> Option<Problem> {
        match self {
            RpcErrorKind::Unreachable(_) => Some(Problem::Unreachable),
            RpcErrorKind::Silent(_) => Some(Problem::Silent),
            RpcErrorKind::Rejected(_) => Some(Problem::Rejected),
            RpcErrorKind::Transient(_) | RpcErrorKind::Unknown(_) => Some(Problem::Failing),
            RpcErrorKind::Unsupported(_) => Some(Problem::Unsupported),
            RpcErrorKind::RangeTooLarge { .. }
            | RpcErrorKind::TooManyResults { .. }
            | RpcErrorKind::Reverted(_) => None,
        }
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
