//! Why a document fetch failed, whether trying again may help, and how a transport error reads
//! as one (a DNS answer the address rules refused is [`FetchError::Blocked`]).

use crate::documents::dns;
use url::Url;

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The host is, or resolves to, an address documents may not come from.
    #[error("{url}: refused to fetch from {address}: {reason}")]
    Blocked {
        /// The URL.
        url: String,
        /// The address refused.
        address: String,
        /// Why.
        reason: &'static str,
    },
    /// A scheme other than https (or http when allowed).
    #[error("{url}: scheme not allowed")]
    Scheme {
        /// The URL.
        url: String,
    },
    /// The body is larger than the cap.
    #[error("{url}: body larger than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// The fetch took longer than the total timeout.
    #[error("{url}: no complete answer within {seconds} s")]
    Timeout {
        /// The URL.
        url: String,
        /// The timeout.
        seconds: u64,
    },
    /// Everything tried for one document took longer than the deadline.
    #[error(
        "{url}: no complete answer within the {seconds} s deadline for one document (documents.fetch_deadline_secs)"
    )]
    Deadline {
        /// The URL being fetched when the deadline passed.
        url: String,
        /// The deadline.
        seconds: u64,
    },
    /// More redirects than allowed, or a redirect loop.
    #[error("{url}: {reason}")]
    Redirects {
        /// The URL where it stopped.
        url: String,
        /// Too many, a loop, or a bad Location.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// Connecting, sending or reading failed.
    #[error("{url}: {reason}")]
    Network {
        /// The URL.
        url: String,
        /// What failed.
        reason: String,
    },
}

impl FetchError {
    /// Whether trying again later may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            FetchError::Timeout { .. }
            | FetchError::Deadline { .. }
            | FetchError::Network { .. } => true,
            FetchError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

/// A transport error, with the DNS refusal surfaced as [`FetchError::Blocked`].
pub(super) fn network(url: &Url, error: &reqwest::Error) -> FetchError {
    let mut reason = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        reason = format!("{reason}: {inner}");
        source = inner.source();
    }
    if let Some(refused) = dns::refusal_in(&reason) {
        return FetchError::Blocked {
            url: url.to_string(),
            address: url.host_str().unwrap_or_default().to_string(),
            reason: refused,
        };
    }
    if error.is_timeout() {
        return FetchError::Timeout {
            url: url.to_string(),
            seconds: 0,
        };
    }
    FetchError::Network {
        url: url.to_string(),
        reason,
    }
}
