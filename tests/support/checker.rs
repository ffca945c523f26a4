//! A document checker for tests: loopback and plain http open (the test servers live there),
//! otherwise the default fetch policy, trusting `keys` for card signatures.

use agentindex_indexer::documents::uri::ResolveOptions;
use agentindex_indexer::documents::{Checker, FetchPolicy, Fetcher};
use jsonwebtoken::jwk::Jwk;

/// A checker for documents served on loopback, trusting `keys`.
pub(crate) fn loopback_checker(keys: Vec<Jwk>) -> Checker {
    Checker::new(
        Fetcher::new(FetchPolicy {
            allow_private: true,
            allow_http: true,
            ..FetchPolicy::default()
        })
        .unwrap(),
        ResolveOptions {
            allow_http: true,
            ..ResolveOptions::default()
        },
        keys,
    )
}
